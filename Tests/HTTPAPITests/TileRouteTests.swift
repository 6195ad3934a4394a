import API
import Catalog
import Foundation
import GeoCore
import HTTPAPI
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Records
import SearchEngine
import Testing

/// GET /tiles/…: the tile as Mapbox Vector Tile bytes (read back by a protobuf reader written here from the spec),
/// and the HTTP around it — gzip, ETag and 304, 204, problems for tiles outside the pyramid — and TileJSON.
@Suite struct TileRouteTests {
    /// The z/x/y of the tile holding a position.
    static func tile(_ z: Int, _ latitude: Double, _ longitude: Double) -> String {
        let n = Double(1 << z)
        let x = Int((longitude + 180) / 360 * n)
        let y = Int((1 - log(tan(Double.pi / 4 + latitude * Double.pi / 360)) / Double.pi) / 2 * n)
        return "\(z)/\(x)/\(y)"
    }

    @Test func aTileHoldsTheRecordsAsPoints() async throws {
        try await app().test(.router) { client in
            let response = try await client.execute(uri: "/tiles/pois/\(Self.tile(14, 60.17, 24.94)).mvt", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/vnd.mapbox-vector-tile")
            #expect(response.headers[.contentEncoding] == nil)
            #expect(response.headers[.vary] == "Accept-Encoding")
            #expect(response.headers[.cacheControl] == "public, max-age=60")
            let layers = try MVTReader.layers(Array(response.body.readableBytesView))
            #expect(layers.count == 1)
            let layer = try #require(layers.first)
            #expect(layer.name == "pois" && layer.version == 2 && layer.extent == 4096)
            #expect(layer.keys == ["id", "name", "category", "count"])
            let ids = layer.features.compactMap { $0.properties(layer)["id"] as? String }
            // makeEngine's Helsinki POIs lie 60.17–60.229° N, 24.94–24.946° E: the tile at 60.17, 24.94 holds the
            // southern ones, which `within` over its box returns too.
            #expect(!ids.isEmpty)
            #expect(layer.features.allSatisfy { $0.type == 1 && $0.geometry.count == 3 && $0.geometry[0] == 9 })
            let cafe = try #require(layer.features.first { $0.properties(layer)["id"] as? String == "p0" })
            #expect(cafe.properties(layer)["name"] as? String == "Cafe 0")
            #expect(cafe.properties(layer)["category"] as? String == "food.cafe")
        }
    }

    @Test func gzipWhenAcceptedAndTheSameTile() async throws {
        try await app().test(.router) { client in
            let uri = "/tiles/pois/\(Self.tile(13, 60.17, 24.94)).mvt?cluster=0"
            let plain = try await client.execute(uri: uri, method: .get)
            let gzipped = try await client.execute(uri: uri, method: .get, headers: [.acceptEncoding: "br;q=1, gzip;q=0.8"])
            #expect(gzipped.headers[.contentEncoding] == "gzip")
            let bytes = Array(gzipped.body.readableBytesView)
            #expect(bytes.starts(with: [0x1f, 0x8b]), "a gzip member, not zlib's format")
            #expect(try Self.gunzip(bytes) == Array(plain.body.readableBytesView))
            #expect(plain.headers[.eTag] != gzipped.headers[.eTag], "each coding has its own tag")
            let refused = try await client.execute(uri: uri, method: .get, headers: [.acceptEncoding: "gzip;q=0, identity"])
            #expect(refused.headers[.contentEncoding] == nil)
        }
    }

    @Test func etagRevalidatesAndChangesWithTheData() async throws {
        let engine = makeEngine()
        try await app(engine: engine).test(.router) { client in
            let uri = "/tiles/pois/\(Self.tile(15, 60.17, 24.94)).mvt"
            let first = try await client.execute(uri: uri, method: .get)
            let tag = try #require(first.headers[.eTag])
            let again = try await client.execute(uri: uri, method: .get, headers: [.ifNoneMatch: "\"other\", W/\(tag)"])
            #expect(again.status == .notModified)
            #expect(again.body.readableBytes == 0)
            #expect(again.headers[.eTag] == tag)
            _ = try engine.upsertPOI(POIRecord(id: "new-cafe", name: "Uusi kahvila", category: "food.cafe", lat: 60.1701, lon: 24.9401))
            let changed = try await client.execute(uri: uri, method: .get, headers: [.ifNoneMatch: tag])
            #expect(changed.status == .ok)
            #expect(changed.headers[.eTag] != tag)
        }
    }

    @Test func emptyTilesAndTilesOutsideThePyramid() async throws {
        try await app().test(.router) { client in
            let empty = try await client.execute(uri: "/tiles/pois/12/0/0.mvt", method: .get)
            #expect(empty.status == .noContent)
            #expect(empty.body.readableBytes == 0)
            for (uri, parameter) in [
                ("/tiles/pois/25/0/0.mvt", "z"), ("/tiles/pois/3/8/0.mvt", "x"), ("/tiles/pois/3/0/-1.mvt", "y"), ("/tiles/pois/3/0/1e2.mvt", "y"),
                ("/tiles/roads/3/0/0.mvt", "layer"), ("/tiles/pois/3/0/0.mvt?cluster=26", "cluster"),
                ("/tiles/pois/3/0/0.mvt?coordsys=utm", "coordsys"),
                ("/tiles/stations.json", "layer"), ("/tiles/base/14/0/0.mvt?q=cafe", "q"), ("/tiles/base/14/0/0.mvt?category=food", "category"),
            ] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .badRequest, "\(uri)")
                #expect(response.headers[.contentType] == "application/problem+json", "\(uri)")
                let detail = try json(response)["detail"] as? String ?? ""
                #expect(detail.hasPrefix(parameter + " "), "\(uri): \(detail)")
            }
            // An engine without imported streets: every base tile is empty.
            #expect(try await client.execute(uri: "/tiles/base/\(Self.tile(14, 60.17, 24.94)).mvt", method: .get).status == .noContent)
            let png = try await client.execute(uri: "/tiles/pois/3/0/0.png", method: .get)
            #expect(png.status == .notFound)
        }
    }

    @Test func clusteredTilesCountTheRecords() async throws {
        try await app().test(.router) { client in
            let response = try await client.execute(uri: "/tiles/pois/\(Self.tile(8, 60.2, 24.94)).mvt", method: .get)
            let layer = try #require(try MVTReader.layers(Array(response.body.readableBytesView)).first)
            let counts = layer.features.map { $0.properties(layer)["count"] as? UInt64 ?? 0 }
            #expect(counts.reduce(0, +) == 60, "the 60 Helsinki POIs of makeEngine, each counted once")
            #expect(counts.allSatisfy { $0 >= 1 })
        }
    }

    @Test func tileJSONDescribesTheLayer() async throws {
        try await app().test(.router) { client in
            let response = try await client.execute(
                uri: "/tiles/pois.json?q=cafe&cluster=12",
                method: .get,
                headers: [.init("X-Forwarded-Proto")!: "https"]
            )
            #expect(response.status == .ok)
            let document = try json(response)
            #expect(document["tilejson"] as? String == "3.0.0")
            let tiles = try #require(document["tiles"] as? [String])
            #expect(tiles.count == 1)
            #expect(tiles[0].hasPrefix("https://") && tiles[0].hasSuffix("/tiles/pois/{z}/{x}/{y}.mvt?q=cafe&cluster=12"), "\(tiles)")
            let bounds = try #require(document["bounds"] as? [Double])
            #expect(bounds.count == 4 && bounds[0] <= 24.94 && bounds[2] >= 116.3164 && bounds[1] <= 39.9836 && bounds[3] >= 60.229)
            let layers = try #require(document["vector_layers"] as? [[String: Any]])
            #expect(layers.first?["id"] as? String == "pois")
            #expect(Set((layers.first?["fields"] as? [String: String] ?? [:]).keys) == ["id", "name", "category", "count"])
            // On a GCJ-02 map the records are drawn where that datum puts them: the box's Beijing edge moves with
            // them (by ~0.006° of longitude there), its Helsinki edges, outside China, only by the 1e-4° margin.
            let gcj = try json(try await client.execute(uri: "/tiles/pois.json?coordsys=gcj02", method: .get))
            let shifted = try #require(gcj["bounds"] as? [Double])
            let plain = try #require(try json(try await client.execute(uri: "/tiles/pois.json", method: .get))["bounds"] as? [Double])
            let beijing = CRS.Geographic.gcj02.fromWGS84(latitude: plain[1], longitude: plain[2])
            #expect(abs(shifted[0] - plain[0]) <= 1.1e-4 && abs(shifted[3] - plain[3]) <= 1.1e-4, "\(shifted) against \(plain)")
            #expect(shifted[2] >= beijing.longitude && shifted[2] - plain[2] > 0.004, "\(shifted) against \(plain)")
            #expect((gcj["tiles"] as? [String])?.first?.hasSuffix(".mvt?coordsys=gcj02") == true)
        }
    }

    static func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("t.gz")
        try Data(bytes).write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/gzip")
        process.arguments = ["-dc", file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "gzip -d refused the body")
        return Array(out)
    }
}

