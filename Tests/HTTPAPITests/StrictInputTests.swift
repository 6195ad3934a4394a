import API
import Catalog
import Foundation
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import Records
import SearchEngine
import Testing

/// Input the contract refuses: a 4xx problem+json naming the parameter and the rule, never a 2xx on a guess.
@Suite struct StrictInputTests {
    func problem(_ response: TestResponse) throws -> String {
        #expect(response.headers[.contentType] == "application/problem+json")
        return try decode(Answers.Problem.self, response).detail ?? ""
    }

    @Test(arguments: [
        ("/v1/nearby?lat=0x10&lon=24.94", "lat must be"),
        ("/v1/nearby?lat=60.17&lon=inf", "lon must be"),
        ("/v1/nearby?lat=nan&lon=24", "lat must be"),
        ("/v1/nearby?lat=60.17&lon=24.94&limit=0x5", "limit must be"),
        ("/v1/nearby?lat=60.17&lon=24.94&radius=1e3000", "radius must be"),
        ("/v1/within?bbox=24,60,0x19,61", "east must be a decimal number"),
        ("/v1/within?polygon=24,60;25,60;0x19,61", "vertex 3 must be two numbers"),
        ("/v1/convert?from=wgs84&to=gcj02&lat=0x10&lon=1", "lat must be"),
        ("/v1/convert?from=EPSG:3857&to=wgs84&lat=1e300&lon=1e300", "outside the domain of EPSG:3857"),
    ])
    func nonDecimalNumbersAreRefused(_ uri: String, _ fragment: String) async throws {
        try await app().test(.router) { client in
            let response = try await client.execute(uri: uri, method: .get)
            #expect(response.status == .badRequest, "\(uri)")
            let detail = try problem(response)
            #expect(detail.contains(fragment), "\(uri): \(detail)")
        }
    }

