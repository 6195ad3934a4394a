import Foundation

/// A request's query string as the wire layer's parameter source, decoded as HTML forms and every HTTP client
/// library encode it (application/x-www-form-urlencoded): `+` is a space and `%2B` a plus sign. (Hummingbird's
/// `uri.queryParameters` percent-decodes but keeps `+`, so `q=New+York` would reach the geocoder as "New+York".)
public struct FormQuery: ParameterSource, Sequence {
    /// The query's bytes, then the decoded bytes of each key or value that had `+` or `%` in it.
    private let bytes: [UInt8]
    /// Each pair's key and value as ranges of `bytes`, in order. A lookup compares bytes and makes no strings: the
    /// strings' reference counting and index arithmetic cost more than the parsing (issue 17).
    private let pairs: [Pair]

    private struct Pair {
        var keyStart: Int32
        var keyEnd: Int32
        var valueStart: Int32
        var valueEnd: Int32
    }

    /// Split at `&` and at each pair's first `=` by bytes, as the WHATWG urlencoded parser does.
    public init(_ query: String?) { self.init(query.map { $0[...] }) }

    public init(_ query: Substring?) {
        guard let query, !query.isEmpty else {
            bytes = []
            pairs = []
            return
        }
        var bytes = query.utf8.withContiguousStorageIfAvailable { Array($0) } ?? Array(query.utf8)
        pairs = Self.split(&bytes)
        self.bytes = bytes
    }

    /// The pairs of the query in `bytes`, in one pass; keys and values to decode are decoded onto the end of `bytes`.
    private static func split(_ bytes: inout [UInt8]) -> [Pair] {
        var pairs: [Pair] = []
        pairs.reserveCapacity(12)
        let count = bytes.count
        var start = 0
        while start < count {
            var end = start
            var equals = -1
            var keyEncoded = false
            var valueEncoded = false
            while end < count {
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
                let keyEnd = equals < 0 ? end : equals
                let valueStart = equals < 0 ? end : equals + 1
                let key = keyEncoded ? decode(&bytes, start, keyEnd) : start..<keyEnd
                let value = valueEncoded ? decode(&bytes, valueStart, end) : valueStart..<end
                pairs.append(
                    Pair(
                        keyStart: Int32(key.lowerBound),
                        keyEnd: Int32(key.upperBound),
                        valueStart: Int32(value.lowerBound),
                        valueEnd: Int32(value.upperBound)
                    )
                )
            }
            start = end + 1
        }
        return pairs
    }

    /// Decodes `bytes[start..<end]` onto the end of `bytes`; answers where the decoded bytes are.
    private static func decode(_ bytes: inout [UInt8], _ start: Int, _ end: Int) -> Range<Int> {
        let decoded = Array(Self.decoded(String(decoding: bytes[start..<end], as: UTF8.self)[...]).utf8)
        let at = bytes.count
        bytes.append(contentsOf: decoded)
        return at..<bytes.count
    }

    /// `+` as a space, then percent-decoded as the WHATWG URL standard decodes forms (and as browsers, Python's
    /// `unquote_plus` and the HTTP client libraries do): a `%` without two hex digits after it stays as it is, and
    /// decoded bytes that are not UTF-8 become U+FFFD.
    public static func decoded(_ text: Substring) -> Substring {
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

    /// The index of the last pair whose key is `name`.
    private func lastPair(named name: String) -> Int? {
        if let found = name.utf8.withContiguousStorageIfAvailable({ lastPair(named: $0) }) { return found }
        var name = name
        return name.withUTF8 { lastPair(named: $0) }
    }

    private func lastPair(named wanted: UnsafeBufferPointer<UInt8>) -> Int? {
        bytes.withUnsafeBufferPointer { bytes in
            for i in pairs.indices.reversed() {
                let pair = pairs[i]
                let count = Int(pair.keyEnd - pair.keyStart)
                if count == wanted.count && (count == 0 || memcmp(bytes.baseAddress! + Int(pair.keyStart), wanted.baseAddress!, count) == 0) {
                    return i
                }
            }
            return nil
        }
    }

    private func text(_ start: Int32, _ end: Int32) -> Substring {
        Substring(String(decoding: bytes[Int(start)..<Int(end)], as: UTF8.self))
    }

    public func lastValue(of name: String) -> Substring? {
        lastPair(named: name).map { text(pairs[$0].valueStart, pairs[$0].valueEnd) }
    }

    public func withLastValue(of name: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        guard let i = lastPair(named: name) else { return false }
        let pair = pairs[i]
        bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[Int(pair.valueStart)..<Int(pair.valueEnd)])) }
        return true
    }

    public func makeIterator() -> some IteratorProtocol<(key: Substring, value: Substring)> {
        pairs.lazy.map { (key: text($0.keyStart, $0.keyEnd), value: text($0.valueStart, $0.valueEnd)) }.makeIterator()
    }
}

public typealias QueryParameters = RequestParameters<FormQuery>
