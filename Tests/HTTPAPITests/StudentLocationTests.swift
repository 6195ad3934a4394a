import API
import Foundation
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import SearchEngine
import Testing

/// The "On the Map" StudentLocation API, as the apps' strict Codable models read it, through both variants.
@Suite struct StudentLocationTests {
    /// What many On the Map clients declare: every field non-optional, with these types. One missing or mistyped
    /// field fails the whole list.
    struct StudentLocation: Codable, Equatable {
        let objectId: String
        let uniqueKey: String
        let firstName: String
        let lastName: String
        let mapString: String
        let mediaURL: String
        let latitude: Double
        let longitude: Double
        let createdAt: String
        let updatedAt: String
    }

    struct Results: Codable { let results: [StudentLocation] }
    struct Created: Codable {
        let createdAt: String
        let objectId: String
    }
    struct Updated: Codable { let updatedAt: String }
    struct ParseError: Codable {
        let code: Int
        let error: String
    }

    static let parseHeaders: HTTPFields = [
        HTTPFields.Element.Name("X-Parse-Application-Id")!: "QrX47CA9cyuGewLdsL7o5Eb8iug6Em8ye0dnAbIr",
        HTTPFields.Element.Name("X-Parse-REST-API-Key")!: "QuWThTdiRmTux3YaDseUSEpUKo7aBYM737yKd4gY",
        .contentType: "application/json",
    ]

    static let body =
        #"{"uniqueKey":"1234","firstName":"John","lastName":"Doe","mapString":"Mountain View, CA","mediaURL":"https://udacity.com","latitude":37.386052,"longitude":-122.083851}"#

    @Test(arguments: ["/parse/classes/StudentLocation", "/v1/StudentLocation"])
    func postListFindAndOverwrite(_ base: String) async throws {
        try await app().test(.router) { client in
            let posted = try await client.execute(uri: base, method: .post, headers: Self.parseHeaders, body: ByteBuffer(string: Self.body))
            #expect(posted.status == .created)
            let created = try decode(Created.self, posted)
            #expect(posted.headers[.location] == "\(base)/\(created.objectId)")
            #expect(created.createdAt.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil)
            // A second user, and a junk mediaURL as real apps send.
            let other =
                #"{"uniqueKey":"999","firstName":"Ann","lastName":"Lee","mapString":"Helsinki","mediaURL":"my site","latitude":60.17,"longitude":24.94}"#
            #expect(try await client.execute(uri: base, method: .post, body: ByteBuffer(string: other)).status == .created)
            // The list decodes strictly, newest first.
            let list = try decode(
                Results.self,
                try await client.execute(uri: "\(base)?limit=100&order=-updatedAt", method: .get, headers: Self.parseHeaders)
            )
            #expect(list.results.map(\.uniqueKey) == ["999", "1234"])
            #expect(list.results[0].mediaURL == "my site")
            // Find by uniqueKey: Parse's where (with the space lukevanin sends), and v1's plain parameter.
            let whereJSON = #"{"uniqueKey": "1234"}"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let found = try decode(Results.self, try await client.execute(uri: "\(base)?where=\(whereJSON)", method: .get))
            #expect(found.results.count == 1 && found.results[0].objectId == created.objectId)
            let plain = try decode(Results.self, try await client.execute(uri: "\(base)?uniqueKey=1234", method: .get))
            #expect(plain.results == found.results)
            // Overwrite: PUT the whole object, answered with updatedAt.
            let moved = Self.body.replacingOccurrences(of: "37.386052", with: "37.4").replacingOccurrences(
                of: "Mountain View, CA",
                with: "Palo Alto, CA"
            )
            let put = try await client.execute(
                uri: "\(base)/\(created.objectId)",
                method: .put,
                headers: Self.parseHeaders,
                body: ByteBuffer(string: moved)
            )
            #expect(put.status == .ok)
            let updated = try decode(Updated.self, put)
            let one = try decode(StudentLocation.self, try await client.execute(uri: "\(base)/\(created.objectId)", method: .get))
            #expect(
                one.mapString == "Palo Alto, CA" && one.latitude == 37.4 && one.updatedAt == updated.updatedAt && one.createdAt == created.createdAt
            )
            // A partial PUT changes only the keys it names (Parse semantics).
            _ = try await client.execute(
                uri: "\(base)/\(created.objectId)",
                method: .put,
                body: ByteBuffer(string: #"{"mediaURL":"https://example.org"}"#)
            )
            let partial = try decode(StudentLocation.self, try await client.execute(uri: "\(base)/\(created.objectId)", method: .get))
            #expect(partial.mediaURL == "https://example.org" && partial.mapString == "Palo Alto, CA" && partial.firstName == "John")
        }
    }

