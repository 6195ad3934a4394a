/// A query read as pinyin: what each typed piece may be — a Han character as typed, a syllable in full ("ken"), an
/// initial ("k" of "kdj"), or the last syllable cut short as typed ("kend" → ken + d…) — in the order typed.
///
/// Forms read (docs/ARCHITECTURE.md, "Type-ahead and pinyin"): full pinyin with or without spaces or apostrophes
/// ("kendeji", "ken de ji", "xi'an"), initials ("kdj"), the last syllable as a prefix ("kend"), Han and pinyin mixed
/// ("肯de", "北京lg"), ü typed as v or u ("lvcha", "lucha"), tone digits after a syllable ("ken3de2ji1"). A run of
/// letters is read either as whole syllables (its last one may be cut short) or as initials, one letter each — not a
/// mix of the two, which would read most English words as pinyin ("restaurant": re-s-tau-r-an-t).
public struct PinyinQuery: Sendable, Equatable {
    public struct Unit: Sendable, Hashable {
        /// A Han character typed as it is (its scalar value); nil for a Latin piece.
        public var han: UInt32?
        /// The syllables a Latin piece may be (empty for a Han character).
        public var syllables: [ClosedRange<UInt16>]
        /// Of those, the syllables typed in full: a match through another is a completion.
        public var exact: [UInt16]
        /// Typed as an initial.
        public var isInitial: Bool

        public func allows(_ syllable: UInt16) -> Bool { syllables.contains { $0.contains(syllable) } }
    }

    /// The query's pieces in typed order, by space-separated word.
    public var words: [[Unit]]

    /// Every piece in order, the words run together ("ken de ji" is "kendeji").
    public var units: [Unit] { words.flatMap { $0 } }

    static let initials: Set<UInt8> = Set("bpmfdtnlgkhjqxrzcsywaeo".utf8)
    /// Syllables with no vowel (嗯 n, 呣 m, ng, hm): read as initials when typed, never as syllables.
    static let vowelless: Set<String> = ["m", "n", "ng", "hm", "hng", "r"]
    /// Alternative readings of a query: at most this many segmentations of the letters.
    public static let maxReadings = 3

    /// The readings of a normalized query as pinyin, best first; empty when it has no Latin letters, has other
    /// digits than tones, or its letters are not pinyin.
    public static func readings(of normalized: String, dictionary: PinyinDictionary) -> [PinyinQuery] {
        // Each word: its Han characters and runs of letters, tone digits dropped.
        enum Piece {
            case han(UInt32)
            case letters([UInt8])
        }
        var words: [[Piece]] = []
        for word in normalized.split(separator: " ") {
            var pieces: [Piece] = []
            var letters: [UInt8] = []
            for scalar in word.unicodeScalars {
                let v = scalar.value
                if v >= 0x61 && v <= 0x7A {
                    letters.append(UInt8(v))
                } else if v >= 0x31 && v <= 0x35 && !letters.isEmpty {
                    // A tone digit after a syllable ("ken3"): it ends the syllable.
                    pieces.append(.letters(letters))
                    letters = []
                } else if TextNormalizer.isCJK(scalar), !dictionary.readings(of: v).isEmpty {
                    if !letters.isEmpty { pieces.append(.letters(letters)) }
                    letters = []
                    pieces.append(.han(v))
                } else {
                    return []
                }
            }
            if !letters.isEmpty { pieces.append(.letters(letters)) }
            if !pieces.isEmpty { words.append(pieces) }
        }
        guard words.contains(where: { $0.contains { if case .letters = $0 { true } else { false } } }) else { return [] }
        // Per run of letters, its segmentations; the query's readings are their combinations, best first.
        var lastRun: (w: Int, p: Int)?
        for (w, pieces) in words.enumerated() {
            for (p, piece) in pieces.enumerated() { if case .letters = piece { lastRun = (w, p) } }
        }
        var options: [[[Unit]]] = []  // per run, its segmentations
        for (w, pieces) in words.enumerated() {
            for (p, piece) in pieces.enumerated() {
                guard case .letters(let letters) = piece else { continue }
                // Only the query's very last piece may be a syllable cut short.
                let last = lastRun! == (w, p) && w == words.count - 1 && p == pieces.count - 1
                let found = segmentations(of: letters, last: last, dictionary: dictionary)
                if found.isEmpty { return [] }
                options.append(found)
            }
        }
        var combined: [[[Unit]]] = [[]]
        for run in options {
            combined = combined.flatMap { prefix in run.map { prefix + [$0] } }
            if combined.count > maxReadings { combined = Array(combined.prefix(maxReadings)) }
        }
        var result: [PinyinQuery] = []
        for runs in combined {
            var next = 0
            var unitWords: [[Unit]] = []
            for pieces in words {
                var units: [Unit] = []
                for piece in pieces {
                    switch piece {
                    case .han(let v): units.append(Unit(han: v, syllables: [], exact: [], isInitial: false))
                    case .letters:
                        units += runs[next]
                        next += 1
                    }
                }
                unitWords.append(units)
            }
            let all = unitWords.flatMap { $0 }
            // A lone initial or a lone piece cut short says too little to read as pinyin.
            if all.count == 1 && all[0].exact.isEmpty { continue }
            result.append(PinyinQuery(words: unitWords))
        }
        return result
    }

