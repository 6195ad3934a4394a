import API
import Foundation
import Hummingbird

/// A request's query string as the wire layer's parameter source, decoded as HTML forms and every HTTP client
/// library encode it (application/x-www-form-urlencoded): `+` is a space and `%2B` a plus sign. (Hummingbird's
/// `uri.queryParameters` percent-decodes but keeps `+`, so `q=New+York` would reach the geocoder as "New+York".)
struct FormQuery: ParameterSource, Sequence {
    private let pairs: [(key: Substring, value: Substring)]
    /// The decoded keys' bytes one after another, and each pair's key as an offset and length in them: a lookup
    /// compares bytes without touching the pairs' strings (whose reference counting cost more than the parsing).
    private let keyBytes: [UInt8]
    private let keySpans: [(start: Int, count: Int)]

    /// Split at `&` and at each pair's first `=` by bytes, as the WHATWG urlencoded parser does.
    init(_ query: String?) { self.init(query.map { $0[...] }) }

    init(_ query: Substring?) {
        guard let query, !query.isEmpty else {
            pairs = []
            keyBytes = []
            keySpans = []
            return
        }
        // A bridged string has no contiguous UTF-8; the same query as a native string has.
        let split = Self.split(query) ?? Self.split(Substring(String(query)))!
        pairs = split.pairs
        keyBytes = split.keyBytes
        keySpans = split.keySpans
    }

    /// The pairs and their keys' bytes (see the properties), in one pass over the query's bytes; nil when the query
    /// has no contiguous UTF-8.
    private static func split(_ query: Substring) -> (pairs: [(key: Substring, value: Substring)], keyBytes: [UInt8], keySpans: [(start: Int, count: Int)])? {
        let utf8 = query.utf8
        let base = utf8.startIndex
        func text(_ start: Int, _ end: Int, encoded: Bool) -> Substring {
            let text = query[utf8.index(base, offsetBy: start)..<utf8.index(base, offsetBy: end)]
            return encoded ? Self.decoded(text) : text
        }
        var pairs: [(key: Substring, value: Substring)] = []
        var keyBytes: [UInt8] = []
        var keySpans: [(start: Int, count: Int)] = []
        // One pass over the bytes: each pair's key and value as offsets, and whether each has `+` or `%` to decode.
        let scanned: Void? = utf8.withContiguousStorageIfAvailable { bytes in
            var start = 0
            while start < bytes.count {
                var end = start
                var equals = -1
                var keyEncoded = false
                var valueEncoded = false
                while end < bytes.count {
                    let byte = bytes[end]
                    if byte == UInt8(ascii: "&") { break }
                    if byte == UInt8(ascii: "=") && equals < 0 {
                        equals = end
                    } else if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "%") {
                        if equals < 0 { keyEncoded = true } else { valueEncoded = true }
                    }
                    end += 1
                }
                if start < end {
                    let key = text(start, equals < 0 ? end : equals, encoded: keyEncoded)
                    pairs.append((key, equals < 0 ? "" : text(equals + 1, end, encoded: valueEncoded)))
                    keySpans.append((keyBytes.count, key.utf8.count))
                    keyBytes.append(contentsOf: key.utf8)
                }
                start = end + 1
            }
        }
        guard scanned != nil else { return nil }
        return (pairs, keyBytes, keySpans)
    }

    /// `+` as a space, then percent-decoded as the WHATWG URL standard decodes forms (and as browsers, Python's
    /// `unquote_plus` and the HTTP client libraries do): a `%` without two hex digits after it stays as it is, and
    /// decoded bytes that are not UTF-8 become U+FFFD.
    static func decoded(_ text: Substring) -> Substring {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) else { return text }
        let bytes = Array(text.utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count, let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) {
                decoded.append(high << 4 | low)
                i += 3
            } else {
                decoded.append(bytes[i] == UInt8(ascii: "+") ? UInt8(ascii: " ") : bytes[i])
                i += 1
            }
        }
        return Substring(String(decoding: decoded, as: UTF8.self))
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    func lastValue(of name: String) -> Substring? {
        var name = name
        let found: Int? = name.withUTF8 { wanted in
            keyBytes.withUnsafeBufferPointer { bytes in
                keySpans.withUnsafeBufferPointer { spans in
                    for i in spans.indices.reversed() where spans[i].count == wanted.count {
                        if wanted.count == 0 || memcmp(bytes.baseAddress! + spans[i].start, wanted.baseAddress!, wanted.count) == 0 { return i }
                    }
                    return nil
                }
            }
        }
        return found.map { pairs[$0].value }
    }

    func makeIterator() -> IndexingIterator<[(key: Substring, value: Substring)]> { pairs.makeIterator() }
}

typealias QueryParameters = RequestParameters<FormQuery>

extension RequestParameters where Source == FormQuery {
    init(_ request: Request) { self.init(FormQuery(request.uri.query)) }
}
