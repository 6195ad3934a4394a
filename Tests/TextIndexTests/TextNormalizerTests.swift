import Testing
import TextIndex

@Suite struct TextNormalizerTests {
    @Test(arguments: [
        ("São Paulo", "sao paulo"),
        ("Zürich", "zurich"),
        ("ＡＢＣ１２３", "abc123"),
        ("Straße", "strasse"),
        ("Łódź", "lodz"),
        ("Ærø", "aero"),
        ("  Springfield,   IL ", "springfield il"),
        ("北京市海淀区", "北京市海淀区"),
        ("Café—Bar!!", "cafe bar"),
        ("İstanbul", "istanbul"),
        ("Hà Nội", "ha noi"),
        ("\u{0007}bell\ttab", "bell tab"),
        // "'s" after a letter is dropped; other apostrophes split words as before.
        ("McDonald's", "mcdonald"),
        ("Domino’s Pizza", "domino pizza"),
        ("Dubois's Café", "dubois cafe"),
        ("It's", "it"),
        ("Côte d'Ivoire", "cote d ivoire"),
        ("rock 'n' roll", "rock n roll"),
        ("Bob'sled", "bob sled"),
        ("5's", "5 s"),
        ("'s", "s"),
    ])
    func normalizes(_ input: String, _ expected: String) {
        #expect(TextNormalizer.normalize(input) == expected)
    }

    @Test func tokenizesLatinWordsAndCJKGrams() {
        let tokens = Tokenizer.tokens("星巴克咖啡(中关村店) Cafe").map(\.text)
        #expect(tokens.contains("咖啡"))
        #expect(tokens.contains("星"))
        #expect(tokens.contains("中关"))
        #expect(tokens.contains("cafe"))
        #expect(!tokens.contains("("))
        #expect(Tokenizer.tokens("理工大学").map(\.text) == ["理", "理工", "工", "工大", "大", "大学", "学"])
    }

    @Test func boundedEditDistance() {
        func d(_ a: String, _ b: String, _ limit: Int) -> Int? {
            EditDistance.within(Array(a.unicodeScalars), Array(b.unicodeScalars), limit: limit)
        }
        #expect(d("helsinki", "helsinky", 1) == 1)
        #expect(d("helsinki", "hlesinki", 1) == 1)  // transposition
        #expect(d("helsinki", "helsnki", 1) == 1)
        #expect(d("helsinki", "hel", 2) == nil)
        #expect(d("kitten", "sitting", 3) == 3)
        #expect(d("kitten", "sitting", 2) == nil)
        #expect(d("", "ab", 2) == 2)
        #expect(EditDistance.allowedTypos(length: 4) == 0)
        #expect(EditDistance.allowedTypos(length: 5) == 1)
        #expect(EditDistance.allowedTypos(length: 9) == 2)
    }
}
