/// Mandarin readings of Han characters, without tones, for finding Chinese names by their pinyin
/// (docs/ARCHITECTURE.md, "Type-ahead and pinyin").
///
/// Made from `data/pinyin.tsv.gz` (`data/prepare.py`): every character of pinyin-data with its readings, commonest
/// first, and every word of phrase-pinyin-data with the reading of each of its characters in that word. Syllables are
/// numbered in sorted order, so the syllables a typed prefix begins ("zh": zha … zhuo) are one range of numbers.
///
/// A polyphone is settled by the words that hold it: the readings of two neighbouring characters are those the
/// phrase table gives them where it has them together (银行 yin-hang, 重庆 chong-qing, and both of 朝阳's zhao-yang
/// and chao-yang, which the table lists); where no word holds the pair, every reading of each character counts.
public struct PinyinDictionary: Sendable {
    /// Toneless syllables ("a" … "zuo", ü written v), sorted.
    public let syllables: [String]
    let syllableIDs: [String: UInt16]
    /// Per character (scalar value): where its readings start in `readingList` and how many it has.
    let readingSlots: [UInt32: UInt32]
    let readingList: [UInt16]
    /// Readings of neighbouring characters in the phrase table: sorted keys (first scalar << 32 | second scalar) and,
    /// at the same index, one reading pair (first syllable << 16 | second); a pair read several ways has several rows.
    let pairKeys: [UInt64]
    let pairReadings: [UInt32]
    /// Phrases with the reading of each character (the phrase table's first), for reading a whole name.
    let phrases: [String: [UInt16]]
    let longestPhrase: Int

    /// Parses the table's rows: "c<TAB>字<TAB>zi,ci" and "p<TAB>词语<TAB>ci yu" (a character of a phrase read two
    /// ways there: "zhao|chao"). Malformed rows are refused with their line number (empty lines are not counted).
    public init(table: String) throws(PinyinTableError) {
        try self.init(tableBytes: Array(table.utf8))
    }

