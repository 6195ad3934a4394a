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

    public mutating func key(_ key: String) {
        string(key)
        buffer.append(UInt8(ascii: ":"))
        needsComma = false
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
            buffer.append(contentsOf: String(Int64(value)).utf8)
        } else {
            buffer.append(contentsOf: value.description.utf8)
        }
        needsComma = true
    }

    public mutating func number(_ value: Int) {
        separator()
        buffer.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    public mutating func string(_ value: String) {
        separator()
        buffer.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): buffer.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): buffer.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: buffer.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: buffer.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: buffer.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                buffer.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: buffer.append(byte)
            }
        }
        buffer.append(UInt8(ascii: "\""))
        needsComma = true
    }

    private mutating func separator() {
        if needsComma { buffer.append(UInt8(ascii: ",")) }
    }
}
