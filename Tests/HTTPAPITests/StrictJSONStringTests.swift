import BundledData
import Foundation
import GeoCore
import TestSupport
import Testing

/// `StrictJSON`'s strings: a string with no escape is made from its bytes at once, one with escapes piece by piece;
/// both must read back what was written, and invalid UTF-8 is refused either way.
@Suite struct StrictJSONStringTests {
    @Test func drawnStringsReadBackAsWritten() throws {
        var random = testRandom("drawnStringsReadBackAsWritten")
        // (what the text holds, how JSON writes it)
        let pieces: [(String, String)] = [
            ("a", "a"), ("Kahvila", "Kahvila"), (" ", " "), ("é", "é"), ("北京", "北京"), ("😀", "😀"), ("\"", "\\\""), ("\\", "\\\\"),
            ("/", "\\/"), ("\n", "\\n"), ("\t", "\\t"), ("é", "\\u00e9"), ("😀", "\\ud83d\\ude00"), ("\u{1F}", "\\u001f"),
        ]
        for _ in 0..<5_000 {
            var text = ""
            var json = "\""
            for _ in 0..<Int(random.next() % 6) {
                let (plain, written) = pieces[Int(random.next() % UInt64(pieces.count))]
                text += plain
                json += written
            }
            json += "\""
            #expect(try StrictJSON.parse(Array(json.utf8)) == .string(text), "\(json)")
        }
    }

    @Test(arguments: [[0x22, 0xFF, 0x22], [0x22, 0x61, 0xC3, 0x22], [0x22, 0x5C, 0x6E, 0xC3, 0x28, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22]])
    func invalidUTF8IsRefused(bytes: [UInt8]) {
        #expect(throws: JSONSyntaxError.self) { try StrictJSON.parse(bytes) }
    }
}
