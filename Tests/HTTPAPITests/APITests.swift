import API
import Catalog
import Foundation
import GeoCore
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import Metrics
import Prometheus
import Records
import SearchEngine
import Testing

/// swift-metrics is bootstrapped once per process, so all tests share one registry.
let testRegistry: PrometheusCollectorRegistry = {
    let registry = PrometheusCollectorRegistry()
    MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    return registry
}()

let taxonomy = CategoryTaxonomy(labels: ["food.cafe": ["cafe", "coffee", "咖啡"], "transport.bus_stop": ["bus stop"]])

func makeEngine() -> SearchEngine {
    var pois: [POIRecord] = []
    for i in 0..<60 {
        let isCafe = i % 3 == 0
        let lat = 60.17 + Double(i) * 0.001
        let lon = 24.94 + Double(i % 7) * 0.001
        pois.append(
            POIRecord(
                id: "p\(i)",
                name: isCafe ? "Cafe \(i)" : "Stop \(i)",
                category: isCafe ? "food.cafe" : "transport.bus_stop",
                address: nil,
                city: "Helsinki",
                country: "FI",
                lat: lat,
                lon: lon,
                tags: [:]
            )
        )
    }
    pois.append(POIRecord(id: "cn1", name: "星巴克咖啡(中关村店)", category: "food.cafe", lat: 39.9836, lon: 116.3164))
    return SearchEngine(pois: pois, taxonomy: taxonomy)
}

func app(apiKey: String? = nil, engine: SearchEngine = makeEngine()) -> some ApplicationProtocol {
    buildApplication(configuration: ServerConfiguration(apiKey: apiKey), engine: engine, gazetteer: nil, metrics: testRegistry)
}

/// The answer's body decoded as the API's model of it (`Answers`) or a client's.
func decode<T: Decodable>(_ type: T.Type, _ response: TestResponse) throws -> T {
    try Answers.decode(type, from: response.body.readableBytesView)
}

/// The answer's body as untyped JSON, for the wire formats of other services (AMap, Nominatim, Photon) whose JSON
/// types the tests check member by member.
func json(_ response: TestResponse) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as! [String: Any]
}

@Suite struct APITests {
    @Test func nearbyAnswersNearestFirstWithDistancesAndPagesExactly() async throws {
        try await app().test(.router) { client in
            let long = try await client.execute(uri: "/v1/nearby?lat=60.17&lon=24.94&limit=30", method: .get)
            #expect(long.status == .ok)
            #expect(long.headers[.contentType] == "application/json")
            #expect(long.headers[.init("X-Request-Id")!] != nil)
            let all = try decode(Answers.Page.self, long).results
            #expect(all.count == 30)
            let distances = all.map { $0.distance! }
            #expect(distances == distances.sorted())
            var paged: [String] = []
            var cursor: String?
            repeat {
                let uri = "/v1/nearby?lat=60.17&lon=24.94&limit=7" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try decode(Answers.Page.self, try await client.execute(uri: uri, method: .get))
                paged += page.ids
                cursor = page.next
            } while cursor != nil && paged.count < 30
            #expect(Array(paged.prefix(30)) == all.map(\.id))
        }
    }

    /// docs/ARCHITECTURE.md, "The HTTP contract": repeated parameters take the last value; a number with spaces around it is that number.
    @Test func repeatedParametersTakeTheLastValueAndNumbersMayBePadded() async throws {
        try await app().test(.router) { client in
            let ids = { (uri: String) in try decode(Answers.Page.self, try await client.execute(uri: uri, method: .get)).ids }
            let plain = try await ids("/v1/nearby?lat=60.17&lon=24.94&limit=3")
            #expect(plain.count == 3)
            #expect(try await ids("/v1/nearby?lat=10&lat=60.17&lon=24.94&limit=50&limit=3") == plain)
            #expect(try await ids("/v1/nearby?lat=%2060.17&lon=24.94%09&limit=%203%20") == plain)
            let bad = try await client.execute(uri: "/v1/nearby?lat=60.17&lat=abc&lon=24.94", method: .get)
            #expect(bad.status == .badRequest)
        }
    }

