/// A minimal streaming JSON writer (RFC 8259) into a byte buffer: strings escaped, numbers in Swift's shortest
/// round-trip form. Used where JSONEncoder's per-record cost matters (bulk output, every API answer).
///
/// The small writers are `@inlinable`: each API answer calls them a few hundred times from another module, and
/// inlined into the caller they cost a fraction of a call each (issue 17, `poi bench wire`).
public struct JSONWriter {
    public var buffer: [UInt8]
    @usableFromInline var needsComma = false

    public init(buffer: [UInt8] = []) { self.buffer = buffer }

    @inlinable
    public mutating func beginObject() {
        separator()
        buffer.append(UInt8(ascii: "{"))
        needsComma = false
    }

    @inlinable
    public mutating func endObject() {
        buffer.append(UInt8(ascii: "}"))
        needsComma = true
    }

    @inlinable
    public mutating func beginArray() {
        separator()
        buffer.append(UInt8(ascii: "["))
        needsComma = false
    }

    @inlinable
    public mutating func endArray() {
        buffer.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// `"key":` for a key written in the source: no escaping needed (checked in debug builds), no scan.
    @inlinable
    public mutating func key(_ key: StaticString) {
        separator()
        buffer.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes in
            assert(!bytes.contains(where: Self.needsEscape), "key needs escaping")
            buffer.append(contentsOf: bytes)
        }
        buffer.append(UInt8(ascii: "\""))
        buffer.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// `"key":` for a key that comes from data, escaped.
    @inlinable
    public mutating func key(text key: String) {
        string(key)
        buffer.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// `"key":"value"`.
    @inlinable
    public mutating func field(_ key: StaticString, _ value: String) {
        self.key(key)
        string(value)
    }

    /// `"key":"value"` with a key that comes from data.
    @inlinable
    public mutating func field(text key: String, _ value: String) {
        self.key(text: key)
        string(value)
    }

    @inlinable
    public mutating func null() {
        separator()
        buffer.append(contentsOf: "null".utf8)
        needsComma = true
    }

    @inlinable
    public mutating func bool(_ value: Bool) {
        separator()
        buffer.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    /// Finite numbers only; non-finite values are written as null (JSON has no NaN).
    @inlinable
    public mutating func number(_ value: Double) {
        separator()
        if !value.isFinite {
            buffer.append(contentsOf: "null".utf8)
        } else if value == value.rounded(), abs(value) < 1e15 {
            appendDigits(Int64(value))
        } else if !appendFixedPoint(value) {
            buffer.append(contentsOf: value.description.utf8)
        }
        needsComma = true
    }

    @inlinable
    public mutating func number(_ value: Int) {
        separator()
        appendDigits(Int64(value))
        needsComma = true
    }

    /// Writes `value` as `description` would when it is the double nearest a decimal of at most 7 fractional digits
    /// (coordinates, distances to 0.1 m, scores to 0.001), without formatting through a String; false (and nothing
    /// written) otherwise. Below 1e8 two such decimals are further apart than the rounding interval of any double
    /// there (≤ 1.5e-8), so that decimal, trailing zeros dropped, is the shortest that reads back as `value`: the
    /// digits `description` prints. Below 1e-4 `description` switches to exponent form, so those are left to it.
    @usableFromInline mutating func appendFixedPoint(_ value: Double) -> Bool {
        let magnitude = abs(value)
        guard magnitude >= 1e-4, magnitude < 1e8 else { return false }
        let scaled = (value * 1e7).rounded()
        guard scaled / 1e7 == value else { return false }
        let units = Int64(scaled).magnitude
        var fraction = units % 10_000_000
        var fractionDigits = 7
        while fraction % 10 == 0 {
            fraction /= 10
            fractionDigits -= 1
        }
        // Built right to left in a stack buffer, then appended at once: sign, integer digits, point, fraction.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { digits in
            var start = digits.count
            for _ in 0..<fractionDigits {
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(fraction % 10)
                fraction /= 10
            }
            start -= 1
            digits[start] = UInt8(ascii: ".")
            start = DecimalDigits.write(units / 10_000_000, endingAt: start, in: digits)
            if value < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
        return true
    }

    /// Decimal digits without going through a String, appended at once.
    @usableFromInline mutating func appendDigits(_ value: Int64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { digits in
            var start = DecimalDigits.write(value.magnitude, endingAt: digits.count, in: digits)
            if value < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    @inlinable
    public mutating func string(_ value: String) {
        // Native strings are contiguous UTF-8: written from their storage, without a copy.
        if value.utf8.withContiguousStorageIfAvailable({ string(utf8: $0) }) != nil { return }
        var value = value
        value.withUTF8 { string(utf8: $0) }
    }

    /// A string given as UTF-8 bytes.
    @inlinable
    public mutating func string(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        separator()
        buffer.append(UInt8(ascii: "\""))
        // Runs of bytes that need no escaping are copied at once.
        var runStart = 0
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            if Self.needsEscape(byte) {
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                appendEscaped(byte)
                runStart = i + 1
            }
            i += 1
        }
        buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        buffer.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// A value that is already JSON (the caller vouches for it), written as it is.
    @inlinable
    public mutating func raw(_ json: some Collection<UInt8>) {
        separator()
        buffer.append(contentsOf: json)
        needsComma = true
    }

    /// Control characters, the quote and the backslash (RFC 8259 §7).
    @inlinable @inline(__always)
    static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }

    @usableFromInline mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): buffer.append(contentsOf: [0x5C, 0x22])
        case UInt8(ascii: "\\"): buffer.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: buffer.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0D: buffer.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x09: buffer.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        default:
            let hex = Array("0123456789abcdef".utf8)
            buffer.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }

    @inlinable
    mutating func separator() {
        if needsComma { buffer.append(UInt8(ascii: ",")) }
    }
}

/// Decimal digits written right to left into a caller's buffer, for writers that append a number at once.
public enum DecimalDigits {
    /// Writes `value`'s digits to end just before `end`; answers where they start.
    @inlinable
    public static func write(_ value: UInt64, endingAt end: Int, in buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var rest = value
        var start = end
        repeat {
            start -= 1
            buffer[start] = UInt8(ascii: "0") &+ UInt8(rest % 10)
            rest /= 10
        } while rest > 0
        return start
    }
}