    /// Ways to read a run of letters: as whole syllables, fewest first (at most two), or as initials.
    static func segmentations(of letters: [UInt8], last: Bool, dictionary: PinyinDictionary) -> [[Unit]] {
        let n = letters.count
        func text(_ range: Range<Int>) -> String { String(decoding: letters[range], as: UTF8.self) }
        func syllable(_ range: Range<Int>) -> Unit? {
            let typed = text(range)
            guard !vowelless.contains(typed), let id = dictionary.syllableID(typed) else { return nil }
            var exact = [id]
            // ü typed as u after l and n (lu for 绿 lv): both.
            if typed.hasPrefix("l") || typed.hasPrefix("n"), typed.dropFirst().hasPrefix("u") {
                if let v = dictionary.syllableID(String(typed.prefix(1)) + "v" + typed.dropFirst(2)) { exact.append(v) }
            }
            return Unit(han: nil, syllables: exact.map { $0...$0 }, exact: exact, isInitial: false)
        }
        // Whole syllables: the fewest pieces, by dynamic programming keeping the two best ways to each position.
        var best: [[[Range<Int>]]] = Array(repeating: [], count: n + 1)
        best[0] = [[]]
        for i in 0..<n where !best[i].isEmpty {
            for length in 1...min(6, n - i) {
                let range = i..<(i + length)
                let isSyllable = syllable(range) != nil
                // (Not a prefix only of a syllable without a vowel: "ying" is ying or yin-g, never yi-ng.)
                let cutShort =
                    last && i + length == n
                    && (dictionary.syllables(beginning: text(range)).map { grown in grown.contains { !vowelless.contains(dictionary.syllable($0)) } }
                        ?? false)
                guard isSyllable || cutShort else { continue }
                for path in best[i] {
                    best[i + length].append(path + [range])
                }
                best[i + length].sort { $0.count < $1.count }
                if best[i + length].count > 2 { best[i + length].removeLast(best[i + length].count - 2) }
            }
        }
        var result: [[Unit]] = []
        for path in best[n] {
            var units: [Unit] = []
            for (k, range) in path.enumerated() {
                let isLast = last && k == path.count - 1
                if isLast {
                    // As typed, the last syllable may still grow ("ken" → keng): every syllable it begins.
                    guard let grown = dictionary.syllables(beginning: text(range)) else { continue }
                    let exact = syllable(range)?.exact ?? []
                    units.append(
                        Unit(han: nil, syllables: [grown] + exact.filter { !grown.contains($0) }.map { $0...$0 }, exact: exact, isInitial: false)
                    )
                } else if let unit = syllable(range) {
                    units.append(unit)
                }
            }
            // A lone piece cut short ("sh") says too little as a syllable: its letters may be initials.
            if units.count == path.count && !(units.count == 1 && units[0].exact.isEmpty) { result.append(units) }
        }
        // Initials, one letter each ("kdj", "bjlg"): where the letters are not syllables, or are only by reading a
        // vowel alone as one ("ac" is a-c… or an initial pair, 安长).
        let vowelAlone = result.contains { units in units.dropLast().contains { $0.exact.contains { dictionary.syllable($0).count == 1 } } }
        if (result.isEmpty || vowelAlone) && n >= 2 && letters.allSatisfy({ initials.contains($0) }) {
            var units: [Unit] = []
            for i in 0..<n {
                guard let range = dictionary.syllables(beginning: text(i..<(i + 1))) else { return result }
                units.append(Unit(han: nil, syllables: [range], exact: [], isInitial: true))
            }
            result.append(units)
        }
        return result
    }
}