/// A reader of vector_tile.proto's Tile, written from the Mapbox Vector Tile 2.1 specification for these tests.
enum MVTReader {
    struct Layer {
        var name = ""
        var version: UInt64 = 1
        var extent: UInt64 = 4096
        var keys: [String] = []
        var values: [Any] = []
        var features: [Feature] = []
    }

    struct Feature {
        var tags: [UInt64] = []
        var type: UInt64 = 0
        var geometry: [UInt64] = []

        func properties(_ layer: Layer) -> [String: Any] {
            var out: [String: Any] = [:]
            for i in stride(from: 0, to: tags.count - 1, by: 2) { out[layer.keys[Int(tags[i])]] = layer.values[Int(tags[i + 1])] }
            return out
        }
    }

    struct Malformed: Error {}

    struct Cursor {
        let bytes: [UInt8]
        var at: Int
        let end: Int
        var done: Bool { at >= end }

        mutating func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard at < end, shift < 64 else { throw Malformed() }
                let byte = bytes[at]
                at += 1
                value |= UInt64(byte & 0x7f) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }

        /// A length-delimited field's cursor, this one moved past it.
        mutating func field() throws -> Cursor {
            let length = Int(try varint())
            guard length >= 0, at + length <= end else { throw Malformed() }
            defer { at += length }
            return Cursor(bytes: bytes, at: at, end: at + length)
        }

