import Foundation
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import Testing

/// What a newcomer or a browser meets first: HEAD wherever GET is, CORS when asked for, and a 404 that points
/// somewhere.
@Suite struct FrontDoorTests {
    @Test(arguments: ["/health", "/v1/nearby?lat=60.17&lon=24.94&radius=1000", "/v1/pois/p3", "/openapi.json"])
    func headAnswersAsGetWithoutABody(_ uri: String) async throws {
        try await app().test(.router) { client in
            let get = try await client.execute(uri: uri, method: .get)
            let head = try await client.execute(uri: uri, method: .head)
            #expect(get.status == .ok, "\(uri)")
            #expect(head.status == get.status, "\(uri)")
            #expect(head.headers[.contentType] == get.headers[.contentType], "\(uri)")
            #expect(head.headers[.contentLength] == String(get.body.readableBytes), "\(uri)")
            #expect(head.body.readableBytes == 0, "\(uri)")
        }
    }

    @Test func headOfABadRequestIsTheSameProblemWithoutABody() async throws {
        try await app().test(.router) { client in
            let head = try await client.execute(uri: "/v1/nearby?lat=91&lon=0", method: .head)
            #expect(head.status == .badRequest)
            #expect(head.headers[.contentType] == "application/problem+json")
            #expect(head.body.readableBytes == 0)
        }
    }

    @Test func methodNotAllowedListsHeadBesideGet() async throws {
        try await app().test(.router) { client in
            let response = try await client.execute(uri: "/health", method: .post)
            #expect(response.status == .methodNotAllowed)
            #expect(response.headers[.allow] == "GET, HEAD")
        }
    }

    @Test(arguments: ["/", "/docs", "/v1"])
    func unknownPathsPointAtTheAPIDocument(_ uri: String) async throws {
        try await app().test(.router) { client in
            let response = try await client.execute(uri: uri, method: .get)
            #expect(response.status == .notFound)
            let detail = try json(response)["detail"] as? String ?? ""
            #expect(detail.contains("no route for GET \(uri)"), "\(detail)")
            #expect(detail.contains("/openapi.json"), "\(detail)")
        }
    }

    func corsApp(_ origin: String?) -> some ApplicationProtocol {
        buildApplication(configuration: ServerConfiguration(corsOrigin: origin), engine: makeEngine(), gazetteer: nil, metrics: testRegistry)
    }

    @Test func corsIsOffUnlessAsked() async throws {
        try await corsApp(nil).test(.router) { client in
            let response = try await client.execute(uri: "/health", method: .get, headers: [.origin: "https://maps.example.org"])
            #expect(response.status == .ok)
            #expect(response.headers[.accessControlAllowOrigin] == nil)
        }
    }

    @Test func corsPreflightAndSimpleRequestsForOneOrigin() async throws {
        try await corsApp("https://maps.example.org").test(.router) { client in
            let preflight = try await client.execute(
                uri: "/v1/pins", method: .options,
                headers: [.origin: "https://maps.example.org", .accessControlRequestMethod: "POST", .accessControlRequestHeaders: "content-type"]
            )
            #expect(preflight.status == .noContent)
            #expect(preflight.headers[.accessControlAllowOrigin] == "https://maps.example.org")
            let methods = preflight.headers[.accessControlAllowMethods] ?? ""
            #expect(methods.contains("POST") && methods.contains("HEAD"), "\(methods)")
            #expect((preflight.headers[.accessControlAllowHeaders] ?? "").contains("content-type"))
            let get = try await client.execute(uri: "/v1/search?q=cafe", method: .get, headers: [.origin: "https://maps.example.org"])
            #expect(get.status == .ok)
            #expect(get.headers[.accessControlAllowOrigin] == "https://maps.example.org")
            // Errors carry the header too, or the browser hides the problem from the page.
            let bad = try await client.execute(uri: "/v1/nearby?lat=91&lon=0", method: .get, headers: [.origin: "https://maps.example.org"])
            #expect(bad.status == .badRequest)
            #expect(bad.headers[.accessControlAllowOrigin] == "https://maps.example.org")
        }
    }

    @Test func corsWildcard() async throws {
        try await corsApp("*").test(.router) { client in
            let response = try await client.execute(uri: "/health", method: .get, headers: [.origin: "http://localhost:5173"])
            #expect(response.headers[.accessControlAllowOrigin] == "*")
        }
    }

    @Test(arguments: ["maps.example.org", "ftp://maps.example.org", "https://maps.example.org/app", "https://"])
    func corsOriginMustBeAnOrigin(_ origin: String) {
        #expect(throws: ServerConfigurationError.self) {
            try ServerConfiguration(corsOrigin: origin).validate()
        }
    }
}
