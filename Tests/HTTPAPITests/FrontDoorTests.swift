import API
import Foundation
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import TestSupport
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

    @Test(arguments: ["/v1", "/v2/nearby", "/api"])
    func unknownPathsPointAtTheAPIDocument(_ uri: String) async throws {
        try await app().test(.router) { client in
            let response = try await client.execute(uri: uri, method: .get)
            #expect(response.status == .notFound)
            let detail = try decode(Answers.Problem.self, response).detail ?? ""
            #expect(detail.contains("no route for GET \(uri)"), "\(detail)")
            #expect(detail.contains("/docs") && detail.contains("/openapi.json"), "\(detail)")
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
                uri: "/v1/pins",
                method: .options,
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

/// The map page and its files, as served (the page itself is checked in a real browser by scripts/browser/run).
@Suite struct MapPageTests {
    static let outlines = Repository.path("data/countries.geojson.gz")

    func mapApp(_ page: MapPageConfiguration) -> some ApplicationProtocol {
        buildApplication(configuration: ServerConfiguration(mapPage: page), engine: makeEngine(), gazetteer: nil, metrics: testRegistry)
    }

    @Test func thePageAndItsFilesAreServed() async throws {
        try await mapApp(MapPageConfiguration(outlinesPath: Self.outlines)).test(.router) { client in
            let page = try await client.execute(uri: "/", method: .get)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            let html = String(buffer: page.body)
            #expect(html.contains(#"window.POI_CONFIG = {"tiles":null,"attribution":""};"#))
            #expect(html.contains(#"<script src="/static/leaflet/leaflet.js"></script>"#))
            for (uri, type) in [
                ("/static/app.js", "text/javascript; charset=utf-8"), ("/static/app.css", "text/css; charset=utf-8"),
                ("/static/docs.js", "text/javascript; charset=utf-8"), ("/static/leaflet/leaflet.js", "text/javascript; charset=utf-8"),
                ("/static/leaflet/leaflet.css", "text/css; charset=utf-8"), ("/docs", "text/html; charset=utf-8"),
            ] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .ok, "\(uri)")
                #expect(response.headers[.contentType] == type, "\(uri)")
                #expect(response.body.readableBytes > 100, "\(uri)")
            }
            let outlines = try await client.execute(uri: "/static/countries.geojson", method: .get)
            #expect(outlines.headers[.contentType] == "application/geo+json")
            let collection = try decode(Answers.FeatureCollection.self, outlines)
            #expect(collection.features.count == 177)
            let missing = try await client.execute(uri: "/static/../Package.swift", method: .get)
            #expect(missing.status == .notFound)
        }
    }

    @Test func tilesAreConfiguredAndEscapedForTheScriptElement() async throws {
        let page = MapPageConfiguration(tilesURL: "https://tiles.example.org/{z}/{x}/{y}.png", tilesAttribution: "</script><b>&copy; x</b>")
        try await mapApp(page).test(.router) { client in
            let html = String(buffer: try await client.execute(uri: "/", method: .get).body)
            #expect(html.contains(#""tiles":"https://tiles.example.org/{z}/{x}/{y}.png""#))
            #expect(html.contains(#""attribution":"\u003c/script\u003e\u003cb\u003e\u0026copy; x\u003c/b\u003e""#))
            #expect(!html.contains("</script><b>"))
        }
    }

    @Test func missingLeafletOrOutlinesAreNamed() async throws {
        try await mapApp(MapPageConfiguration(leafletDirectory: "/nonexistent/leaflet")).test(.router) { client in
            let leaflet = try await client.execute(uri: "/static/leaflet/leaflet.js", method: .get)
            #expect(leaflet.status == .notFound)
            #expect((try decode(Answers.Problem.self, leaflet).detail ?? "").contains("libjs-leaflet"))
            let outlines = try await client.execute(uri: "/static/countries.geojson", method: .get)
            #expect(outlines.status == .notFound)
            #expect((try decode(Answers.Problem.self, outlines).detail ?? "").contains("countries.geojson.gz"))
        }
    }

    @Test(arguments: [
        "tiles.example.org/{z}/{x}/{y}.png", "https://tiles.example.org/{z}/{x}.png", "javascript:alert(1)//{z}{x}{y}",
        "https://t.example.org/{z}/{x}/{y}.png\"><script>",
    ])
    func tileURLsMustBeTemplates(_ url: String) {
        #expect(throws: ServerConfigurationError.self) {
            try ServerConfiguration(mapPage: MapPageConfiguration(tilesURL: url)).validate()
        }
    }
}
