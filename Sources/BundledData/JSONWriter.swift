/// A minimal streaming JSON writer (RFC 8259) into a byte buffer: strings escaped, numbers in Swift's shortest
/// round-trip form. Used where JSONEncoder's per-record cost matters (bulk output).
public struct JSONWriter {
    public var buffer: [UInt8]
    private var needsComma = false

    public init(buffer: [UInt8] = []) { self.buffer = buffer }

    public mutating func beginObject() {
        separator()
        buffer.append(UInt8(ascii: "{"))
        needsComma = false
    }

    public mutating func endObject() {
        buffer.append(UInt8(ascii: "}"))
        needsComma = true
    }

    public mutating func beginArray() {
        separator()
        buffer.append(UInt8(ascii: "["))
        needsComma = false
    }

    public mutating func endArray() {
        buffer.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// `"key":` for a key written in the source: no escaping needed (checked in debug builds), no scan.
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
    public mutating func key(text key: String) {
        string(key)
        buffer.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// `"key":"value"`.
    public mutating func field(_ key: StaticString, _ value: String) {
        self.key(key)
        string(value)
    }

    /// `"key":"value"` with a key that comes from data.
    public mutating func field(text key: String, _ value: String) {
        self.key(text: key)
        string(value)
    }

    public mutating func null() {
        separator()
        buffer.append(contentsOf: "null".utf8)
        needsComma = true
    }

    public mutating func bool(_ value: Bool) {
        separator()
        buffer.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    /// Finite numbers only; non-finite values are written as null (JSON has no NaN).
    public mutating func number(_ value: Double) {
        separator()
        if !value.isFinite {
            buffer.append(contentsOf: "null".utf8)
        } else if value == value.rounded(), abs(value) < 1e15 {
            appendDigits(Int64(value))
        } else {
            buffer.append(contentsOf: value.description.utf8)
        }
        needsComma = true
    }

    public mutating func number(_ value: Int) {
        separator()
        appendDigits(Int64(value))
        needsComma = true
    }

    /// Decimal digits without going through a String.
    private mutating func appendDigits(_ value: Int64) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        if magnitude < 10 {
            buffer.append(UInt8(ascii: "0") &+ UInt8(magnitude))
            return
        }
        let start = buffer.count
        while magnitude > 0 {
            buffer.append(UInt8(ascii: "0") &+ UInt8(magnitude % 10))
            magnitude /= 10
        }
        buffer[start...].reverse()
    }

    public mutating func string(_ value: String) {
        // Native strings are contiguous UTF-8: written from their storage, without a copy.
        if value.utf8.withContiguousStorageIfAvailable({ string(utf8: $0) }) != nil { return }
        var value = value
        value.withUTF8 { string(utf8: $0) }
    }

    /// A string given as UTF-8 bytes.
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
    public mutating func raw(_ json: some Collection<UInt8>) {
        separator()
        buffer.append(contentsOf: json)
        needsComma = true
    }

    /// Control characters, the quote and the backslash (RFC 8259 §7).
    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") }

    private mutating func appendEscaped(_ byte: UInt8) {
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

    private mutating func separator() {
        if needsComma { buffer.append(UInt8(ascii: ",")) }
    }
}
