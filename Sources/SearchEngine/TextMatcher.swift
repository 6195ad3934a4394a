import TextIndex

/// A compiled keyword query: one group per query word (a CJK run gives one group per bigram, or its single
/// character). A group is satisfied by any of its expansions (the word, its prefix completions when it is the last
/// word, its typo neighbours when the word is unknown) or by the record's category when the word is a label.
struct TextMatcher {
    struct Group {
        var expansions: [InvertedIndex.Expansion]
        /// Categories the word names (data/categories.json labels), matched with `isCategory(under:)`.
        var categories: [String]
    }

    /// The query as typed.
    let groups: [Group]
    /// Whether `groups` were made without their typo neighbours, because the query also reads as pinyin from a name's
    /// start (`deferTypos`): the ranking asks for them only when the page is not full without them.
    let typosDeferred: Bool
    /// The query read as pinyin (`PinyinQuery`), best rank first: records matching any of these match too, in the
    /// tiers of `RankBucket.tier`.
    let readings: [Reading]
    let normalizedQuery: String

    /// One reading of the query as pinyin: from a name's start, one group of run terms (`PinyinDictionary.runTerms`);
    /// elsewhere, a group per pair of neighbouring pieces (a lone piece: one group), whose expansions are the Han
    /// terms the pair may be (`PinyinTerms`).
    struct Reading {
        var groups: [Group]
        var rank: RankBucket.Reading
    }

    /// A query of groups made elsewhere (a reading's, ranked on its own).
    init(groups: [Group], normalizedQuery: String) {
        self.groups = groups
        self.typosDeferred = false
        self.readings = []
        self.normalizedQuery = normalizedQuery
    }

    /// `known`: the groups of words compiled before against the same state (`WordCursorCache`), read and added to.
    /// `pinyin`: the dictionary and the index's Han terms by reading, to read the query as pinyin too.
    init(
        _ text: String,
        index: borrowing InvertedIndex,
        taxonomy: CategoryTaxonomy,
        known: (cache: WordCursorCache, generation: UInt64)? = nil,
        pinyin: PinyinContext? = nil,
        deferTypos: Bool = false
    ) {
        let normalized = TextNormalizer.normalize(text)
        normalizedQuery = normalized
        if let pinyin {
            if let known, let found = known.cache.readings(of: normalized, generation: known.generation) {
                readings = found
            } else {
                readings = TextMatcher.readings(of: normalized, index: index, pinyin: pinyin)
                known?.cache.store(readings: readings, of: normalized, generation: known!.generation)
            }
        } else {
            readings = []
        }
        // A word that would match only through typos waits when the query reads as pinyin from a name's start.
        let typos = !(deferTypos && readings.contains { $0.rank != .pairs })
        typosDeferred = !typos
        let words = normalized.split(separator: " ").map(String.init)
        var groups: [Group] = []
        for (w, word) in words.enumerated() {
            let isLast = w == words.count - 1
            if let known, let found = known.cache.groups(of: word, isLast: isLast, typos: typos, generation: known.generation) {
                groups += found
                continue
            }
            let first = groups.count
            defer { known?.cache.store(Array(groups[first...]), of: word, isLast: isLast, typos: typos, generation: known!.generation) }
            // Latin words are one group each; a CJK run is one group per bigram (or its single character).
            var latin = ""
            var run: [Character] = []
            func exact(_ text: String) -> [InvertedIndex.Expansion] { index.term(text).map { [.init(term: $0, kind: .exact)] } ?? [] }
            func flushRun() {
                guard !run.isEmpty else { return }
                let categories = taxonomy.categories(forLabel: String(run))
                if run.count == 1 {
                    groups.append(Group(expansions: exact(String(run)), categories: categories))
                } else {
                    for i in 0..<(run.count - 1) {
                        groups.append(Group(expansions: exact(String(run[i...(i + 1)])), categories: categories))
                    }
                }
                run.removeAll()
            }
            func flushLatin(last: Bool) {
                guard !latin.isEmpty else { return }
                groups.append(
                    Group(expansions: index.expansions(of: latin, isLast: last, typos: typos), categories: taxonomy.categories(forLabel: latin))
                )
                latin = ""
            }
            for character in word {
                if character.unicodeScalars.contains(where: TextNormalizer.isCJK) {
                    flushLatin(last: false)
                    run.append(character)
                } else {
                    flushRun()
                    latin.append(character)
                }
            }
            flushRun()
            flushLatin(last: isLast)
        }
        // A multi-word label ("bus stop", "coffee shop") makes its category satisfy every group.
        let whole = taxonomy.categories(forLabel: normalized)
        if words.count > 1 && !whole.isEmpty {
            for i in groups.indices { groups[i].categories += whole }
        }
        self.groups = groups
    }

    var isEmpty: Bool { groups.isEmpty }

    /// Every way to match: the groups as typed, then each reading's.
    var alternatives: [[Group]] { [groups] + readings.map(\.groups) }

    /// Pinyin expansions a pair of pieces keeps at most: the best matches, then the most frequent.
    static let maxPinyinExpansions = 128