        var text: String { String(decoding: bytes[at..<end], as: UTF8.self) }

        mutating func packed() throws -> [UInt64] {
            var out: [UInt64] = []
            while !done { out.append(try varint()) }
            return out
        }
    }

    static func layers(_ bytes: [UInt8]) throws -> [Layer] {
        var tile = Cursor(bytes: bytes, at: 0, end: bytes.count)
        var layers: [Layer] = []
        while !tile.done {
            let key = try tile.varint()
            guard key == (3 << 3 | 2) else { throw Malformed() }
            var c = try tile.field()
            var layer = Layer()
            while !c.done {
                let key = try c.varint()
                switch (key >> 3, key & 7) {
                case (15, 0): layer.version = try c.varint()
                case (1, 2): layer.name = try c.field().text
                case (2, 2):
                    var f = try c.field()
                    var feature = Feature()
                    while !f.done {
                        let key = try f.varint()
                        switch (key >> 3, key & 7) {
                        case (1, 0): _ = try f.varint()
                        case (2, 2):
                            var p = try f.field()
                            feature.tags = try p.packed()
                        case (3, 0): feature.type = try f.varint()
                        case (4, 2):
                            var p = try f.field()
                            feature.geometry = try p.packed()
                        default: throw Malformed()
                        }
                    }
                    layer.features.append(feature)
                case (3, 2): layer.keys.append(try c.field().text)
                case (4, 2):
                    var v = try c.field()
                    let key = try v.varint()
                    switch (key >> 3, key & 7) {
                    case (1, 2): layer.values.append(try v.field().text)
                    case (5, 0): layer.values.append(try v.varint())
                    default: throw Malformed()
                    }
                    guard v.done else { throw Malformed() }
                case (5, 0): layer.extent = try c.varint()
                default: throw Malformed()
                }
            }
            layers.append(layer)
        }
        return layers
    }
}
