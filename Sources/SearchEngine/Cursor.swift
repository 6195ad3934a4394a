import Foundation
import SpatialIndex

/// Opaque page cursors: base64url of a small versioned text. Nearby pages resume after (distance key, record
/// number); within pages after a record number. Anything else is rejected as malformed.
enum Cursor {
    static func nearby(_ position: NearestCursor) -> String {
        encode("n1:\(String(position.key.bitPattern, radix: 16)):\(position.id)")
    }

    static func within(after record: UInt32) -> String { encode("w1:\(record)") }

    static func parseNearby(_ text: String?) throws(SearchError) -> NearestCursor? {
        guard let text else { return nil }
        let parts = try decode(text).split(separator: ":")
        guard parts.count == 3, parts[0] == "n1", let bits = UInt64(parts[1], radix: 16), let id = UInt32(parts[2]) else { throw malformed }
        let key = Double(bitPattern: bits)
        guard key.isFinite, key >= 0 else { throw malformed }
        return NearestCursor(key: key, id: id)
    }

    static func parseWithin(_ text: String?) throws(SearchError) -> UInt32? {
        guard let text else { return nil }
        let parts = try decode(text).split(separator: ":")
        guard parts.count == 2, parts[0] == "w1", let record = UInt32(parts[1]) else { throw malformed }
        return record
    }

    static let malformed = SearchError.invalid(parameter: "cursor", rule: "is malformed: pass the next value of a previous page unchanged")

    private static func encode(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func decode(_ text: String) throws(SearchError) -> String {
        guard text.count <= 200 else { throw malformed }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let decoded = String(data: data, encoding: .utf8) else { throw malformed }
        return decoded
    }
}
