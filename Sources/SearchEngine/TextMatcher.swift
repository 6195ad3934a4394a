import TextIndex

/// A compiled keyword query: every group must be satisfied (AND); a group is satisfied by any of its expansions
/// (the word, its prefix completions, its typo neighbours) or by the record's category when the word names one.
struct TextMatcher {
    struct Group {
        var expansions: [InvertedIndex.Expansion]
        var categories: [String]
    }

    let groups: [Group]
    let normalizedQuery: String

    init(_ text: String, index: InvertedIndex, taxonomy: CategoryTaxonomy) {
        let normalized = TextNormalizer.normalize(text)
        normalizedQuery = normalized
        let words = normalized.split(separator: " ").map(String.init)
        var groups: [Group] = []
        for (w, word) in words.enumerated() {
            let isLast = w == words.count - 1
            // Latin words are one group each; a CJK run is one group per bigram (or its single character).
            var latin = ""
            var run: [Character] = []
            func flushRun() {
                guard !run.isEmpty else { return }
                let categories = taxonomy.categories(forLabel: String(run))
                if run.count == 1 {
                    groups.append(Group(expansions: index.term(String(run)).map { [.init(term: $0, weight: 1)] } ?? [], categories: categories))
                } else {
                    for i in 0..<(run.count - 1) {
                        let bigram = String(run[i...(i + 1)])
                        groups.append(Group(expansions: index.term(bigram).map { [.init(term: $0, weight: 1)] } ?? [], categories: categories))
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

    /// Whether an indexed record satisfies every group: a binary search in each expansion's posting list (no
    /// tokenizing), or its category.
    func contains(_ record: UInt32, category: String?, index: InvertedIndex, categoryMembers: [String: Set<UInt32>]) -> Bool {
        groups.allSatisfy { group in
            if let category, group.categories.contains(where: { category.isCategory(under: $0) }) { return true }
            return group.expansions.contains { index.contains(term: $0.term, document: record) }
        }
    }
}
