import Foundation
import GeoCore
import TestSupport
import Testing

@testable import HTTPAPI

/// A record's `{id}` is percent-decoded from its bytes (`RecordController.percentDecoded`), not through Foundation.
/// Foundation's `removingPercentEncoding` is the oracle on every drawn text, but for one quirk: on Linux it turns some
/// bytes that are not UTF-8 into U+FFFD (`%A9`) where it refuses others (`%80`); the decoder refuses them all.
@Suite struct PathDecodingTests {
    @Test func theBytesDecoderAgreesWithFoundationOnDrawnSegments() {
        var random = testRandom("theBytesDecoderAgreesWithFoundationOnDrawnSegments")
        // What a path segment can hold: plain and reserved characters, `%` with good and bad hex after it, the
        // percent-encoded bytes of UTF-8 (lead, continuation, overlong and surrogate forms), and text beyond ASCII.
        let pieces = [
            "a", "Z", "0", "+", "-", "_", ".", "~", "!", "é", "北", "😀", "%", "%2", "%2B", "%2b", "%20", "%41", "%zz", "%G1", "%1g",
            "%00", "%7F", "%C3", "%A9", "%C3%A9", "%E5%8C%97", "%F0%9F%98%80", "%C0%AF", "%ED%A0%80", "%FF", "%80", "%e5%8c", "%%",
        ]
        for _ in 0..<20_000 {
            let count = Int(random.next() % 8)
            var text = ""
            for _ in 0..<count { text += pieces[Int(random.next() % UInt64(pieces.count))] }
            var expected = text.removingPercentEncoding
            if expected?.unicodeScalars.contains("\u{FFFD}") == true { expected = nil }  // no piece holds U+FFFD itself
            #expect(RecordController.percentDecoded(text[...]) == expected, "\(text.debugDescription)")
        }
    }

    @Test(arguments: [
        ("abc", "abc"), ("a+b", "a+b"), ("a%20b", "a b"), ("%E5%8C%97%E4%BA%AC", "北京"), ("", ""),
    ])
    func decodesAsAPathSegment(raw: String, decoded: String) {
        #expect(RecordController.percentDecoded(raw[...]) == decoded)
    }

    @Test(arguments: ["%", "%4", "a%zz", "%G1", "%%41", "%C3", "%FF", "%80", "%A9", "%C0%AF", "%ED%A0%80"])
    func refusesWhatIsNotPercentEncodedUTF8(raw: String) {
        #expect(RecordController.percentDecoded(raw[...]) == nil)
    }
}
