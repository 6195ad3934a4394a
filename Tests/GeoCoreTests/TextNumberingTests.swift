import GeoCore
import TestSupport
import Testing

/// The open-addressing text table against a dictionary of UTF-8 bytes: the same numbers, in the order first met.
@Suite struct TextNumberingTests {
    @Test func numbersTextsAsADictionaryOfTheirBytesWould() {
        var random = testRandom("numbersTextsAsADictionaryOfTheirBytesWould")
        // Few and many distinct texts (the table grows many times); empty, Latin, Chinese and long texts; "é" written
        // precomposed and decomposed, which Swift's `==` calls equal and the table keeps apart.
        let fixed = ["", "Mannerheimintie", "Mannerheimvägen", "中关村大街", "\u{E9}", "e\u{301}", String(repeating: "Bulevardi ", count: 20)]
        for distinct in [1, 7, 100, 5_000] {
            var numbering = TextNumbering()
            // The same texts through a field's recent text: the same numbers.
            var throughRecent = TextNumbering()
            var recent = TextNumbering.Recent()
            var oracle: [[UInt8]: UInt32] = [:]
            var order: [String] = []
            for _ in 0..<(distinct * 4) {
                let k = Int(random.next() % UInt64(distinct + fixed.count))
                let text = k < fixed.count ? fixed[k] : "Katu \(k)"
                let expected = oracle[Array(text.utf8)] ?? UInt32(oracle.count + 1)
                if oracle[Array(text.utf8)] == nil {
                    oracle[Array(text.utf8)] = expected
                    order.append(text)
                }
                #expect(numbering.number(text) == expected, "\(text) among \(distinct)")
                #expect(throughRecent.number(text, recent: &recent) == expected, "\(text) among \(distinct), through the recent text")
            }
            #expect(numbering.texts.map { Array($0.utf8) } == order.map { Array($0.utf8) })
        }
        // One after the other through a recent text, "é" and "e\u{301}" are still two texts.
        var numbering = TextNumbering()
        var recent = TextNumbering.Recent()
        #expect(numbering.number("\u{E9}", recent: &recent) != numbering.number("e\u{301}", recent: &recent))
        #expect(TextNumbering.sameBytes("\u{E9}", "e\u{301}") == false)
        #expect(TextNumbering.sameBytes("", ""))
        #expect(TextNumbering.sameBytes("Katu 1", "Katu 1"))
    }
}