    /// `init(table:)` of the table's UTF-8 bytes. Rows and fields are cut as bytes (tab, newline, comma, space and bar
    /// are ASCII, never inside a multi-byte character): splitting the 1.6 MB table as `Character`s took ~0.45 s of a
    /// core at every start of a release build, beside the snapshots' loading.
    public init(tableBytes bytes: [UInt8]) throws(PinyinTableError) {
        var characters: [(UInt32, [String])] = []
        var phraseRows: [(String, [[String]])] = []
        var names = Set<String>()
        let (tab, newline, comma, space, bar) = (UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: ","), UInt8(ascii: " "), UInt8(ascii: "|"))
        /// Lowercase ASCII readings separated by `separator` (empty pieces skipped); nil when one is not.
        func readingTexts(_ field: ArraySlice<UInt8>, _ separator: UInt8) -> [String]? {
            var out: [String] = []
            for piece in field.split(separator: separator) {
                guard piece.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) else { return nil }
                out.append(String(decoding: piece, as: UTF8.self))
            }
            return out
        }
        var n = 0
        for line in bytes.split(separator: newline, omittingEmptySubsequences: true) {
            n += 1
            let fields = line.split(separator: tab, omittingEmptySubsequences: false)
            guard fields.count == 3 else { throw PinyinTableError(line: n, reason: "not three tab-separated fields") }
            let kind = fields[0]
            if kind.elementsEqual([UInt8(ascii: "c")]) {
                let scalars = Array(String(decoding: fields[1], as: UTF8.self).unicodeScalars)
                guard scalars.count == 1, let readings = readingTexts(fields[2], comma), !readings.isEmpty else {
                    throw PinyinTableError(line: n, reason: "a character row needs one character and lowercase readings")
                }
                characters.append((scalars[0].value, readings))
                names.formUnion(readings)
            } else if kind.elementsEqual([UInt8(ascii: "p")]) {
                let phrase = String(decoding: fields[1], as: UTF8.self)
                var parts: [[String]] = []
                for word in fields[2].split(separator: space) {
                    guard let readings = readingTexts(word, bar), !readings.isEmpty else {
                        throw PinyinTableError(line: n, reason: "a phrase row needs one reading per character")
                    }
                    parts.append(readings)
                }
                guard phrase.unicodeScalars.count == parts.count else {
                    throw PinyinTableError(line: n, reason: "a phrase row needs one reading per character")
                }
                phraseRows.append((phrase, parts))
                for part in parts { names.formUnion(part) }
            } else {
                throw PinyinTableError(line: n, reason: "unknown row kind \(String(decoding: kind, as: UTF8.self))")
            }
        }
        syllables = names.sorted()
        guard syllables.count < Int(UInt16.max) else { throw PinyinTableError(line: 0, reason: "too many syllables") }
        var ids: [String: UInt16] = [:]
        for (i, syllable) in syllables.enumerated() { ids[syllable] = UInt16(i) }
        syllableIDs = ids
        var slots: [UInt32: UInt32] = [:]
        var list: [UInt16] = []
        for (scalar, readings) in characters {
            slots[scalar] = UInt32(list.count) << 8 | UInt32(min(readings.count, 255))
            list += readings.prefix(255).map { ids[$0]! }
        }
        readingSlots = slots
        readingList = list
        var pairs: [(UInt64, UInt32)] = []
        var phraseTable: [String: [UInt16]] = [:]
        var longest = 1
        for (phrase, parts) in phraseRows {
            let scalars = Array(phrase.unicodeScalars)
            let readingIDs = parts.map { $0.map { ids[$0]! } }
            for i in 0..<(scalars.count - 1) {
                let key = UInt64(scalars[i].value) << 32 | UInt64(scalars[i + 1].value)
                for a in readingIDs[i] { for b in readingIDs[i + 1] { pairs.append((key, UInt32(a) << 16 | UInt32(b))) } }
            }
            phraseTable[phrase] = readingIDs.map { $0[0] }
            longest = max(longest, scalars.count)
        }
        pairs.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
        var uniqueKeys: [UInt64] = []
        var uniqueReadings: [UInt32] = []
        for (key, reading) in pairs where uniqueKeys.last != key || uniqueReadings.last != reading {
            uniqueKeys.append(key)
            uniqueReadings.append(reading)
        }
        pairKeys = uniqueKeys
        pairReadings = uniqueReadings
        phrases = phraseTable
        longestPhrase = longest
    }

    /// The syllable numbered `id`.
    public func syllable(_ id: UInt16) -> String { syllables[Int(id)] }

    /// The number of a toneless syllable ("lv" for 绿), if the table has it.
    public func syllableID(_ text: String) -> UInt16? { syllableIDs[text] }

    /// The syllables that begin with `prefix` (a typed initial "zh" or a syllable cut short "zhon"): one range,
    /// since syllables are numbered in sorted order; nil when none does.
    public func syllables(beginning prefix: String) -> ClosedRange<UInt16>? {
        var low = 0
        var high = syllables.count
        while low < high {
            let mid = (low + high) / 2
            if syllables[mid] < prefix { low = mid + 1 } else { high = mid }
        }
        var end = low
        while end < syllables.count && syllables[end].hasPrefix(prefix) { end += 1 }
        return end > low ? UInt16(low)...UInt16(end - 1) : nil
    }

    /// A character's readings, commonest first (empty for a character the table does not have).
    public func readings(of scalar: UInt32) -> ArraySlice<UInt16> {
        guard let slot = readingSlots[scalar] else { return [] }
        let start = Int(slot >> 8)
        return readingList[start..<(start + Int(slot & 0xFF))]
    }

    /// How two neighbouring characters read: `settled` are the readings the phrase table gives the pair; `others`
    /// the remaining combinations of the characters' own readings. Without the pair in the phrase table, every
    /// combination is settled ("index both readings"). Each reading is first syllable << 16 | second.
    public func pairReadings(_ first: UInt32, _ second: UInt32) -> (settled: [UInt32], others: [UInt32]) {
        let a = readings(of: first)
        let b = readings(of: second)
        var all: [UInt32] = []
        for x in a { for y in b { all.append(UInt32(x) << 16 | UInt32(y)) } }
        let key = UInt64(first) << 32 | UInt64(second)
        var low = 0
        var high = pairKeys.count
        while low < high {
            let mid = (low + high) / 2
            if pairKeys[mid] < key { low = mid + 1 } else { high = mid }
        }
        var settled: [UInt32] = []
        while low < pairKeys.count && pairKeys[low] == key {
            settled.append(pairReadings[low])
            low += 1
        }
        guard !settled.isEmpty else { return (all, []) }
        return (settled, all.filter { !settled.contains($0) })
    }

    /// The reading of each character of a text in context: words of the phrase table found longest first from the
    /// left (forward maximum matching, as pypinyin segments), each character of a word read as the word has it, any
    /// other character by its commonest reading. Characters the table does not have (Latin, digits) read as nil.
    public func reading(of text: String) -> [UInt16?] {
        let scalars = Array(text.unicodeScalars)
        var result: [UInt16?] = []
        result.reserveCapacity(scalars.count)
        var i = 0
        while i < scalars.count {
            var matched = false
            if readingSlots[scalars[i].value] != nil {
                var length = min(longestPhrase, scalars.count - i)
                while length >= 2 {
                    var word = String.UnicodeScalarView()
                    word.append(contentsOf: scalars[i..<(i + length)])
                    if let readings = phrases[String(word)] {
                        result += readings.map { Optional($0) }
                        i += length
                        matched = true
                        break
                    }
                    length -= 1
                }
            }
            if !matched {
                result.append(readings(of: scalars[i].value).first)
                i += 1
            }
        }
        return result
    }
}

