import BundledData
import Foundation
import HTTPServer
import Hummingbird

/// Where the map page finds what it serves besides its own files.
public struct MapPageConfiguration: Sendable {
    /// A tile server URL template (`https://tile.example.org/{z}/{x}/{y}.png`); nil draws the bundled country outlines.
    public var tilesURL: String?
    /// Attribution shown for the tiles.
    public var tilesAttribution: String
    /// Debian's libjs-leaflet, served at /static/leaflet/.
    public var leafletDirectory: String
    /// The bundled outlines (`data/countries.geojson.gz`), served at /static/countries.geojson.
    public var outlinesPath: String?

    public init(
        tilesURL: String? = nil,
        tilesAttribution: String = "",
        leafletDirectory: String = "/usr/share/javascript/leaflet",
        outlinesPath: String? = nil
    ) {
        self.tilesURL = tilesURL
        self.tilesAttribution = tilesAttribution
        self.leafletDirectory = leafletDirectory
        self.outlinesPath = outlinesPath
    }

    /// A tile URL is an absolute http(s) URL with the {z}, {x} and {y} placeholders Leaflet fills in.
    func validate() throws(ServerConfigurationError) {
        guard let tilesURL else { return }
        let lower = tilesURL.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), ["{z}", "{x}", "{y}"].allSatisfy(tilesURL.contains),
            !tilesURL.unicodeScalars.contains(where: { $0.value < 0x21 || $0 == "\"" || $0 == "<" || $0 == ">" })
        else {
            throw .invalid(
                "--tiles must be an http(s) URL template with {z}, {x} and {y}, e.g. https://tile.openstreetmap.org/{z}/{x}/{y}.png; got \(tilesURL)"
            )
        }
    }
}

/// The map page at `/` (docs/ARCHITECTURE.md, "The HTTP contract"), its API docs page at `/docs`, and the static files both load. Everything is
/// read once when the router is built and answered from memory.
struct MapPageController {
    struct Asset {
        let bytes: ByteBuffer
        let contentType: String
    }

    let index: ByteBuffer
    let docs: ByteBuffer
    let assets: [String: Asset]
    let leafletMissing: String?
    let outlinesMissing: String?

    init(configuration: MapPageConfiguration) {
        func resource(_ name: String) -> [UInt8] {
            guard let url = Bundle.module.url(forResource: "Web/\(name)", withExtension: nil), let data = try? Data(contentsOf: url) else {
                return Array("missing resource \(name)".utf8)
            }
            return Array(data)
        }
        let config = Self.pageConfig(configuration)
        index = ByteBuffer(string: String(decoding: resource("index.html"), as: UTF8.self).replacingOccurrences(of: "{{CONFIG}}", with: config))
        docs = ByteBuffer(bytes: resource("docs.html"))
        var assets: [String: Asset] = [
            "app.js": Asset(bytes: ByteBuffer(bytes: resource("app.js")), contentType: "text/javascript; charset=utf-8"),
            "app.css": Asset(bytes: ByteBuffer(bytes: resource("app.css")), contentType: "text/css; charset=utf-8"),
            "docs.js": Asset(bytes: ByteBuffer(bytes: resource("docs.js")), contentType: "text/javascript; charset=utf-8"),
        ]
        let leaflet = URL(fileURLWithPath: configuration.leafletDirectory)
        let leafletFiles = [
            ("leaflet.js", "text/javascript; charset=utf-8"), ("leaflet.css", "text/css; charset=utf-8"),
            ("images/layers.png", "image/png"), ("images/layers-2x.png", "image/png"), ("images/marker-icon.png", "image/png"),
            ("images/marker-icon-2x.png", "image/png"), ("images/marker-shadow.png", "image/png"),
        ]
        var leafletMissing: String?
        for (name, type) in leafletFiles {
            if let data = try? Data(contentsOf: leaflet.appendingPathComponent(name)) {
                assets["leaflet/\(name)"] = Asset(bytes: ByteBuffer(bytes: data), contentType: type)
            } else if name == "leaflet.js" {
                leafletMissing =
                    "Leaflet is not installed at \(configuration.leafletDirectory) (Debian package libjs-leaflet; scripts/setup.sh installs it)"
            }
        }
        self.leafletMissing = leafletMissing
        var outlinesMissing: String? = "no country outlines were configured (data/countries.geojson.gz)"
        if let path = configuration.outlinesPath {
            do {
                let bytes = try GzipFile.read(path)
                assets["countries.geojson"] = Asset(bytes: ByteBuffer(bytes: bytes), contentType: "application/geo+json")
                outlinesMissing = nil
            } catch {
                outlinesMissing = "cannot read the country outlines: \(error)"
            }
        }
        self.outlinesMissing = outlinesMissing
        self.assets = assets
    }

    /// The page's settings as a JSON object literal, safe inside a <script> element.
    static func pageConfig(_ configuration: MapPageConfiguration) -> String {
        var json = JSONWriter()
        json.beginObject()
        json.key("tiles")
        if let tiles = configuration.tilesURL { json.string(tiles) } else { json.null() }
        json.key("attribution")
        json.string(configuration.tilesAttribution)
        json.endObject()
        return String(decoding: json.buffer, as: UTF8.self)
            .replacingOccurrences(of: "<", with: "\\u003c").replacingOccurrences(of: ">", with: "\\u003e")
            .replacingOccurrences(of: "&", with: "\\u0026")
    }

    func register(on routes: RouteRegistrar) {
        routes.on("mapPage") { _, _ in html(index) }
        routes.on("docsPage") { _, _ in html(docs) }
        routes.on("staticFile") { request, context -> Response in
            let name = context.parameters.getCatchAll().joined(separator: "/")
            guard let asset = assets[name] else {
                if name.hasPrefix("leaflet/"), let leafletMissing { throw Problem(.notFound, leafletMissing) }
                if name == "countries.geojson", let outlinesMissing { throw Problem(.notFound, outlinesMissing) }
                throw Problem(.notFound, "no static file \(name)")
            }
            return Response(
                status: .ok,
                headers: [.contentType: asset.contentType, .cacheControl: "public, max-age=3600"],
                body: ResponseBody(byteBuffer: asset.bytes)
            )
        }
    }

    private func html(_ bytes: ByteBuffer) -> Response {
        Response(
            status: .ok,
            headers: [
                .contentType: "text/html; charset=utf-8",
                // The page loads only from this server, and talks to it; tiles (if any) are images from anywhere.
                .contentSecurityPolicy:
                    "default-src 'self'; img-src 'self' data: http: https:; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'",
                .xContentTypeOptions: "nosniff",
            ],
            body: ResponseBody(byteBuffer: bytes)
        )
    }
}