    /// The query's readings as pinyin with the terms each pair of pieces may be. A query of several words is read
    /// with the words run together ("ken de ji") and, when every word has two pieces or more, word by word too
    /// ("kendeji zhongguancun": a record's name holds each word, not both in one run). A reading some pair of which
    /// matches no term is left out.
    static func readings(of normalized: String, index: borrowing InvertedIndex, pinyin: PinyinContext) -> [Reading] {
        var result: [Reading] = []
        let parses = PinyinQuery.readings(of: normalized, dictionary: pinyin.dictionary)
        guard !parses.isEmpty else { return [] }
        // From a run's start: one group, the run terms the whole query is or begins (`PinyinDictionary.runTerms`): its
        // letters as full pinyin or as initials, or its first character as written and the rest in pinyin ("星bake").
        let units = parses[0].units
        let hasHan = units.contains { $0.han != nil }
        let letters = String(String.UnicodeScalarView(normalized.unicodeScalars.filter { $0.value >= 0x61 && $0.value <= 0x7A }))
        if !hasHan && parses.contains(where: { !$0.units.dropLast().contains { $0.isInitial } }) {
            let group = runStartGroup(PinyinDictionary.fullMarker + letters, index: index)
            if !group.expansions.isEmpty { result.append(Reading(groups: [group], rank: .runStart)) }
        }
        if let han = units.first?.han, units.dropFirst().allSatisfy({ $0.han == nil }), !letters.isEmpty,
            parses.contains(where: { !$0.units.dropLast().contains { $0.isInitial } })
        {
            var first = String.UnicodeScalarView()
            first.append(Unicode.Scalar(han)!)
            let group = runStartGroup(PinyinDictionary.mixedMarker + String(first) + letters, index: index)
            if !group.expansions.isEmpty { result.append(Reading(groups: [group], rank: .runStart)) }
        }
        if !hasHan && parses.contains(where: { $0.units.dropLast().contains { $0.isInitial } }) {
            let group = runStartGroup(PinyinDictionary.initialsMarker + letters, index: index)
            if !group.expansions.isEmpty { result.append(Reading(groups: [group], rank: .runStartInitials)) }
        }
        for query in parses {
            var forms = [[query.units]]
            if query.words.count > 1 && query.words.allSatisfy({ $0.count >= 2 }) { forms.append(query.words) }
            for form in forms {
                var groups: [Group] = []
                for units in form {
                    guard let made = pairGroups(units, index: index, pinyin: pinyin) else {
                        groups = []
                        break
                    }
                    groups += made
                }
                if !groups.isEmpty { result.append(Reading(groups: groups, rank: .pairs)) }
            }
        }
        return result.enumerated().sorted { ($0.element.rank.rawValue, $0.offset) < ($1.element.rank.rawValue, $1.offset) }.map(\.element)
    }

    /// The run term `text` (exact) and the run terms that begin with it (completions, the most frequent first).
    static func runStartGroup(_ text: String, index: borrowing InvertedIndex) -> Group {
        var expansions: [InvertedIndex.Expansion] = []
        if let term = index.term(text), index.documentFrequency(term) > 0 { expansions.append(InvertedIndex.Expansion(term: term, kind: .exact)) }
        expansions += index.completions(of: text).map { InvertedIndex.Expansion(term: $0, kind: .prefix) }
        return Group(expansions: expansions, categories: [])
    }

    /// One group per pair of neighbouring pieces (a lone piece: its characters); nil when a pair matches no term.
    /// Neighbouring pairs must chain — the second character of one is the first of the next — so each pair keeps only
    /// the terms that a term of its neighbours continues ("kdj": 肯德 only if some 德… reads dj).
    private static func pairGroups(_ units: [PinyinQuery.Unit], index: borrowing InvertedIndex, pinyin: PinyinContext) -> [Group]? {
        let termCount = index.terms.count
        func live(_ m: PinyinTerms.Match) -> Bool { Int(m.term) < termCount && index.documentFrequency(m.term) > 0 }
        var pairs: [[PinyinTerms.Match]]
        if units.count == 1 {
            pairs = [pinyin.terms.matches(units[0], dictionary: pinyin.dictionary).filter(live)]
        } else {
            pairs = (0..<(units.count - 1)).map { pinyin.terms.matches(units[$0], units[$0 + 1], dictionary: pinyin.dictionary).filter(live) }
            for _ in 0..<2 {
                for i in 0..<(pairs.count - 1) {
                    let starts = Set(pairs[i + 1].map(\.first))
                    pairs[i].removeAll { !starts.contains($0.second) }
                    let ends = Set(pairs[i].map(\.second))
                    pairs[i + 1].removeAll { !ends.contains($0.first) }
                }
            }
        }
        var groups: [Group] = []
        for matches in pairs {
            guard !matches.isEmpty else { return nil }
            let best = matches.map { m in (m, index.documentFrequency(m.term)) }
                .sorted { a, b in
                    (a.0.typos, a.0.completed ? 1 : 0, -a.1, a.0.term) < (b.0.typos, b.0.completed ? 1 : 0, -b.1, b.0.term)
                }
                .prefix(maxPinyinExpansions)
            let expansions = best.map { m, _ in
                m.typos > 0
                    ? InvertedIndex.Expansion(term: m.term, kind: .typo, typos: m.typos)
                    : InvertedIndex.Expansion(term: m.term, kind: m.completed ? .prefix : .exact)
            }
            groups.append(Group(expansions: expansions, categories: []))
        }
        return groups
    }
}

/// What reading a query as pinyin needs: the dictionary and the index's Han terms by reading.
struct PinyinContext {
    let dictionary: PinyinDictionary
    let terms: PinyinTerms
}

extension EngineState {
    /// The sorted member lists of every category under one of `labels`' categories (each record has one category,
    /// so the lists are disjoint).
    func members(ofCategoriesUnder labels: [String]) -> [[UInt32]] {
        guard !labels.isEmpty else { return [] }
        return categoryMembers.compactMap { key, members in
            labels.contains(where: { key.isCategory(under: $0) }) && !members.isEmpty ? members : nil
        }
    }
}