    @Test func keywordCategoryRadiusKindAndGeoJSON() async throws {
        try await app().test(.router) { client in
            let cafes = try decode(Answers.Page.self, try await client.execute(uri: "/v1/nearby?lat=60.17&lon=24.94&q=coffee&limit=5", method: .get))
            #expect(!cafes.results.isEmpty && cafes.results.allSatisfy { $0.category == "food.cafe" })
            let radius = try decode(Answers.Page.self, try await client.execute(uri: "/v1/nearby?lat=60.17&lon=24.94&radius=300", method: .get))
            #expect(!radius.results.isEmpty && radius.results.allSatisfy { $0.distance! <= 300 })
            let geo = try await client.execute(uri: "/v1/within?bbox=24.9,60.1,25.0,60.3&format=geojson&limit=3", method: .get)
            #expect(geo.headers[.contentType] == "application/geo+json")
            let fc = try decode(Answers.FeatureCollection.self, geo)
            #expect(fc.type == "FeatureCollection" && fc.features.count == 3)
            #expect(fc.features.allSatisfy { $0.type == "Feature" && $0.geometry?.type == "Point" })
            let search = try decode(Answers.Page.self, try await client.execute(uri: "/v1/search?q=%E5%92%96%E5%95%A1", method: .get))
            #expect(search.total == 21)
            let clusters = try decode(Answers.Clusters.self, try await client.execute(uri: "/v1/clusters?bbox=24,60,26,61&precision=3", method: .get))
            #expect(clusters.results.first?.count == 60)
        }
    }

    @Test func coordsysGCJ02InAndOut() async throws {
        let gcj = ChinaDatum.wgs84ToGCJ02(latitude: 39.9836, longitude: 116.3164)
        try await app().test(.router) { client in
            let page = try decode(
                Answers.Page.self,
                try await client.execute(uri: "/v1/nearby?lat=\(gcj.latitude)&lon=\(gcj.longitude)&coordsys=gcj02&limit=1", method: .get)
            )
            let first = try #require(page.results.first)
            #expect(first.id == "cn1")
            #expect(abs(first.lat - gcj.latitude) < 1e-9 && abs(first.lon - gcj.longitude) < 1e-9)
            #expect(first.distance! < 0.01)
        }
    }

