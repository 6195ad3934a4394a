import BundledData
import Foundation
import GeoCore
import TestSupport
import Testing

/// JSON strings: the writer scans eight bytes at a time for bytes to escape. Oracle: a byte-by-byte escaper written
/// from RFC 8259 §7, and JSONSerialization reading the output back to the original text, on random strings that mix
/// plain ASCII, the bytes to escape (controls, quote, backslash) at every offset and multi-byte UTF-8.
@Suite struct JSONWriterStringTests {
    /// RFC 8259 §7, one byte at a time: quote, backslash and controls escaped (the short forms where JSON has them).
    static func expected(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out += Array(#"\""#.utf8)
            case UInt8(ascii: "\\"): out += Array(#"\\"#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0..<0x20: out += Array(String(format: "\\u%04x", Int(byte)).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    @Test func stringsAreEscapedAsByteByByte() throws {
        let seed = testSeed("stringsAreEscapedAsByteByByte")
        var random = SplitMix64(seed: seed)
        let pieces: [String] = ["a", "Kahvila ", "\"", "\\", "\n", "\t", "\u{1}", "\u{1F}", " ", "~", "\u{7F}", "é", "北京", "😀", "/"]
        for _ in 0..<20_000 {
            var text = ""
            for _ in 0..<Int(random.next() % 40) { text += pieces[Int(random.next() % UInt64(pieces.count))] }
            var json = JSONWriter()
            json.string(text)
            let written = json.buffer
            #expect(written == Self.expected(Array(text.utf8)), "SEED=\(seed) text \(text.debugDescription)")
            let decoded = try JSONSerialization.jsonObject(with: Data(written), options: .fragmentsAllowed) as? String
            #expect(decoded == text, "SEED=\(seed) text \(text.debugDescription)")
        }
    }

    /// Every byte value at every offset of a 24-byte run (three words and their boundaries).
    @Test func everyByteAtEveryOffset() {
        for byte in UInt8(0)...UInt8(0x7F) {
            for offset in 0..<24 {
                var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: 24)
                bytes[offset] = byte
                var json = JSONWriter()
                bytes.withUnsafeBufferPointer { json.string(utf8: $0) }
                #expect(json.buffer == Self.expected(bytes), "byte \(byte) at \(offset)")
            }
        }
    }
}
