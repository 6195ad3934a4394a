#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Distinct texts numbered 1, 2, … in the order they are first met, for the columns an import builds (the houses'
/// streets, places, house numbers, postcodes and cities): millions of lookups of a few hundred thousand texts.
///
/// An open-addressing table of the texts' hashes (eight bytes a step, seeded per table), probed linearly, instead of a
/// `[String: UInt32]`, whose SipHash of every key was a fifth of building an address index of 2.3 M houses. Equal
/// hashes are told apart by comparing the texts.
///
/// Texts are the same when their UTF-8 bytes are (`sameBytes`), not when Swift's `==` says so: "é" and "e\u{301}" are
/// two texts, each kept as it was written.
public struct TextNumbering: Sendable {
    /// The texts in the order numbered: number `n` is `texts[n - 1]`.
    public private(set) var texts: [String] = []
    private var hashes: [UInt64] = []
    /// A text's number, or 0 for an empty slot; a power of two long, at most half full.
    private var slots: [UInt32]

    public init() { slots = [UInt32](repeating: 0, count: 64) }

    /// The number of `text`, numbering it when it is new.
    public mutating func number(_ text: String) -> UInt32 {
        let hash = Self.hash(text, seed: seed)
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] != 0 {
            let n = Int(slots[slot])
            if hashes[n - 1] == hash && Self.sameBytes(texts[n - 1], text) { return UInt32(n) }
            slot = (slot + 1) & mask
        }
        texts.append(text)
        hashes.append(hash)
        let number = UInt32(texts.count)
        slots[slot] = number
        if texts.count * 2 > slots.count { grow() }
        return number
    }

    /// The text last numbered for one field of a run of records (a street, a city), which neighbouring records
    /// usually repeat: compared before the table is looked in.
    public struct Recent: Sendable {
        var text = ""
        var number: UInt32 = 0

        public init() {}

        init(text: String, number: UInt32) { (self.text, self.number) = (text, number) }
    }

    /// The number of `text`, compared first with the field's `recent` text, which then becomes it.
    public mutating func number(_ text: String, recent: inout Recent) -> UInt32 {
        if recent.number != 0 && Self.sameBytes(recent.text, text) { return recent.number }
        recent = Recent(text: text, number: number(text))
        return recent.number
    }

    /// Seeded per table, so that texts chosen to collide in one run do not in another.
    private let seed = UInt64.random(in: .min ... .max)

    /// A hash of the text's UTF-8 bytes, eight at a time: a multiply and a shift each.
    static func hash(_ text: String, seed: UInt64) -> UInt64 {
        func mix(_ h: UInt64, _ word: UInt64) -> UInt64 {
            let m = (h ^ word) &* 0x9E37_79B9_7F4A_7C15
            return m ^ (m >> 29)
        }
        let hashed = text.utf8.withContiguousStorageIfAvailable { bytes -> UInt64 in
            var h = mix(seed, UInt64(bytes.count))
            var i = 0
            let raw = UnsafeRawBufferPointer(bytes)
            while i + 8 <= bytes.count {
                h = mix(h, UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
                i += 8
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while i < bytes.count {
                tail |= UInt64(bytes[i]) << shift
                shift += 8
                i += 1
            }
            return mix(h, tail)
        }
        if let hashed { return hashed }
        var copy = text
        copy.makeContiguousUTF8()
        return hash(copy, seed: seed)
    }

    /// Whether two texts have the same UTF-8 bytes.
    public static func sameBytes(_ a: String, _ b: String) -> Bool {
        let count = a.utf8.count
        guard count == b.utf8.count else { return false }
        guard count > 0 else { return true }
        // Texts of one source often share their storage (a block's street, a tag value): the same bytes without a look.
        let same = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in x.baseAddress == y.baseAddress || memcmp(x.baseAddress!, y.baseAddress!, count) == 0 }
        }
        if let same, let same { return same }
        return a.utf8.elementsEqual(b.utf8)
    }

    /// Doubles the table and files every text again.
    private mutating func grow() {
        slots = [UInt32](repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for (i, hash) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = UInt32(i + 1)
        }
    }
}
