/// A JSON value read by `StrictJSON`.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// What a message calls a value of this kind ("a string", "true", …).
    public var kindDescription: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// Why a text is not JSON, and where (byte offset, 1-based line).
public struct JSONSyntaxError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public let offset: Int
    public let line: Int

    public var description: String { "\(reason) at line \(line), byte \(offset + 1)" }
}

/// RFC 8259 JSON and nothing more: no trailing commas, comments, single quotes, `NaN`/`Infinity`, leading zeros or
/// control characters in strings; unpaired surrogate escapes and invalid UTF-8 are errors; a key given twice in one
/// object is an error (RFC 8259 leaves its meaning open, so the server refuses to guess); numbers must fit a finite
/// Double. Foundation's `JSONSerialization` accepts several of these and turns `true` into a number, which let
/// `{"lat":1,"lon":1,}` create a pin.
public struct StrictJSON {
    public static let maximumDepth = 64

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The one value of `bytes` (surrounded by optional whitespace).
    public static func parse<C: Collection<UInt8>>(_ bytes: C) throws(JSONSyntaxError) -> JSONValue {
        var parser = StrictJSON(Array(bytes))
        if parser.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { throw parser.error("a byte order mark before the value") }
        parser.skipWhitespace()
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.error("unexpected text after the value") }
        return value
    }

    private func error(_ reason: String) -> JSONSyntaxError {
        let end = min(index, bytes.count)
        let line = 1 + bytes[0..<end].lazy.filter { $0 == UInt8(ascii: "\n") }.count
        return JSONSyntaxError(reason: reason, offset: index, line: line)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    private mutating func expect(_ literal: StaticString, _ value: JSONValue) throws(JSONSyntaxError) -> JSONValue {
        let text = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        guard index + text.count <= bytes.count, bytes[index..<index + text.count].elementsEqual(text) else {
            throw error("unexpected character")
        }
        index += text.count
        return value
    }

    private mutating func value() throws(JSONSyntaxError) -> JSONValue {
        guard let byte = current else { throw error("unexpected end of text") }
        switch byte {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw error("unexpected character")
        }
    }

    private mutating func nest() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw error("nested deeper than \(Self.maximumDepth) levels") }
    }

    private mutating func object() throws(JSONSyntaxError) -> JSONValue {
        try nest()
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else {
                throw error(current == UInt8(ascii: "}") ? "a trailing comma in an object" : "expected a string key")
            }
            let keyStart = index
            let key = try string()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':' after a key") }
            index += 1
            skipWhitespace()
            let member = try value()
            guard members.updateValue(member, forKey: key) == nil else {
                index = keyStart
                throw error("the key \"\(key.prefix(64))\" appears twice")
            }
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return .object(members)
            default: throw error("expected ',' or '}' in an object")
            }
        }
    }

    private mutating func array() throws(JSONSyntaxError) -> JSONValue {
        try nest()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            if current == UInt8(ascii: "]") { throw error("a trailing comma in an array") }
            elements.append(try value())
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(elements)
            default: throw error("expected ',' or ']' in an array")
            }
        }
    }

    private mutating func number() throws(JSONSyntaxError) -> Double {
        let start = index
        func isDigit(_ byte: UInt8?) -> Bool { byte.map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? false }
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
            if isDigit(current) { throw error("a number with a leading zero") }
        } else if isDigit(current) {
            while isDigit(current) { index += 1 }
        } else {
            throw error("expected digits in a number")
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard isDigit(current) else { throw error("expected digits after '.' in a number") }
            while isDigit(current) { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard isDigit(current) else { throw error("expected digits in a number's exponent") }
            while isDigit(current) { index += 1 }
        }
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)), value.isFinite else {
            index = start
            throw error("a number out of range")
        }
        return value
    }

    private mutating func string() throws(JSONSyntaxError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        let start = index
        var runStart = index
        func flushRun(_ parser: StrictJSON, to end: Int) throws(JSONSyntaxError) {
            guard runStart < end else { return }
            let run = parser.bytes[runStart..<end]
            guard let text = String(validating: run, as: UTF8.self) else { throw parser.error("invalid UTF-8 in a string") }
            scalars.append(contentsOf: text.unicodeScalars)
        }
        while true {
            guard let byte = current else { throw error("an unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                // No escape in it (most strings): the run is the string, made once (through the scalars view it was
                // 2.8 % of a pin write's CPU: RESULTS.md, "Pin writes: what the router's path costs").
                if runStart == start {
                    guard let text = String(validating: bytes[start..<index], as: UTF8.self) else { throw error("invalid UTF-8 in a string") }
                    index += 1
                    return text
                }
                try flushRun(self, to: index)
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flushRun(self, to: index)
                index += 1
                scalars.append(try escape())
                runStart = index
            case 0..<0x20:
                throw error("a control character in a string (escape it)")
            default:
                index += 1
            }
        }
    }

    private mutating func escape() throws(JSONSyntaxError) -> Unicode.Scalar {
        guard let byte = current else { throw error("an unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try hex4()
            if (0xD800...0xDBFF).contains(unit) {
                guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("an unpaired surrogate escape")
                }
                index += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("an unpaired surrogate escape") }
                return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(unit) else { throw error("an unpaired surrogate escape") }
            return scalar
        default:
            index -= 1
            throw error("an invalid escape")
        }
    }

    private mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("an incomplete \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("an invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}
