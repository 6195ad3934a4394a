import Catalog
import Foundation
import GeoCore
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import Records
import SearchEngine
import TestSupport
import Testing

/// Type-ahead through the router: `/v1/suggest` (POIs by pinyin, houses and streets as typed, places in one list),
/// AMap's `/v3/assistant/inputtips` in AMap's shape, and Photon completing a house number begun. The real AMap
/// clients run against a live server in scripts/compat/run.
@Suite struct SuggestTests {
    static let bit = (lat: 39.9631, lon: 116.3104)

    /// POIs near BIT in Haidian and a Helsinki street, a Haidian one, and streets whose names hold numbers.
    static let engine: SearchEngine = {
        let pois = [
            POIRecord(id: "kfc", name: "肯德基(中关村店)", category: "food.fast_food", address: "中关村大街19号", lat: 39.9640, lon: 116.3110),
            POIRecord(id: "kfc2", name: "肯德基(西单店)", category: "food.fast_food", lat: 39.9100, lon: 116.3740),
            POIRecord(id: "bit", name: "北京理工大学", category: "education.university", address: "中关村南大街5号", lat: 39.9631, lon: 116.3104),
            POIRecord(id: "lvcha", name: "绿茶餐厅", category: "food.restaurant", lat: 39.9400, lon: 116.3500),
            POIRecord(id: "stop", name: "魏公村", category: "transport.bus_stop", lat: 39.9580, lon: 116.3200),
            POIRecord(id: "hki", name: "Kahvila Kuu", category: "food.cafe", lat: 60.1699, lon: 24.9384),
        ]
        var houses: [AddressPoint] = []
        var lines: [StreetLine] = []
        func street(_ name: String, _ numbers: [String], lat: Double, lon: Double, city: String) {
            for (i, number) in numbers.enumerated() {
                houses.append(
                    AddressPoint(
                        id: "h-\(name)-\(number)",
                        street: name,
                        housenumber: number,
                        city: city,
                        latitude: lat,
                        longitude: lon + Double(i) * 0.0002
                    )
                )
            }
            lines.append(StreetLine(id: "l-\(name)", names: [name], points: [Coordinate2(lat, lon), Coordinate2(lat, lon + 0.005)]))
        }
        street("Mannerheimintie", ["1", "1A", "2", "10", "11", "12 B", "100"], lat: 60.170, lon: 24.938, city: "Helsinki")
        street("中关村南大街", ["5号", "7号", "50号", "9号"], lat: 39.960, lon: 116.320, city: "北京")
        street("Calle 13", ["5", "7"], lat: 40.41, lon: -3.70, city: "Madrid")
        street("5th Avenue", ["3", "30"], lat: 40.75, lon: -73.98, city: "New York")
        street("Route 66", ["2"], lat: 35.0, lon: -110.0, city: "Flagstaff")
        return SearchEngine(pois: pois, addresses: AddressData(addresses: houses, streets: lines), taxonomy: taxonomy)
    }()

    func suggestApp() -> some ApplicationProtocol {
        buildApplication(configuration: ServerConfiguration(), engine: Self.engine, gazetteer: BundledGazetteer.shared, metrics: testRegistry)
    }

