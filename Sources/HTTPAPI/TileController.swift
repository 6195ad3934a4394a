import API
import CZlib
import Foundation
import Gazetteer
import GeoCore
import HTTPServer
import HTTPTypes
import Hummingbird
import SearchEngine

/// Vector tiles and their TileJSON (docs/ARCHITECTURE.md, "Vector tiles"): the engine picks the records, the API
/// layer writes the Mapbox Vector Tile, and this answers it the way map clients and HTTP caches expect — gzip when
/// accepted, an ETag of the tile's bytes (304 on a match), 204 for an empty tile. Tiles made are kept while their
/// layer's data stays the same (`TileCache`).
struct TileController {
    let engine: SearchEngine
    /// Whether this server speaks TLS itself: the scheme of the tile URLs TileJSON gives, unless a proxy in front
    /// says otherwise (`X-Forwarded-Proto`).
    let tls: Bool
    let cache: TileCache

    static let contentType = "application/vnd.mapbox-vector-tile"
    /// The most street lines a base tile holds, and the most areas of each kind.
    static let baseLineLimit = 50_000

    func register(on routes: RouteRegistrar) {
        routes.read("tile", cost: .heavyWhen(Self.isHeavy)) { [engine, cache] input in
            let parameters = input.pathParameters.map(String.init)
            guard parameters.count == 4 else { throw Problem(.notFound, "no tile at this path") }
            let parsed = try TileRequest(layer: parameters[0], z: parameters[1], x: parameters[2], y: parameters[3], input.parameters)
            let gzip = GzipEncoding.accepted(by: input.acceptEncoding)
            let key = TileCache.Key(tile: "\(parsed.layer.rawValue)/\(parsed.query.tile)\(parsed.filters.queryString)", gzip: gzip)
            // The version first, then the tile: a write in between makes the tile kept newer than its version says,
            // which costs a miss, never a stale answer.
            let book = parsed.layer == .base ? engine.addresses : nil
            let version = book?.osm.serial ?? engine.tileVersion(parsed.query)
            if let kept = cache.answer(key, version: version) { return Self.conditional(kept, input: input) }
            let answer = Self.content(try Self.encode(parsed, book: book, engine: engine), layer: parsed.layer, gzip: gzip)
            cache.keep(answer, for: key, version: version)
            return Self.conditional(answer, input: input)
        }
        routes.on("tileJSON") { [engine, tls] request, context in
            let parsed = try TileJSONRequest(layer: context.parameters.get("layer"), RequestParameters(request))
            let scheme =
                request.headers[HTTPField.Name("X-Forwarded-Proto")!].flatMap { $0 == "https" || $0 == "http" ? $0 : nil } ?? (tls ? "https" : "http")
            let host = request.head.authority.flatMap { Self.isHost($0) ? $0 : nil } ?? "localhost"
            let bounds = parsed.layer == .base ? engine.addresses.areaBounds : engine.bounds(of: parsed.layer.kind)
            let body = parsed.encode(base: "\(scheme)://\(host)", bounds: bounds)
            return Response(
                status: .ok,
                headers: [.contentType: "application/json", .cacheControl: "no-cache"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: body))
            )
        }
    }

    /// A Host header safe to echo into a URL: a name or address and an optional port, nothing else.
    static func isHost(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= 255
            && value.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == UInt8(ascii: "-")
                    || c == UInt8(ascii: ".") || c == UInt8(ascii: ":") || c == UInt8(ascii: "[") || c == UInt8(ascii: "]")
            }
    }

    private static let tilesPrefix = Array("/tiles/".utf8)

    /// Whether a tile request is for the read workers: a `base` tile (street lines and areas) or a tile above zoom 13,
    /// which may cluster or gather thousands of records; a deep POI or pin tile holds a few and is answered on the loop.
    /// Judged from the target's text (`/tiles/{layer}/{z}/…`); where it cannot be read, heavy.
    @Sendable static func isHeavy(target: String) -> Bool {
        // On the target's bytes, no strings made: this runs for every tile request on the event loop.
        var target = target
        return target.withUTF8 { bytes in
            let end = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
            // "/tiles/" "pois/" or "pins/", then the zoom's digits and "/".
            let prefix = tilesPrefix
            guard end > prefix.count + 5, bytes.starts(with: prefix) else { return true }
            let layer = UnsafeBufferPointer(rebasing: bytes[prefix.count..<(prefix.count + 5)])
            guard layer.elementsEqual("pois/".utf8) || layer.elementsEqual("pins/".utf8) else { return true }
            var z = 0
            var i = prefix.count + 5
            while i < end, bytes[i] != UInt8(ascii: "/") {
                guard bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9"), z < 1_000 else { return true }
                z = z * 10 + Int(bytes[i] - UInt8(ascii: "0"))
                i += 1
            }
            return i == prefix.count + 5 || i == end || z < 14
        }
    }

    /// The tile's bytes: the base's streets, water and buildings from `book`, or the engine's records.
    static func encode(_ parsed: TileRequest, book: AddressBook?, engine: SearchEngine) throws -> [UInt8] {
        if let book {
            let lines = book.lines(in: parsed.baseBox, limit: Self.baseLineLimit)
            guard !lines.truncated else {
                throw Problem(.badRequest, "z must be deeper for tile \(parsed.query.tile): it crosses more than \(Self.baseLineLimit) streets")
            }
            let water = book.areas(of: .water, in: parsed.baseBox, limit: Self.baseLineLimit)
            let buildings =
                parsed.query.tile.z >= TileRequest.buildingsFrom
                ? book.areas(of: .building, in: parsed.baseBox, limit: Self.baseLineLimit) : (areas: [], truncated: false)
            guard !water.truncated && !buildings.truncated else {
                throw Problem(.badRequest, "z must be deeper for tile \(parsed.query.tile): it holds more than \(Self.baseLineLimit) areas")
            }
            return parsed.encodeBase(lines: lines.lines, water: water.areas, buildings: buildings.areas)
        }
        var writer = parsed.writer()
        try engine.tile(parsed.query, into: &writer)
        return writer.encoded()
    }

    /// The tile's answer to any request: 204 when empty; else its bytes, gzip-compressed when `gzip` (the client
    /// accepts it), with an ETag naming the bytes and their coding. POI tiles may be cached for a minute; pin tiles,
    /// which users move all the time, are revalidated on every use.
    static func content(_ tile: [UInt8], layer: TileLayer, gzip: Bool) -> ReadAnswer {
        // The base changes with imports and change files, the POIs with writes: a minute's staleness at most.
        var fields = [
            HTTPField(name: .cacheControl, value: layer == .pins ? "no-cache" : "public, max-age=60"),
            HTTPField(name: .vary, value: "Accept-Encoding"),
        ]
        guard !tile.isEmpty else { return ReadAnswer(status: .noContent, contentType: nil, body: [], fields: fields) }
        let compressed = gzip ? GzipEncoding.compress(tile) : nil
        fields.append(HTTPField(name: .eTag, value: etag(of: tile, gzip: compressed != nil)))
        if compressed != nil { fields.append(HTTPField(name: .contentEncoding, value: "gzip")) }
        return ReadAnswer(status: .ok, contentType: contentType, body: compressed ?? tile, fields: fields)
    }

    /// `answer` (from `content`), or 304 with its caching fields when the client already holds its bytes
    /// (`If-None-Match`).
    static func conditional(_ answer: ReadAnswer, input: ReadInput) -> ReadAnswer {
        guard answer.status == .ok, let condition = input.ifNoneMatch,
            let tag = answer.fields.first(where: { $0.name == .eTag })?.value, matches(condition, tag)
        else { return answer }
        let fields = answer.fields.filter { $0.name != .contentEncoding }
        return ReadAnswer(status: .notModified, contentType: nil, body: [], fields: fields)
    }

    /// A strong ETag of the tile's bytes (their CRC-32 and Adler-32, zlib's, which run at gigabytes a second where
    /// a byte-at-a-time hash took 30 µs of a 30 KB tile, and their length) and coding: the same tile is the same
    /// tag on every server and restart, and any change in it is a new one.
    static func etag(of tile: [UInt8], gzip: Bool) -> String {
        let (crc, adler) = tile.withUnsafeBufferPointer { b in
            (crc32(0, b.baseAddress, UInt32(b.count)), adler32(1, b.baseAddress, UInt32(b.count)))
        }
        // Written as bytes, once: two padded hex numbers, the length in hex, the coding.
        var text: [UInt8] = [UInt8(ascii: "\"")]
        text.reserveCapacity(40)
        func hex(_ value: UInt, digits: Int) {
            let shown = max(digits, (UInt.bitWidth - value.leadingZeroBitCount + 3) / 4)
            for shift in stride(from: (shown - 1) * 4, through: 0, by: -4) { text.append(Self.hexDigits[Int(value >> UInt(shift) & 0xF)]) }
        }
        hex(crc, digits: 8)
        hex(adler, digits: 8)
        text.append(UInt8(ascii: "-"))
        hex(UInt(tile.count), digits: 1)
        if gzip { text += Array("-gzip".utf8) }
        text.append(UInt8(ascii: "\""))
        return String(decoding: text, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// If-None-Match (RFC 9110 §13.1.2): `*`, or any listed tag equal to ours by the weak comparison.
    static func matches(_ condition: String, _ tag: String) -> Bool {
        for item in condition.split(separator: ",") {
            var candidate = item.trimmingCharacters(in: .whitespaces)
            if candidate == "*" { return true }
            if candidate.hasPrefix("W/") { candidate.removeFirst(2) }
            if candidate == tag { return true }
        }
        return false
    }
}
