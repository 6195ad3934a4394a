/// Numbers as people and URLs write them: an optional sign, decimal digits with an optional fraction, and an
/// optional decimal exponent (`-122.08`, `.5`, `3e5`). Swift's `Double(_:)` also reads hexadecimal (`0x10` is 16),
/// `inf`, `nan` and `infinity`, none of which is a coordinate, a radius or a limit — so every parameter that takes a
/// number reads it through here, and a value out of `Double`'s range is not a number either.
public enum DecimalNumber {
    /// The value of `text`, or nil when it is not a finite decimal number. Surrounding spaces are not allowed here;
    /// trim first where they are.
    public static func parse<S: StringProtocol>(_ text: S) -> Double? {
        // Checked over contiguous bytes where the text has them (a query string's values do): indexing a substring's
        // UTF-8 view byte by byte costs more than the rest of the parse.
        let decimal = text.utf8.withContiguousStorageIfAvailable { isDecimal($0) } ?? isDecimal(text.utf8)
        guard decimal, let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// An integer in decimal digits with an optional sign (no `+0x1`, no `1e3`, no `1.0`).
    public static func parseInteger<S: StringProtocol>(_ text: S) -> Int? {
        var bytes = Substring(text).utf8[...]
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Int(String(text))
    }

    /// `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`
    static func isDecimal<C: Collection<UInt8>>(_ bytes: C) -> Bool {
        var index = bytes.startIndex
        func peek() -> UInt8? { index < bytes.endIndex ? bytes[index] : nil }
        func digits() -> Int {
            var count = 0
            while let byte = peek(), byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                count += 1
                index = bytes.index(after: index)
            }
            return count
        }
        if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index = bytes.index(after: index) }
        var mantissa = digits()
        if peek() == UInt8(ascii: ".") {
            index = bytes.index(after: index)
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            index = bytes.index(after: index)
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index = bytes.index(after: index) }
            guard digits() > 0 else { return false }
        }
        return index == bytes.endIndex
    }
}
