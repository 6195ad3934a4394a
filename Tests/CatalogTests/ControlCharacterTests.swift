import Records
import Testing

/// `containsControlCharacter` answers as the Unicode property it stands for (general category Cc), for every scalar
/// alone and between other text, and for strings and substrings alike.
@Suite struct ControlCharacterTests {
    @Test func everyScalarIsAControlCharacterExactlyWhenItsCategoryIsCc() {
        var wrong: [UInt32] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let expected = scalar.properties.generalCategory == .control
            let alone = String(Character(scalar))
            let between = "aé" + alone + "漢z"
            if alone.containsControlCharacter != expected || between.containsControlCharacter != expected
                || between.dropFirst().containsControlCharacter != expected
            {
                wrong.append(value)
            }
        }
        #expect(wrong.isEmpty, "scalars answered wrongly: \(wrong.prefix(20).map { String($0, radix: 16) })")
        #expect(!"".containsControlCharacter)
        // A continuation byte of 0x80-0x9F after a lead byte other than 0xC2 is not a C1 control.
        #expect(!"\u{0400}\u{0480}\u{2080}".containsControlCharacter)
    }
}