    @Test func oneRecordTwoViews() async throws {
        try await app().test(.router) { client in
            let created = try decode(
                Created.self,
                try await client.execute(uri: "/parse/classes/StudentLocation", method: .post, body: ByteBuffer(string: Self.body))
            )
            let pin = try decode(Answers.Record.self, try await client.execute(uri: "/v1/pins/\(created.objectId)", method: .get))
            #expect(pin.firstName == "John" && pin.lat == 37.386052)
            let viaUdacity = try decode(StudentLocation.self, try await client.execute(uri: "/v1/StudentLocation/\(created.objectId)", method: .get))
            #expect(viaUdacity.objectId == created.objectId)
            let deleted = try await client.execute(uri: "/v1/StudentLocation/\(created.objectId)", method: .delete)
            #expect(deleted.status == .ok)
            #expect(try await client.execute(uri: "/v1/pins/\(created.objectId)", method: .get).status == .notFound)
        }
    }

    @Test(arguments: [
        ("GET", "/parse/classes/StudentLocation/nope", "", 404, 101),
        ("PUT", "/parse/classes/StudentLocation/nope", #"{"firstName":"x"}"#, 404, 101),
        ("POST", "/parse/classes/StudentLocation", #"{"latitude":"37","longitude":1}"#, 400, 111),
        ("POST", "/parse/classes/StudentLocation", #"{"firstName":"x"}"#, 400, 142),
        ("POST", "/parse/classes/StudentLocation", #"{"latitude":1,"longitude":1,}"#, 400, 107),
        ("POST", "/parse/classes/StudentLocation", #"{"latitude":95,"longitude":1}"#, 400, 111),
        ("GET", "/parse/classes/StudentLocation?where=%7B%22latitude%22%3A1%7D", "", 400, 102),
        ("GET", "/parse/classes/StudentLocation?where=nope", "", 400, 107),
        ("GET", "/parse/classes/StudentLocation?limit=-1", "", 400, 102),
    ])
    func errorsAreParseErrors(_ method: String, _ uri: String, _ body: String, _ status: Int, _ code: Int) async throws {
        try await app().test(.router) { client in
            let response = try await client.execute(uri: uri, method: HTTPRequest.Method(method)!, body: ByteBuffer(string: body))
            #expect(response.status.code == status, "\(method) \(uri)")
            let error = try decode(ParseError.self, response)
            #expect(error.code == code, "\(method) \(uri): \(error)")
        }
    }

    @Test func unknownOrderKeysAreToleratedAndTheKeyIsChecked() async throws {
        try await app(apiKey: "student-key-1").test(.router) { client in
            let denied = try await client.execute(
                uri: "/parse/classes/StudentLocation",
                method: .post,
                headers: Self.parseHeaders,
                body: ByteBuffer(string: Self.body)
            )
            #expect(denied.status == .forbidden)
            #expect(try decode(ParseError.self, denied).error == "unauthorized")
            var headers = Self.parseHeaders
            headers[HTTPFields.Element.Name("X-Parse-REST-API-Key")!] = "student-key-1"
            let allowed = try await client.execute(
                uri: "/parse/classes/StudentLocation",
                method: .post,
                headers: headers,
                body: ByteBuffer(string: Self.body)
            )
            #expect(allowed.status == .created)
            let list = try decode(Results.self, try await client.execute(uri: "/parse/classes/StudentLocation?order=-updateAt", method: .get))
            #expect(list.results.count == 1)
        }
    }
}