extension PinyinDictionary {
    /// The first character of a run's full pinyin term ("\u{2}xingbake") and of its initials' ("\u{1}xbk"): a control
    /// character, which no typed word holds (`TextNormalizer` turns it into a space) and which sorts before letters.
    public static let fullMarker = "\u{2}"
    public static let initialsMarker = "\u{1}"
    /// The first character of a run's term of its first character as written and the rest in pinyin ("\u{3}星bake").
    public static let mixedMarker = "\u{3}"

    /// What a name's first run of Han reads as from its start, as index terms ("星巴克" of "星巴克(中关村店)": people
    /// type a name from its start; the rest of a name is found by the pinyin of its character pairs, a slower path):
    /// its full pinyin joined ("\u{2}xingbake") and, for a run of two or more, its initials
    /// ("\u{1}xbk") and its first character as written with the rest in pinyin ("\u{3}星bake", as people type with the
    /// first character picked and the rest in letters); read in context (`reading(of:)`) and, where that differs, with
    /// each character's commonest reading too. A query typed from a run's start matches one of them, or a completion of
    /// one, as a single term.
    public func runTerms(of text: String) -> [String] {
        var terms: [String] = []
        var run = String.UnicodeScalarView()
        func flush() {
            defer { run = String.UnicodeScalarView() }
            guard !run.isEmpty else { return }
            let inContext = reading(of: String(run))
            guard inContext.allSatisfy({ $0 != nil }) else { return }
            let commonest = run.map { readings(of: $0.value).first }
            for variant in [inContext.map { $0! }, commonest.map { $0! }] {
                let full = PinyinDictionary.fullMarker + variant.map { syllable($0) }.joined()
                if !terms.contains(full) { terms.append(full) }
                guard variant.count >= 2 else { continue }
                let initials = PinyinDictionary.initialsMarker + String(variant.map { syllable($0).first! })
                if !terms.contains(initials) { terms.append(initials) }
                var first = String.UnicodeScalarView()
                first.append(run[run.startIndex])
                let mixed = PinyinDictionary.mixedMarker + String(first) + variant.dropFirst().map { syllable($0) }.joined()
                if !terms.contains(mixed) { terms.append(mixed) }
            }
        }
        for scalar in text.unicodeScalars {
            if TextNormalizer.isCJK(scalar) {
                run.append(scalar)
            } else if !run.isEmpty {
                break
            }
        }
        flush()
        return terms
    }
}

/// A row of the pinyin table that cannot be read.
public struct PinyinTableError: Error, CustomStringConvertible {
    public let line: Int
    public let reason: String
    public var description: String { "pinyin table, line \(line): \(reason)" }
}
