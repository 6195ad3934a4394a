import BundledData
import Foundation

/// Reading the `tags` column — a flat JSON object of strings — without Foundation's generic parser and the
/// dictionary down-cast, which were a tenth of start-up at 1 M POIs. Anything that is not a flat object of
/// strings is left to `JSONSerialization`.
public enum TagsJSON {
    /// Tags as a JSON object, keys sorted: the one form in which the record store keeps them and answers write them,
    /// so an answer written from the store's bytes equals one written from a record.
    public static func write(_ tags: [String: String], to json: inout JSONWriter) {
        json.beginObject()
        if tags.count == 1, let (key, value) = tags.first {
            json.field(text: key, value)
        } else if !tags.isEmpty {
            for key in tags.keys.sorted() { json.field(text: key, tags[key]!) }
        }
        json.endObject()
    }

    /// The tags as the stores keep them: a JSON object with sorted keys.
    /// The same bytes as `write` (Foundation's JSONSerialization, used before, cost 3 % of importing an extract).
    public static func encode(_ tags: [String: String]) -> String {
        if tags.isEmpty { return "{}" }
        var json = JSONWriter()
        write(tags, to: &json)
        return String(decoding: json.buffer, as: UTF8.self)
    }

    public static func decode(_ text: String) -> [String: String] {
        if text == "{}" { return [:] }
        var text = text
        if let tags = text.withUTF8({ parseFlatObject($0) }) { return tags }
        return (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: String] ?? [:]
    }

    /// `{"k":"v",...}` with standard escapes and no whitespace outside strings other than spaces; nil otherwise.
    static func parseFlatObject(_ bytes: UnsafeBufferPointer<UInt8>) -> [String: String]? {
        var i = 0
        func skipSpaces() { while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x09 || bytes[i] == 0x0D { i += 1 } }
        func expect(_ byte: UInt8) -> Bool {
            skipSpaces()
            guard i < bytes.count, bytes[i] == byte else { return false }
            i += 1
            return true
        }
        func string() -> String? {
            guard expect(UInt8(ascii: "\"")) else { return nil }
            // Most strings have no escape: made straight from the bytes between the quotes.
            let start = i
            while i < bytes.count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\"), bytes[i] >= 0x20 { i += 1 }
            if i < bytes.count, bytes[i] == UInt8(ascii: "\"") {
                i += 1
                return String(validating: UnsafeBufferPointer(rebasing: bytes[start..<(i - 1)]), as: UTF8.self)
            }
            var out = Array(bytes[start..<i])
            while i < bytes.count {
                let byte = bytes[i]
                i += 1
                switch byte {
                case UInt8(ascii: "\""): return String(validating: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard i < bytes.count else { return nil }
                    let escape = bytes[i]
                    i += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    default: return nil  // \u escapes and anything else: the generic parser
                    }
                case 0..<0x20: return nil
                default: out.append(byte)
                }
            }
            return nil
        }
        guard expect(UInt8(ascii: "{")) else { return nil }
        var result: [String: String] = [:]
        if expect(UInt8(ascii: "}")) {
            skipSpaces()
            return i == bytes.count ? result : nil
        }
        repeat {
            guard let key = string(), expect(UInt8(ascii: ":")), let value = string() else { return nil }
            result[key] = value
        } while expect(UInt8(ascii: ","))
        guard expect(UInt8(ascii: "}")) else { return nil }
        skipSpaces()
        return i == bytes.count ? result : nil
    }
}
