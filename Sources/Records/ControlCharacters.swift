extension StringProtocol {
    /// Whether it holds a control character (general category Cc: U+0000–U+001F, U+007F–U+009F), the rule every
    /// record text and id is checked against. ASCII is answered from the bytes: the scalar property tables cost 1.3 %
    /// of a pin write's CPU when every character went through them (benchmarks/RESULTS.md, "Live areas: events in
    /// segment files").
    public var containsControlCharacter: Bool {
        var ascii = true
        for byte in utf8 {
            if byte < 0x20 || byte == 0x7F { return true }
            if byte >= 0x80 { ascii = false }
        }
        // Beyond ASCII only U+0080–U+009F are Cc: in UTF-8, 0xC2 followed by 0x80–0x9F.
        guard !ascii else { return false }
        var previous: UInt8 = 0
        for byte in utf8 {
            if previous == 0xC2, (0x80...0x9F).contains(byte) { return true }
            previous = byte
        }
        return false
    }
}