    /// Every bad input is a 400 problem+json whose detail names the parameter and the rule — never a 500.
    @Test(arguments: [
        ("/v1/nearby?lon=24", "lat is required"),
        ("/v1/nearby?lat=60", "lon is required"),
        ("/v1/nearby?lat=abc&lon=24", "lat must be a number"),
        ("/v1/nearby?lat=nan&lon=24", "lat must be a number"),
        ("/v1/nearby?lat=inf&lon=24", "lat must be a number"),
        ("/v1/nearby?lat=95&lon=24", "lat must be a number between -90 and 90"),
        ("/v1/nearby?lat=60&lon=190", "lon must be a number between -180 and 180"),
        ("/v1/nearby?lat=60&lon=24&radius=0", "radius must be a number of metres"),
        ("/v1/nearby?lat=60&lon=24&radius=-5", "radius must be a number of metres"),
        ("/v1/nearby?lat=60&lon=24&radius=2000000", "radius must be a number of metres"),
        ("/v1/nearby?lat=60&lon=24&limit=0", "limit must be an integer between 1 and 100"),
        ("/v1/nearby?lat=60&lon=24&limit=101", "limit must be an integer between 1 and 100"),
        ("/v1/nearby?lat=60&lon=24&limit=ten", "limit must be an integer between 1 and 100"),
        ("/v1/nearby?lat=60&lon=24&coordsys=mars", "coordsys must be wgs84, gcj02 or bd09"),
        ("/v1/nearby?lat=60&lon=24&format=xml", "format must be json or geojson"),
        ("/v1/nearby?lat=60&lon=24&kind=cats", "kind must be poi, pin or all"),
        ("/v1/nearby?lat=60&lon=24&cursor=garbage", "cursor is malformed"),
        ("/v1/nearby?lat=60&lon=24&category=Food%20Cafe", "category must be a category path"),
        ("/v1/search", "q is required"),
        ("/v1/search?q=%20", "q must not be empty"),
        ("/v1/search?q=cafe&offset=-1", "offset must be an integer between 0 and 10000"),
        ("/v1/within", "bbox or polygon is required"),
        ("/v1/within?bbox=1,2,3", "bbox must be four numbers west,south,east,north"),
        ("/v1/within?bbox=0,10,1,5", "bbox south must not be greater than north"),
        ("/v1/within?polygon=0,0;1,1", "polygon must have at least 3 vertices"),
        ("/v1/within?bbox=0,0,1,1&polygon=0,0;1,0;1,1", "bbox and polygon must not both be given"),
        ("/v1/clusters?bbox=0,0,1,1", "precision is required"),
        ("/v1/clusters?bbox=0,0,1,1&precision=13", "precision must be an integer between 1 and 12"),
        ("/v1/convert?from=mars&to=wgs84&lat=1&lon=2", "from must be wgs84, gcj02, bd09 or EPSG:<code> of a CRS known to PROJ (got \\\"mars\\\")"),
        ("/v1/convert?from=wgs84&to=EPSG:99999&lat=1&lon=2", "unknown coordinate system \\\"EPSG:99999\\\""),
        ("/v1/convert?from=wgs84&to=gcj02&lat=91&lon=2", "latitude (y) must be between -90 and 90"),
        ("/v1/pins?limit=0", "limit must be an integer between 1 and 100"),
        ("/v1/pins?order=name", "order must be one of"),
    ])
    func badInputIs400(_ uri: String, _ fragment: String) async throws {
        try await app().test(.router) { client in
            let response = try await client.execute(uri: uri, method: .get)
            #expect(response.status == .badRequest, "\(uri): \(response.status)")
            #expect(response.headers[.contentType] == "application/problem+json")
            let body = String(buffer: response.body)
            #expect(body.contains(fragment), "\(uri): \(body)")
            let problem = try decode(Answers.Problem.self, response)
            #expect(problem.status == 400 && problem.type == "about:blank" && problem.title == "Bad Request")
        }
    }

    @Test func notFoundMethodNotAllowedAndTooLarge() async throws {
        try await app().test(.router) { client in
            #expect(try await client.execute(uri: "/v1/pois/nope", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/v1/pins/nope", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/v1/elsewhere", method: .get).status == .notFound)
            let wrong = try await client.execute(uri: "/v1/nearby?lat=1&lon=2", method: .post)
            #expect(wrong.status == .methodNotAllowed)
            #expect(wrong.headers[.allow] == "GET, HEAD")
            let big = ByteBuffer(bytes: Array(repeating: UInt8(ascii: " "), count: (1 << 20) + 10))
            let tooLarge = try await client.execute(uri: "/v1/pins", method: .post, body: big)
            #expect(tooLarge.status == .contentTooLarge)
            let notJSON = try await client.execute(uri: "/v1/pins", method: .post, body: ByteBuffer(string: "hello"))
            #expect(notJSON.status == .badRequest)
            #expect(String(buffer: notJSON.body).contains("the body is not valid JSON: unexpected character at line 1, byte 1"))
        }
    }

