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

    let groups: [Group]
    let normalizedQuery: String

    /// `known`: the groups of words compiled before against the same state (`WordCursorCache`), read and added to.
    init(_ text: String, index: borrowing InvertedIndex, taxonomy: CategoryTaxonomy, known: (cache: WordCursorCache, generation: UInt64)? = nil) {
        let normalized = TextNormalizer.normalize(text)
        normalizedQuery = normalized
        let words = normalized.split(separator: " ").map(String.init)
        var groups: [Group] = []
        for (w, word) in words.enumerated() {
            let isLast = w == words.count - 1
            if let known, let found = known.cache.groups(of: word, isLast: isLast, generation: known.generation) {
                groups += found
                continue
            }
            let first = groups.count
            defer { known?.cache.store(Array(groups[first...]), of: word, isLast: isLast, generation: known!.generation) }
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
                groups.append(Group(expansions: index.expansions(of: latin, isLast: last), categories: taxonomy.categories(forLabel: latin)))
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
