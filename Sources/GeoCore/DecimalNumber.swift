/// Numbers as people and URLs write them: an optional sign, decimal digits with an optional fraction, and an
/// optional decimal exponent (`-122.08`, `.5`, `3e5`). Swift's `Double(_:)` also reads hexadecimal (`0x10` is 16),
/// `inf`, `nan` and `infinity`, none of which is a coordinate, a radius or a limit — so every parameter that takes a
/// number reads it through here, and a value out of `Double`'s range is not a number either.
public enum DecimalNumber {
    /// The value of `text`, or nil when it is not a finite decimal number. Surrounding spaces are not allowed here;
    /// trim first where they are.
    @_specialize(exported:true,where S == Substring)
    @_specialize(exported:true,where S == String)
    public static func parse<S: StringProtocol>(_ text: S) -> Double? {
        // Read over contiguous bytes where the text has them (a query string's values do): indexing a substring's
        // UTF-8 view byte by byte costs more than the rest of the parse.
        if let value = text.utf8.withContiguousStorageIfAvailable({ parse(utf8: $0) }) { return value }
        var text = String(text)
        return text.withUTF8 { parse(utf8: $0) }
    }

    /// `parse` over UTF-8 bytes (a request's query string): the same answers, without making a string unless the
    /// number is not a plain decimal.
    public static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        // Most numbers in requests are plain decimals of at most 15 digits: read without strtod.
        if let plain = plainDecimal(bytes) { return plain }
        guard isDecimal(bytes), let value = Double(String(decoding: bytes, as: UTF8.self)), value.isFinite else { return nil }
        return value
    }

    /// `parseInteger` over UTF-8 bytes: an optional sign and decimal digits whose value fits in an `Int`.
    public static func parseInteger(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        var negative = false
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            i = 1
        }
        guard i < bytes.count else { return nil }
        // Accumulated negatively, so that Int.min is read as well.
        var value = 0
        while i < bytes.count {
            let digit = bytes[i] &- UInt8(ascii: "0")
            guard digit <= 9 else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = times10.subtractingReportingOverflow(Int(digit))
            guard !overflow1, !overflow2 else { return nil }
            value = next
            i += 1
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    /// `[+-]? digits [. digits]` (or `[+-]? . digits`) with at most 15 digits in all, as the double nearest its
    /// value — what `Double(_:)` answers — or nil for any other form. With at most 15 digits the digits as an
    /// integer and the power of ten are both exact doubles, and one correctly rounded division gives the nearest
    /// double to their quotient (Clinger's fast path).
    static func plainDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var i = 0
        var negative = false
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") {
            negative = bytes[i] == UInt8(ascii: "-")
            i += 1
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        var sawPoint = false
        while i < bytes.count {
            let byte = bytes[i]
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                mantissa = mantissa &* 10 &+ UInt64(byte &- UInt8(ascii: "0"))
                digits += 1
                if sawPoint { fractionDigits += 1 }
            } else if byte == UInt8(ascii: "."), !sawPoint {
                sawPoint = true
            } else {
                return nil
            }
            i += 1
        }
        guard digits > 0, digits <= 15 else { return nil }
        let value = Double(mantissa) / powersOfTen[fractionDigits]
        return negative ? -value : value
    }

    private static let powersOfTen: [Double] = (0...15).map { exponent in (0..<exponent).reduce(1.0) { product, _ in product * 10 } }

    /// An integer in decimal digits with an optional sign (no `+0x1`, no `1e3`, no `1.0`).
    @_specialize(exported:true,where S == Substring)
    public static func parseInteger<S: StringProtocol>(_ text: S) -> Int? {
        if let value = text.utf8.withContiguousStorageIfAvailable({ parseInteger(utf8: $0) }) { return value }
        var text = String(text)
        return text.withUTF8 { parseInteger(utf8: $0) }
    }

    /// `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`
    static func isDecimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
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