    @Test func pinsCRUDWithAPIKey() async throws {
        try await app(apiKey: "secret-key-1").test(.router) { client in
            let body = ByteBuffer(
                string:
                    #"{"uniqueKey":"u1","firstName":"Ada","lastName":"Lovelace","mapString":"Mountain View, CA","mediaURL":"https://example.org","lat":37.386,"lon":-122.083}"#
            )
            #expect(try await client.execute(uri: "/v1/pins", method: .post, body: body).status == .unauthorized)
            #expect(
                try await client.execute(uri: "/v1/pins", method: .post, headers: [.authorization: "Bearer wrong-key-11"], body: body).status
                    == .unauthorized
            )
            let created = try await client.execute(uri: "/v1/pins", method: .post, headers: [.authorization: "Bearer secret-key-1"], body: body)
            #expect(created.status == .created)
            let pin = try decode(Answers.Record.self, created)
            let id = pin.id
            #expect(pin.kind == "pin" && pin.createdAt?.hasSuffix("Z") == true)
            let update = ByteBuffer(
                string:
                    #"{"uniqueKey":"u1","firstName":"Ada","lastName":"King","mapString":"London","mediaURL":"http://example.org/x","lat":51.5,"lon":-0.12}"#
            )
            let updated = try await client.execute(
                uri: "/v1/pins/\(id)",
                method: .put,
                headers: [.authorization: "Bearer secret-key-1"],
                body: update
            )
            #expect(updated.status == .ok)
            #expect(try decode(Answers.Record.self, updated).lastName == "King")
            let list = try decode(Answers.Page.self, try await client.execute(uri: "/v1/pins?uniqueKey=u1", method: .get))
            #expect(list.total == 1 && list.ids == [id])
            let badURL = ByteBuffer(string: #"{"firstName":"A","mediaURL":"ftp://x","lat":1,"lon":2}"#)
            let rejected = try await client.execute(uri: "/v1/pins", method: .post, headers: [.authorization: "Bearer secret-key-1"], body: badURL)
            #expect(rejected.status == .badRequest && String(buffer: rejected.body).contains("mediaURL must be an absolute http or https URL"))
            #expect(try await client.execute(uri: "/v1/pins/\(id)", method: .delete).status == .unauthorized)
            #expect(
                try await client.execute(uri: "/v1/pins/\(id)", method: .delete, headers: [.authorization: "Bearer secret-key-1"]).status
                    == .noContent
            )
            #expect(try await client.execute(uri: "/v1/pins/\(id)", method: .get).status == .notFound)
        }
    }

    @Test func poiPutAndDelete() async throws {
        try await app().test(.router) { client in
            let body = ByteBuffer(string: #"{"name":"Cafe New","category":"food.cafe","lat":60.2,"lon":24.9,"tags":{"cuisine":"coffee"}}"#)
            #expect(try await client.execute(uri: "/v1/pois/new1", method: .put, body: body).status == .created)
            #expect(try await client.execute(uri: "/v1/pois/new1", method: .put, body: body).status == .ok)
            let got = try decode(Answers.Record.self, try await client.execute(uri: "/v1/pois/new1", method: .get))
            #expect(got.name == "Cafe New" && got.tags == ["cuisine": "coffee"])
            let bad = ByteBuffer(string: #"{"name":"X","category":"food.cafe","lat":"north","lon":24.9}"#)
            let rejected = try await client.execute(uri: "/v1/pois/new2", method: .put, body: bad)
            #expect(rejected.status == .badRequest && String(buffer: rejected.body).contains("lat must be a number"))
            #expect(try await client.execute(uri: "/v1/pois/new1", method: .delete).status == .noContent)
            #expect(try await client.execute(uri: "/v1/pois/new1", method: .delete).status == .notFound)
        }
    }

    @Test func convertAndHealth() async throws {
        try await app().test(.router) { client in
            let one = try decode(
                Answers.Conversion.self,
                try await client.execute(uri: "/v1/convert?from=wgs84&to=gcj02&lat=39.915&lon=116.404", method: .get)
            )
            #expect(one.from == "wgs84" && one.to == "gcj02")
            let point = try #require(one.point)
            // Foundation's JSON parser on Linux may differ in the last bit; the text is exact (the CLI test checks it).
            #expect(abs(point[0] - 116.41024449916938) < 1e-12 && abs(point[1] - 39.91640428150164) < 1e-12)
            #expect(
                String(buffer: try await client.execute(uri: "/v1/convert?from=wgs84&to=gcj02&lat=39.915&lon=116.404", method: .get).body).contains(
                    "116.41024449916938"
                )
            )
            let batch = try await client.execute(
                uri: "/v1/convert",
                method: .post,
                body: ByteBuffer(string: #"{"from":"wgs84","to":"EPSG:3857","points":[[0,0],[24.9384,60.1699]]}"#)
            )
            #expect(batch.status == .ok)
            let converted = try decode(Answers.Conversion.self, batch)
            #expect(converted.to == "EPSG:3857" && converted.points?.count == 2 && converted.points?[0] == [0, 0])
            let health = try decode(Answers.Health.self, try await client.execute(uri: "/health", method: .get))
            #expect(health.status == "ok" && health.pois == 61 && health.pins == 0)
            // max_lag concerns replicas of a shared store; a server with its own database is never stale.
            #expect(try await client.execute(uri: "/health?max_lag=5", method: .get).status == .ok)
            for bad in ["0", "-1", "abc", "86401"] {
                let response = try await client.execute(uri: "/health?max_lag=\(bad)", method: .get)
                let detail = try decode(Answers.Problem.self, response).detail ?? ""
                #expect(response.status == .badRequest && detail.contains("max_lag"), "max_lag=\(bad): \(response.status) \(detail)")
            }
            #expect(try await client.execute(uri: "/v1/geocode?q=x", method: .get).status == .serviceUnavailable)
        }
    }

    @Test func refusesToListenPubliclyWithoutAKey() {
        #expect(throws: ServerConfigurationError.self) { try ServerConfiguration(host: "0.0.0.0").validate() }
        #expect(throws: Never.self) { try ServerConfiguration(host: "0.0.0.0", apiKey: "long-enough-key").validate() }
        #expect(throws: Never.self) { try ServerConfiguration(host: "127.0.0.1").validate() }
    }
}

@Suite struct OpenAPITests {
    /// The document and the router agree: every routed path and method is documented, every documented one routed.
    @Test func documentMatchesTheRoutes() async throws {
        try await app().test(.router) { client in
            let response = try await client.execute(uri: "/openapi.json", method: .get)
            #expect(response.status == .ok)
            let document = try json(response)
            #expect(document["openapi"] as? String == "3.1.0")
            let paths = document["paths"] as! [String: [String: Any]]
            var documented = Set<String>()
            for (path, operations) in paths {
                let pattern = path.split(separator: "/").map { $0.hasPrefix("{") ? "*" : String($0) }.joined(separator: "/")
                for method in operations.keys { documented.insert("\(method.uppercased()) \(pattern)") }
            }
            var routed = Set<String>()
            for route in RouteTable.routes where route.group == .api {
                let pattern = route.segments.map { $0.hasPrefix("{") ? "*" : String($0) }.joined(separator: "/")
                routed.insert("\(route.method.rawValue) \(pattern)")
            }
            #expect(documented == routed, "only documented: \(documented.subtracting(routed)); only routed: \(routed.subtracting(documented))")
            // And each documented GET without path parameters really answers (not 404/405).
            for (path, operations) in paths where operations["get"] != nil && !path.contains("{") {
                let status = try await client.execute(uri: path, method: .get).status
                #expect(status != .notFound && status != .methodNotAllowed, "\(path) answered \(status)")
            }
        }
    }
}

@Suite struct MetricsTests {
    @Test func prometheusTextCountsRequestsAndRecords() async throws {
        try await app().test(.router) { client in
            _ = try await client.execute(uri: "/v1/nearby?lat=60.17&lon=24.94", method: .get)
            _ = try await client.execute(uri: "/v1/nearby?lat=95&lon=24.94", method: .get)
            let response = try await client.execute(uri: "/metrics", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
            let text = String(buffer: response.body)
            #expect(text.contains("poi_records{kind=\"poi\"} 61"))
            #expect(text.contains("poi_http_requests_total{route=\"/v1/nearby\",method=\"GET\",status=\"200\"}"))
            #expect(text.contains("poi_http_requests_total{route=\"/v1/nearby\",method=\"GET\",status=\"400\"}"))
            #expect(text.contains("poi_http_request_duration_seconds_bucket{route=\"/v1/nearby\""))
        }
    }
}
