import Foundation
import GeoCore
import SearchEngine

/// Opaque page cursors: base64url of a small versioned text. Nearby pages resume after (distance key, record
/// number); within pages after a record number. Each cursor carries a digest of the query it continues (origin,
/// radius, area, q, category, kind — everything but `limit`), so a cursor replayed with another query is refused
/// instead of answering a page of the other query that starts somewhere arbitrary. The digest is FNV-1a, stable
/// across processes and replicas (Swift's `Hasher` is seeded per process). Anything else is malformed.
public enum PageCursor {
    public static func nearby(_ position: NearestCursor, query: NearbyQuery) -> String {
        encode("n2:\(digest(query)):\(String(position.key.bitPattern, radix: 16)):\(position.id)")
    }

    public static func within(_ record: UInt32, query: WithinQuery) -> String { encode("w2:\(digest(query)):\(record)") }

    /// The position a nearby cursor continues after, checked against the query it is sent with.
    public static func nearby(_ text: String, query: NearbyQuery) throws(ParameterError) -> NearestCursor {
        let parts = try decode(text).split(separator: ":")
        guard parts.count == 4, parts[0] == "n2", let bits = UInt64(parts[2], radix: 16), let id = UInt32(parts[3]) else { throw malformed }
        guard parts[1] == digest(query) else { throw otherQuery("lat, lon, radius, q, category and kind") }
        let key = Double(bitPattern: bits)
        guard key.isFinite, key >= 0 else { throw malformed }
        return NearestCursor(key: key, id: id)
    }

    /// The record a within cursor continues after, checked against the query it is sent with.
    public static func within(_ text: String, query: WithinQuery) throws(ParameterError) -> UInt32 {
        let parts = try decode(text).split(separator: ":")
        guard parts.count == 3, parts[0] == "w2", let record = UInt32(parts[2]) else { throw malformed }
        guard parts[1] == digest(query) else { throw otherQuery("bbox or polygon, q, category and kind") }
        return record
    }

    static let malformed = ParameterError("cursor", "is malformed: pass the next value of a previous page unchanged")

    private static func otherQuery(_ parameters: String) -> ParameterError {
        ParameterError("cursor", "belongs to another query: send it with the same \(parameters) as the page that gave it")
    }

    static func digest(_ query: NearbyQuery) -> String {
        var hash = Digest()
        hash.add("nearby")
        hash.add(query.origin.latitude)
        hash.add(query.origin.longitude)
        hash.add(query.radius ?? -1)
        hash.add(query.text ?? "\u{0}")
        hash.add(query.categories.isEmpty ? "\u{0}" : query.categories.joined(separator: "|"))
        hash.add(query.kind.rawValue)
        return hash.hex
    }

    static func digest(_ query: WithinQuery) -> String {
        var hash = Digest()
        hash.add("within")
        switch query.area {
        case .box(let box):
            for value in [box.west, box.south, box.east, box.north] { hash.add(value) }
        case .polygon(let polygon):
            hash.add("polygon")
            for vertex in polygon.vertices {
                hash.add(vertex.latitude)
                hash.add(vertex.longitude)
            }
        }
        hash.add(query.text ?? "\u{0}")
        hash.add(query.categories.isEmpty ? "\u{0}" : query.categories.joined(separator: "|"))
        hash.add(query.kind.rawValue)
        return hash.hex
    }

    /// FNV-1a over the fields, with a separator after each so that ("ab", "c") and ("a", "bc") differ.
    private struct Digest {
        private var hash = FNV1a()

        mutating func add<Bytes: Sequence<UInt8>>(bytes: Bytes) {
            hash.combine(bytes)
            hash.combine(0xff)
        }

        mutating func add(_ text: String) { add(bytes: text.utf8) }
        mutating func add(_ value: Double) { withUnsafeBytes(of: value.bitPattern.littleEndian) { add(bytes: $0) } }

        var hex: String {
            let text = String(hash.value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// base64url without padding (RFC 4648 §5), written directly: a nearby page makes one per answer.
    private static func encode(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            for shift in [18, 12, 6, 0] as [UInt32] { out.append(alphabet[Int(n >> shift & 63)]) }
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            if rest == 2 { out.append(alphabet[Int(n >> 6 & 63)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func decode(_ text: String) throws(ParameterError) -> String {
        guard text.count <= 200 else { throw malformed }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let decoded = String(data: data, encoding: .utf8) else { throw malformed }
        return decoded
    }
}