    /// "a=1&b=x y" with each value percent-encoded.
    static func encoded(_ query: String) -> String {
        query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = parts.count > 1 ? String(parts[1]).addingPercentEncoding(withAllowedCharacters: .alphanumerics)! : ""
            return parts[0] + "=" + value
        }.joined(separator: "&")
    }

    func results(_ client: some TestClientProtocol, _ query: String) async throws -> [[String: Any]] {
        let response = try await client.execute(uri: "/v1/suggest?\(Self.encoded(query))", method: .get)
        #expect(response.status == .ok, "\(query): \(String(buffer: response.body))")
        return try json(response)["results"] as? [[String: Any]] ?? []
    }

    @Test(arguments: [
        ("q=kdj&lat=39.9631&lon=116.3104", "kfc"), ("q=kendeji&lat=39.9631&lon=116.3104", "kfc"), ("q=kend", "kfc"), ("q=肯de", "kfc"),
        ("q=北京lg", "bit"), ("q=bjlg", "bit"), ("q=lvcha", "lvcha"), ("q=lucha", "lvcha"), ("q=wgc", "stop"), ("q=kahv", "hki"),
    ])
    func poisAreSuggestedAsTyped(_ query: String, _ id: String) async throws {
        try await suggestApp().test(.router) { client in
            // The first POI suggested (a place may lead: "wgc" is also Warangal's code in GeoNames).
            let found = try await results(client, query).filter { $0["kind"] as? String == "poi" }
            let expected = query.contains("lat=") ? Array(found.prefix(1)) : Array(found.prefix(2))
            #expect(expected.contains { $0["id"] as? String == id }, "\(query): \(found.map { $0["id"] ?? "" })")
        }
    }

    @Test func nearerFirstWithDistances() async throws {
        try await suggestApp().test(.router) { client in
            let found = try await results(client, "q=kdj&lat=39.9631&lon=116.3104")
            #expect(found.prefix(2).map { $0["id"] as? String } == ["kfc", "kfc2"])
            let distances = found.prefix(2).compactMap { $0["distance"] as? Double }
            #expect(distances.count == 2 && distances[0] < distances[1])
        }
    }

    @Test func housesAreCompletedAsTheNumberIsTyped() async throws {
        try await suggestApp().test(.router) { client in
            let houses = try await results(client, "q=Mannerheimintie 1&sources=address")
            #expect(houses.compactMap { ($0["address"] as? [String: Any])?["housenumber"] as? String } == ["1", "1A", "10", "11", "12 B", "100"])
            #expect(houses.allSatisfy { $0["kind"] as? String == "address" && $0["type"] as? String == "house" })
            let chinese = try await results(client, "q=中关村南大街5&sources=address")
            #expect(chinese.compactMap { ($0["address"] as? [String: Any])?["housenumber"] as? String } == ["5号", "50号"])
            let street = try await results(client, "q=Mannerheimint")
            #expect(street.first?["type"] as? String == "street" && street.first?["name"] as? String == "Mannerheimintie")
        }
    }

    @Test(arguments: [
        ("Calle 13 5", "5", "Calle 13"), ("5th Avenue 3", "3", "5th Avenue"), ("Route 66 2", "2", "Route 66"),
        ("中关村南大街 7", "7号", "中关村南大街"), ("中关村南大街7号", "7号", "中关村南大街"),
    ])
    func numberedStreetsAndSpacedNumbersGeocode(_ text: String, _ number: String, _ street: String) async throws {
        try await suggestApp().test(.router) { client in
            let encoded = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let found = try json(try await client.execute(uri: "/v1/geocode?q=\(encoded)&limit=1", method: .get))["results"] as? [[String: Any]]
            let address = found?.first?["address"] as? [String: Any]
            #expect(address?["street"] as? String == street && address?["housenumber"] as? String == number, "\(text): \(found ?? [])")
        }
    }

    @Test func aNumberedStreetWithoutANumberIsTheStreet() async throws {
        try await suggestApp().test(.router) { client in
            for name in ["Calle 13", "Route 66", "5th Avenue"] {
                let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let found = try json(try await client.execute(uri: "/v1/geocode?q=\(encoded)&limit=1", method: .get))["results"] as? [[String: Any]]
                #expect(found?.first?["type"] as? String == "street" && found?.first?["name"] as? String == name, "\(name): \(found ?? [])")
            }
        }
    }

    @Test func photonCompletesAHouseNumberBegun() async throws {
        try await suggestApp().test(.router) { client in
            let answer = try json(try await client.execute(uri: "/photon/api?q=Mannerheimintie%201&limit=5", method: .get))
            let numbers = (answer["features"] as? [[String: Any]])?.compactMap { ($0["properties"] as? [String: Any])?["housenumber"] as? String }
            #expect(numbers == ["1", "1A", "10", "11", "12 B"], "\(answer)")
        }
    }

    @Test(arguments: [
        ("/v1/suggest", "q"), ("/v1/suggest?q=%20", "q"), ("/v1/suggest?q=a&limit=0", "limit"), ("/v1/suggest?q=a&sources=poi,shops", "sources"),
        ("/v1/suggest?q=a&lat=91&lon=0", "lat"), ("/v1/suggest?q=a&country=FIN", "country"), ("/v1/suggest?q=a&lang=fi", "lang"),
        ("/v1/suggest?q=a&bbox=1,2,3", "bbox"), ("/v1/suggest?q=a&category=Food!", "category"),
    ])
    func badParametersAreNamed(_ uri: String, _ parameter: String) async throws {
        try await suggestApp().test(.router) { client in
            let response = try await client.execute(uri: uri, method: .get)
            #expect(response.status == .badRequest)
            #expect(response.headers[.contentType] == "application/problem+json")
            #expect((try json(response)["detail"] as? String)?.hasPrefix(parameter) == true, "\(uri): \(String(buffer: response.body))")
        }
    }

    // MARK: AMap input tips

    static func gcj(_ lat: Double, _ lon: Double) -> String {
        let p = ChinaDatum.wgs84ToGCJ02(latitude: lat, longitude: lon)
        return String(format: "%.6f,%.6f", p.longitude, p.latitude)
    }

    func tips(_ client: some TestClientProtocol, _ query: String) async throws -> [String: Any] {
        try json(try await client.execute(uri: "/v3/assistant/inputtips?key=k&\(Self.encoded(query))", method: .get))
    }

    @Test func inputTipsAnswerInAMapsShape() async throws {
        try await suggestApp().test(.router) { client in
            let answer = try await tips(client, "keywords=kdj&location=\(Self.gcj(Self.bit.lat, Self.bit.lon))")
            #expect(answer["status"] as? String == "1" && answer["infocode"] as? String == "10000")
            let list = try #require(answer["tips"] as? [[String: Any]])
            #expect(answer["count"] as? String == String(list.count))
            let first = try #require(list.first)
            #expect(first["id"] as? String == "kfc" && first["name"] as? String == "肯德基(中关村店)")
            #expect(first["location"] as? String == Self.gcj(39.9640, 116.3110), "GCJ-02 out")
            #expect(first["district"] as? String == "北京市海淀区" && first["adcode"] as? String == "110108")
            #expect(first["address"] as? String == "中关村大街19号" && first["typecode"] as? String == "050300")
            // A value a tip lacks is an empty array, as AMap writes it.
            let second = try #require(list.dropFirst().first { $0["id"] as? String == "kfc2" })
            #expect((second["address"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func inputTipsFilterByTypeDatatypeAndCity() async throws {
        try await suggestApp().test(.router) { client in
            let bus = try await tips(client, "keywords=weigongcun&datatype=bus")
            #expect((bus["tips"] as? [[String: Any]])?.map { $0["id"] as? String } == ["stop"])
            let typed = try await tips(client, "keywords=bj&type=141201")
            #expect((typed["tips"] as? [[String: Any]])?.allSatisfy { $0["typecode"] as? String == "141201" } == true)
            let limited = try await tips(client, "keywords=kahv&city=北京&citylimit=true")
            #expect((limited["tips"] as? [[String: Any]])?.isEmpty == true, "Helsinki is not within Beijing")
            let address = try await tips(client, "keywords=中关村南大街5")
            let houses = (address["tips"] as? [[String: Any]])?.filter { $0["typecode"] as? String == "190403" } ?? []
            #expect(houses.map { $0["name"] as? String } == ["中关村南大街5号", "中关村南大街50号"], "\(address)")
        }
    }

    @Test(arguments: [
        ("", "20001"), ("keywords=", "20001"), ("keywords=a&location=200,39", "20000"), ("keywords=a&datatype=trains", "20000"),
        ("keywords=a&type=999999", "20000"), ("keywords=a&city=Xqzzyvw", "20000"), ("keywords=a&output=xml", "20000"),
    ])
    func inputTipsRefuseWithAMapsInfocodes(_ query: String, _ infocode: String) async throws {
        try await suggestApp().test(.router) { client in
            let response = try await client.execute(uri: "/v3/assistant/inputtips?\(query)", method: .get)
            #expect(response.status == .ok)
            let answer = try json(response)
            #expect(answer["status"] as? String == "0" && answer["infocode"] as? String == infocode, "\(query): \(answer)")
        }
    }
}