    @Test(arguments: [
        (#"{"lat":1,"lon":1,}"#, "trailing comma"),
        (#"{"lat":1,"lon":1,"lat":2}"#, "appears twice"),
        (#"{"lat":true,"lon":1}"#, "lat must be a number, not true"),
        (#"{"lat":"1","lon":1}"#, "lat must be a number, not a string"),
        (#"{"lat":1,"lon":1} x"#, "unexpected text after the value"),
        (#"{"lat":01,"lon":1}"#, "leading zero"),
        (#"{"lat":NaN,"lon":1}"#, "unexpected character"),
        (#"{'lat':1,'lon':1}"#, "expected a string key"),
        (#"[1,2]"#, "must be a JSON object, not an array"),
        (#"{"lat":1e999,"lon":1}"#, "out of range"),
        (#"{"lat":1,"latitude":1,"lon":1}"#, "give only one of lat and latitude"),
        ("{\"lat\":1,\"lon\":1,\"firstName\":\"a\u{1}b\"}", "control character"),
        (#"{"lat":1,"lon":1,"firstName":"\ud800"}"#, "unpaired surrogate"),
        ("", "unexpected end of text"),
    ])
    func pinBodiesMustBeStrictJSON(_ body: String, _ fragment: String) async throws {
        try await app().test(.router) { client in
            let response = try await client.execute(uri: "/v1/pins", method: .post, body: ByteBuffer(string: body))
            #expect(response.status == .badRequest, "\(body)")
            let detail = try problem(response)
            #expect(detail.contains(fragment), "\(body): \(detail)")
            let list = try decode(Answers.Page.self, try await client.execute(uri: "/v1/pins", method: .get))
            #expect(list.total == 0, "nothing was created by \(body)")
        }
    }

    @Test func convertBatchRefusesBooleansAndWrongTypes() async throws {
        try await app().test(.router) { client in
            for (body, fragment) in [
                (#"{"from":"wgs84","to":"gcj02","points":[[true,1]]}"#, "points[0] must be [x, y] with two numbers"),
                (#"{"from":"wgs84","to":"gcj02","points":[[1,2,3]]}"#, "points[0] must be [x, y]"),
                (#"{"from":1,"to":"gcj02","points":[]}"#, "from must be a string"),
                (#"{"from":"wgs84","to":"gcj02"}"#, "points is required"),
                (#"{"from":"EPSG:3857","to":"wgs84","points":[[0,0],[1e300,1e300]]}"#, "points[1]"),
            ] {
                let response = try await client.execute(uri: "/v1/convert", method: .post, body: ByteBuffer(string: body))
                #expect(response.status == .badRequest, "\(body)")
                #expect(try problem(response).contains(fragment), "\(body)")
            }
        }
    }

    /// Path ids are percent-decoded: `café-1` is fetched, replaced and deleted as `caf%C3%A9-1`, and PUT stores the
    /// decoded id, not the encoded text.
    @Test func pathIdsArePercentDecoded() async throws {
        let engine = SearchEngine(
            pois: [POIRecord(id: "café-1", name: "Café Ursula", category: "food.cafe", lat: 60.16, lon: 24.95)],
            taxonomy: taxonomy
        )
        try await app(engine: engine).test(.router) { client in
            let fetched = try await client.execute(uri: "/v1/pois/caf%C3%A9-1", method: .get)
            #expect(fetched.status == .ok)
            #expect(try decode(Answers.Record.self, fetched).id == "café-1")
            let put = try await client.execute(
                uri: "/v1/pois/a%2Fb%20c",
                method: .put,
                body: ByteBuffer(string: #"{"name":"Slash","category":"food.cafe","lat":60,"lon":24}"#)
            )
            #expect(put.status == .created)
            #expect(try decode(Answers.Record.self, put).id == "a/b c")
            #expect(engine.poi(id: "a/b c") != nil && engine.poi(id: "a%2Fb%20c") == nil)
            #expect(try await client.execute(uri: "/v1/pois/caf%C3%A9-1", method: .delete).status == .noContent)
            #expect(engine.poi(id: "café-1") == nil)
            let bad = try await client.execute(uri: "/v1/pois/%FF%FE", method: .get)
            #expect(bad.status == .badRequest)
            #expect(try problem(bad).contains("percent-encoded"))
        }
    }

    /// A cursor continues only the query that gave it.
    @Test func cursorsAreBoundToTheirQuery() async throws {
        try await app().test(.router) { client in
            let first = try decode(Answers.Page.self, try await client.execute(uri: "/v1/nearby?lat=60.17&lon=24.94&limit=5", method: .get))
            let cursor = try #require(first.next)
            let same = try await client.execute(uri: "/v1/nearby?lat=60.17&lon=24.94&limit=9&cursor=\(cursor)", method: .get)
            #expect(same.status == .ok)
            for other in ["lat=60.5&lon=24.94", "lat=60.17&lon=24.94&radius=500", "lat=60.17&lon=24.94&q=cafe", "lat=60.17&lon=24.94&kind=all"] {
                let replayed = try await client.execute(uri: "/v1/nearby?\(other)&limit=5&cursor=\(cursor)", method: .get)
                #expect(replayed.status == .badRequest, "\(other)")
                #expect(try problem(replayed).contains("cursor belongs to another query"))
            }
            let box = try decode(Answers.Page.self, try await client.execute(uri: "/v1/within?bbox=24.9,60.1,25,60.3&limit=5", method: .get))
            let boxCursor = try #require(box.next)
            #expect(
                try await client.execute(uri: "/v1/within?bbox=24.9,60.1,25,60.4&limit=5&cursor=\(boxCursor)", method: .get).status == .badRequest
            )
            #expect(try await client.execute(uri: "/v1/within?bbox=24.9,60.1,25,60.3&limit=5&cursor=\(boxCursor)", method: .get).status == .ok)
            // A nearby cursor is not a within cursor.
            #expect(try await client.execute(uri: "/v1/within?bbox=24.9,60.1,25,60.3&cursor=\(cursor)", method: .get).status == .badRequest)
        }
    }

    /// RFC 9110: the auth scheme is case-insensitive.
    @Test func bearerSchemeIsCaseInsensitive() async throws {
        try await app(apiKey: "secret-key-1").test(.router) { client in
            let body = ByteBuffer(string: #"{"firstName":"A","lat":60,"lon":24}"#)
            for header in ["Bearer secret-key-1", "bearer secret-key-1", "BEARER  secret-key-1"] {
                let response = try await client.execute(uri: "/v1/pins", method: .post, headers: [.authorization: header], body: body)
                #expect(response.status == .created, "\(header)")
            }
            for header in ["Bearer secret-key-2", "Basic secret-key-1", "Bearersecret-key-1", "Bearer"] {
                let response = try await client.execute(uri: "/v1/pins", method: .post, headers: [.authorization: header], body: body)
                #expect(response.status == .unauthorized, "\(header)")
            }
        }
    }

    /// Loopback is judged by the resolved address, not by how the name starts.
    @Test func loopbackIsJudgedByTheResolvedAddress() {
        for host in ["127.0.0.1", "127.1.2.3", "::1", "localhost"] {
            #expect(ServerConfiguration(host: host).isLoopback, "\(host)")
            #expect(throws: Never.self, "\(host)") { try ServerConfiguration(host: host).validate() }
        }
        for host in ["127.evil.example", "0.0.0.0", "::", "10.0.0.1", "128.0.0.1"] {
            #expect(!ServerConfiguration(host: host).isLoopback, "\(host)")
            #expect(throws: ServerConfigurationError.self, "\(host)") { try ServerConfiguration(host: host).validate() }
        }
    }
}
