import CPrefetch
import GeoCore
import HeapModule
import Records
import SnapshotFile
import Synchronization
import TextIndex

extension KeywordRanker {
    // MARK: Several words: each word's cursor

    /// The best way a record matches one word: its rule class (typos, prefix, attribute) and score, and the posting
    /// it matched through (none for a category label).
    ///
    /// Multi-word queries keep one per driving record for a word of many lists (a short prefix's completions): the
    /// rule class is held in bytes, so that such a table is 24 bytes a record, not 48.
    struct WordMatch {
        var score: Double
        var posting: InvertedIndex.Posting?
        private var classes: (typos: UInt8, prefix: UInt8, attribute: UInt8)

        var typos: Int { Int(classes.typos) }
        var prefix: Int { Int(classes.prefix) }
        var attribute: Int { Int(classes.attribute) }

        init(typos: Int, prefix: Int, attribute: Int, score: Double, posting: InvertedIndex.Posting?) {
            self.score = score
            self.posting = posting
            classes = (UInt8(typos), UInt8(prefix), UInt8(attribute))
        }

        /// Whether this match is better than `other` (by class, then score; with an origin the attribute is a weight).
        func isBetter(than other: WordMatch, weighted: Bool) -> Bool {
            if typos != other.typos { return typos < other.typos }
            if prefix != other.prefix { return prefix < other.prefix }
            if !weighted && attribute != other.attribute { return attribute < other.attribute }
            return score > other.score
        }
    }

    /// Which rule classes of one word can still put a record on the page: a match with these typos and prefix, the
    /// other words matching at their least, in the best attribute bucket, is not below the page's worst entry.
    struct ClassLimit {
        var dropped = 0
        var otherTypos = 0
        var otherPrefixes = 0
        /// The page's worst entry's bucket (`.max`: the page is not full, every class may enter).
        var worst = UInt64.max

        static let any = ClassLimit()

        func allows(typos: Int, prefix: Int) -> Bool {
            worst == .max
                || RankBucket.make(dropped: dropped, typos: typos + otherTypos, prefixes: prefix + otherPrefixes, attributes: 0, wholeName: true)
                    <= worst
        }
    }

    /// The best a word can do on a range of records: its score bound and the least of each rule class component.
    struct WordBound {
        var score: Double
        var typos: Int
        var prefix: Int
        var attribute: Int
        /// The most a match in the name can score (nil: none can be in the name): a record whose every word matches
        /// in the name is in a better bucket than any other, and scores at most the sum of these.
        var nameScore: Double?
        /// No record of the range that matches the word is shorter (0: not known; `add` leaves it).
        var length: UInt16 = 0

        /// Adds another word's bounds: the sums bound the words together.
        mutating func add(_ other: WordBound) {
            score += other.score
            typos += other.typos
            prefix += other.prefix
            attribute += other.attribute
            nameScore = nameScore.flatMap { mine in other.nameScore.map { mine + $0 } }
        }
    }

    /// One query word's sources, read with cursors that only move forward: the posting lists of its expansions,
    /// best rule class first (the word as typed, its completions, its typo neighbours by edits), and the categories it
    /// labels. Records are met in increasing order, so each list is searched by galloping on from where the previous
    /// record was found, and the posting found is scored where it lies.
    struct WordCursor {
        private(set) var terms: [Int32]
        private(set) var lists: [FlatArray<InvertedIndex.Posting>]
        private(set) var typos: [Int]
        private(set) var prefixes: [Int]
        private(set) var idfs: [Double]
        var positions: [Int]
        /// Per list, where `fill` last found its stretch: the next stretch (with an origin, the next nearest block,
        /// usually near in record order) is searched for from there outwards.
        var fillHints: [Int]
        let categories: [String]
        /// Per category code (`RecordMeta.category`), whether it is under one of `categories`.
        let labelled: [Bool]
        let members: [[UInt32]]
        let labelScore: Double
        /// No match of this word scores more: the largest block bound of its lists (a list too short to have
        /// bounds: its postings' largest score), or its label's score.
        let maxScore: Double

        init(_ group: TextMatcher.Group, ranker: borrowing KeywordRanker) {
            let s = ranker.s
            let expansions = group.expansions.enumerated().sorted { a, b in
                (a.element.typos, a.element.kind == .prefix ? 1 : 0, a.offset) < (b.element.typos, b.element.kind == .prefix ? 1 : 0, b.offset)
            }.map(\.element)
            terms = expansions.map(\.term)
            lists = expansions.map { s.text.postings(of: $0.term) }
            typos = expansions.map { Int($0.typos) }
            prefixes = expansions.map { $0.kind == .prefix ? 1 : 0 }
            idfs = lists.map { s.text.idf(documentFrequency: $0.count) }
            positions = Array(repeating: 0, count: lists.count)
            fillHints = positions
            blocks = expansions.map { s.text.blockBounds(of: $0.term) }
            blockPositions = Array(repeating: 0, count: expansions.count)
            categories = group.categories
            labelled = group.categories.isEmpty ? [] : s.categoryNames.map { name in group.categories.contains { name.isCategory(under: $0) } }
            members = s.members(ofCategoriesUnder: group.categories)
            labelScore = members.isEmpty ? 0 : s.text.idf(documentFrequency: members.reduce(0) { $0 + $1.count }) * 0.8
            var frequency: UInt16 = 0
            listMaxScores = zip(zip(lists, blocks), idfs).map { listAndBounds, idf in
                let (list, bounds) = listAndBounds
                if bounds.isEmpty {
                    // A list too short for block bounds: its postings themselves.
                    return list.reduce(0) { most, posting in
                        frequency = max(frequency, posting.frequency)
                        return max(most, ranker.matchScore(posting, idf: idf))
                    }
                }
                return bounds.reduce(0) { most, block in
                    frequency = max(frequency, block.nameFrequency, block.otherFrequency)
                    return max(most, ranker.bound(block, idf: idf))
                }
            }
            maxScore = listMaxScores.reduce(labelScore, max)
            maxFrequency = frequency
            maxIdf = idfs.max() ?? 0
        }

        /// The largest frequency and idf of the word's lists: with a record's length, they bound what the word can
        /// add to it (every word of a record has the record's length).
        let maxFrequency: UInt16
        let maxIdf: Double

        /// Per list, no match through it scores more (as `maxScore`, list by list).
        private(set) var listMaxScores: [Double]

        /// Per list, its block bounds (empty for a list too short to have them) and the first block (in a list without
        /// bounds, the first posting) that may still overlap a range asked of `bound(from:to:ranker:)` (ranges come in
        /// increasing order).
        private(set) var blocks: [FlatArray<InvertedIndex.BlockBound>]
        var blockPositions: [Int]

        /// This word with only the lists `keep` accepts (by index), rewound; its labels stay, and `maxScore` stays a
        /// bound.
        func keeping(_ keep: (Int) -> Bool) -> WordCursor {
            let kept = lists.indices.filter(keep)
            var copy = self
            copy.terms = kept.map { terms[$0] }
            copy.lists = kept.map { lists[$0] }
            copy.typos = kept.map { typos[$0] }
            copy.prefixes = kept.map { prefixes[$0] }
            copy.idfs = kept.map { idfs[$0] }
            copy.blocks = kept.map { blocks[$0] }
            copy.listMaxScores = kept.map { listMaxScores[$0] }
            copy.fillHints = Array(repeating: 0, count: kept.count)
            copy.rewind()
            return copy
        }

        /// The least typos and prefix rank any match of this word has (a label match has neither).
        var leastClass: (typos: Int, prefix: Int) { members.isEmpty ? (typos.min() ?? 0, prefixes.min() ?? 0) : (0, 0) }

        /// The best a record from `first` to `last` can do on this word: the most it can score — the largest bound
        /// of its lists' blocks that overlap the range, and its label's score; each bound is a posting's own
        /// arithmetic on the block's extremes, so a sum of such bounds in the words' order is never below the
        /// records' summed scores — and the least typos, prefix and attribute rank any match there can have, each on
        /// its own (a list without a block in the range cannot match there; a block without a name posting cannot
        /// match in the name). Nil when no record of the range can match the word through a term.
        /// A word of many lists (a short prefix's completions) answers its overall bounds instead.
        /// Only the lists whose rule class `limit` allows are bounded: a match through another puts its record below the
        /// page. `least`: the records asked about are no shorter (`KeywordRanker.bound`); the answer's `length` is the
        /// least length of the blocks it read (0 when unknown).
        mutating func bound(from first: UInt32, to last: UInt32, limit: ClassLimit, least: UInt16 = 0, ranker: KeywordRanker) -> WordBound? {
            guard lists.count <= 8 else {
                let allowed = lists.indices.filter { limit.allows(typos: typos[$0], prefix: prefixes[$0]) }
                guard !allowed.isEmpty || !labelled.isEmpty else { return nil }
                let most = allowed.reduce(labelled.isEmpty ? 0 : labelScore) { max($0, listMaxScores[$1]) }
                return WordBound(
                    score: most,
                    typos: labelled.isEmpty ? allowed.map { typos[$0] }.min()! : 0,
                    prefix: labelled.isEmpty ? allowed.map { prefixes[$0] }.min()! : 0,
                    attribute: RankBucket.name,
                    nameScore: most
                )
            }
            var most = labelled.isEmpty ? 0 : labelScore
            var nameMost: Double?
            var matched = false
            var (leastTypos, leastPrefix, leastAttribute) = (Int.max, Int.max, Int.max)
            var shortest = UInt16.max
            let elsewhere = labelled.isEmpty ? RankBucket.other : RankBucket.label
            let size = InvertedIndex.blockSize
            for l in lists.indices where limit.allows(typos: typos[l], prefix: prefixes[l]) {
                let bounds = blocks[l]
                let list = lists[l]
                var inName = false
                if bounds.isEmpty {
                    // A list too short for block bounds: its postings in the range, scored as their matches are (a
                    // rare completion such as "piazzola" has a large idf, and bounded by it every stretch of "La
                    // Piazz" seemed able to beat the page).
                    var p = KeywordRanker.gallop(list, from: blockPositions[l], to: first)
                    blockPositions[l] = p
                    var overlaps = false
                    while p < list.count && list[p].doc <= last {
                        let posting = list[p]
                        let score = ranker.matchScore(posting, idf: idfs[l])
                        most = max(most, score)
                        if posting.isInName {
                            inName = true
                            nameMost = max(nameMost ?? 0, score)
                        }
                        shortest = min(shortest, posting.length)
                        overlaps = true
                        p += 1
                    }
                    guard overlaps else { continue }
                } else {
                    // The first block whose last record is at least `first` (galloping: after a rewind it may be far).
                    var b = KeywordRanker.gallop(count: bounds.count, from: blockPositions[l], to: first) {
                        list[min(list.count, ($0 + 1) * size) - 1].doc
                    }
                    blockPositions[l] = b
                    var overlaps = false
                    while b < bounds.count && list[b * size].doc <= last {
                        most = max(most, ranker.bound(bounds[b], idf: idfs[l], least: least))
                        shortest = min(shortest, KeywordRanker.leastLength(bounds[b]))
                        overlaps = true
                        if let name = ranker.nameBound(bounds[b], idf: idfs[l], least: least) {
                            inName = true
                            nameMost = max(nameMost ?? 0, name)
                        }
                        b += 1
                    }
                    guard overlaps else { continue }
                }
                matched = true
                leastTypos = min(leastTypos, typos[l])
                leastPrefix = min(leastPrefix, prefixes[l])
                leastAttribute = min(leastAttribute, inName ? RankBucket.name : elsewhere)
            }
            guard matched else { return nil }
            var found = WordBound(
                score: most,
                typos: leastTypos,
                prefix: leastPrefix,
                attribute: leastAttribute,
                nameScore: nameMost,
                length: shortest
            )
            if !labelled.isEmpty {
                found.length = 0
                // A label match (no typo, no prefix) may better a term match.
                (found.typos, found.prefix) = (0, 0)
            }
            return found
        }

        var postingCount: Int { lists.reduce(0) { $0 + $1.count } }
        var memberCount: Int { members.reduce(0) { $0 + $1.count } }

        mutating func rewind() {
            positions = Array(repeating: 0, count: lists.count)
            blockPositions = Array(repeating: 0, count: lists.count)
        }

        /// How the record matches this word at best, or nil. A label alone satisfies the word only when `labels`.
        /// `labelsMatter` false: no record matching a word through a label can enter the page (the caller knows), so
        /// the record's category is not read.
        mutating func match(_ doc: UInt32, labels: Bool, labelsMatter: Bool = true, ranker: KeywordRanker) -> WordMatch? {
            let weighted = ranker.query.origin != nil
            var best: WordMatch?
            for l in lists.indices {
                // Lists are in class order: once a match is found, a list of a worse class cannot beat it.
                if let b = best, typos[l] > b.typos || (typos[l] == b.typos && prefixes[l] > b.prefix) { break }
                let p = KeywordRanker.gallop(lists[l], from: positions[l], to: doc)
                positions[l] = p
                guard p < lists[l].count, lists[l][p].doc == doc else { continue }
                let posting = lists[l][p]
                let attribute = posting.isInName ? RankBucket.name : RankBucket.other
                var score = ranker.scorer.score(posting, idf: idfs[l])
                if weighted { score *= RankBucket.weight(attribute: attribute) }
                let candidate = WordMatch(typos: typos[l], prefix: prefixes[l], attribute: attribute, score: score, posting: posting)
                if best.map({ candidate.isBetter(than: $0, weighted: weighted) }) ?? true { best = candidate }
            }
            guard best != nil || labels else { return nil }
            return labelsMatter ? withLabel(best, doc, ranker: ranker) : best
        }

        /// The better of a term match and the word's label match for the record.
        func withLabel(_ match: WordMatch?, _ doc: UInt32, ranker: KeywordRanker) -> WordMatch? {
            var best = match
            let weighted = ranker.query.origin != nil
            if labelled.isEmpty { return best }
            if let b = best,
                b.typos == 0 && b.prefix == 0 && (weighted || b.attribute <= RankBucket.label)
                    && (b.score >= labelScore || (!weighted && b.attribute < RankBucket.label))
            {
                return best  // a label match could not be better
            }
            let code = Int(ranker.s.meta[Int(doc)].category)
            if code < labelled.count && labelled[code] {
                let candidate = WordMatch(typos: 0, prefix: 0, attribute: RankBucket.label, score: labelScore, posting: nil)
                if best.map({ candidate.isBetter(than: $0, weighted: weighted) }) ?? true { best = candidate }
            }
            return best
        }

        /// This word's best term match for each record of `driving`, by the record's position there — what
        /// `match` answers record by record, found list by list instead: each list is intersected with the driving
        /// list once, walking the shorter and galloping in the longer. For a short prefix's many completions this
        /// reads each list in order once, where asking record by record would touch every list for every record.
        mutating func matches(along driving: [UInt32], ranker: KeywordRanker) -> [WordMatch?] {
            var table = [WordMatch?](repeating: nil, count: driving.count)
            fill(&table, along: driving, range: driving.indices, ranker: ranker)
            return table
        }

        /// Which of `docs` (at most 64 increasing record numbers: a stretch of the driving records) this word matches
        /// through a term, as bits by position: each list's stretch over them found from its fill hint and merged
        /// with them. A stretch's records are so tested list by list, where `match` would gallop in every list for
        /// every record — most of a common word's records lack the other words ("Steakhouse Mäkinen": 7 000 records
        /// of steakhouses, a few with Mäkinen).
        mutating func presence(along docs: [UInt32]) -> UInt64 {
            lists.indices.reduce(0) { found, l in found | hits(l, along: docs, first: false) }
        }

        /// The best rule class of this word's lists that hold one of `docs` (as `presence`) — lists are in class
        /// order: the first such list's — or nil when none does. Merged with the records themselves, not searched
        /// over their span: a label's members are sparse, and the span of 64 cafés holds some record with the exact
        /// word "m" far more often than one of the cafés does ("Kahvila M" near an origin).
        mutating func bestClass(along docs: [UInt32]) -> (typos: Int, prefix: Int)? {
            lists.indices.first { hits($0, along: docs, first: true) != 0 }.map { (typos[$0], prefixes[$0]) }
        }

        /// Which of `docs` list `l` holds, as bits by position (`first`: only the first found); the list is searched
        /// from its fill hint, which is left where the stretch begins (`fill` searches from there next).
        private mutating func hits(_ l: Int, along docs: [UInt32], first: Bool) -> UInt64 {
            let list = lists[l]
            guard let firstDoc = docs.first, let lastDoc = docs.last, let head = list.first, head.doc <= lastDoc,
                list[list.count - 1].doc >= firstDoc
            else { return 0 }
            var p = KeywordRanker.lowerBound(list, firstDoc, near: fillHints[l])
            fillHints[l] = p
            var found: UInt64 = 0
            var i = 0
            // The list's stretch over the records; of a length like theirs, it is merged with them step by step
            // (`mergeRatio`), else whichever is behind gallops.
            let to = lastDoc == .max ? list.count : KeywordRanker.gallop(list, from: p, to: lastDoc + 1)
            if max(to - p, docs.count) < KeywordRanker.mergeRatio * min(to - p, docs.count) {
                // Stepped by comparisons, not branches (as in `fill`).
                while p < to && i < docs.count {
                    let doc = list[p].doc
                    let wanted = docs[i]
                    if doc == wanted {
                        found |= 1 << UInt64(i)
                        if first { break }
                    }
                    p &+= doc <= wanted ? 1 : 0
                    i &+= wanted <= doc ? 1 : 0
                }
                return found
            }
            while p < to && i < docs.count {
                let doc = list[p].doc
                if doc < docs[i] {
                    p = KeywordRanker.gallop(list, from: p + 1, to: docs[i])
                } else if doc > docs[i] {
                    i = KeywordRanker.gallop(docs, from: i + 1, to: doc)
                } else {
                    found |= 1 << UInt64(i)
                    if first { break }
                    p += 1
                    i += 1
                }
            }
            return found
        }

        /// `matches(along:)` for the driving records of `range` only, written into `table` (which holds one entry per
        /// driving record): with an origin only the blocks near it are read, and only their stretch of each list.
        mutating func fill(_ table: inout [WordMatch?], along driving: [UInt32], range: Range<Int>, ranker: KeywordRanker) {
            guard !range.isEmpty else { return }
            let weighted = ranker.query.origin != nil
            let (firstDoc, lastDoc) = (driving[range.lowerBound], driving[range.upperBound - 1])
            // (Through buffers: a merge step is a few instructions, and the arrays' bounds and uniqueness checks were
            // as many again.)
            table.withUnsafeMutableBufferPointer { table in
                driving.withUnsafeBufferPointer { driving in
                    for l in lists.indices {
                        lists[l].withUnsafeBufferPointer { list in
                            fillHints[l] = Self.fill(
                                table,
                                along: driving,
                                range: range,
                                firstDoc: firstDoc,
                                lastDoc: lastDoc,
                                from: list,
                                hint: fillHints[l],
                                match: (typos: typos[l], prefix: prefixes[l], idf: idfs[l]),
                                weighted: weighted,
                                scorer: ranker.scorer
                            )
                        }
                    }
                }
            }
        }

        /// `fill` for one list (of rule class and idf `match`), searched for from `hint`; answers where the list's
        /// stretch over the range begins (the next hint), or the hint when the list lies wholly outside the range.
        @inline(__always)
        private static func fill(
            _ table: UnsafeMutableBufferPointer<WordMatch?>,
            along driving: UnsafeBufferPointer<UInt32>,
            range: Range<Int>,
            firstDoc: UInt32,
            lastDoc: UInt32,
            from list: UnsafeBufferPointer<InvertedIndex.Posting>,
            hint: Int,
            match: (typos: Int, prefix: Int, idf: Double),
            weighted: Bool,
            scorer: borrowing InvertedIndex.Scorer
        ) -> Int {
            // A list whose records all lie before or after the range is refused by its ends, without a search.
            guard let head = list.first, head.doc <= lastDoc, list[list.count - 1].doc >= firstDoc else { return hint }
            func consider(_ i: Int, _ posting: InvertedIndex.Posting) {
                let attribute = posting.isInName ? RankBucket.name : RankBucket.other
                var score = scorer.score(posting, idf: match.idf)
                if weighted { score *= RankBucket.weight(attribute: attribute) }
                let candidate = WordMatch(typos: match.typos, prefix: match.prefix, attribute: attribute, score: score, posting: posting)
                if table[i].map({ candidate.isBetter(than: $0, weighted: weighted) }) ?? true { table[i] = candidate }
            }
            // The list's stretch that can hold the range's records: found from where the last one was, and its end
            // galloped to from its start.
            let from = KeywordRanker.lowerBound(count: list.count, firstDoc, near: hint) { list[$0].doc }
            let to =
                range.upperBound == driving.count
                ? list.count : KeywordRanker.gallop(count: list.count, from: from, to: driving[range.upperBound]) { list[$0].doc }
            if max(to - from, range.count) < KeywordRanker.mergeRatio * min(to - from, range.count) {
                // Of similar lengths: a merge step by step (`mergeRatio`), each side stepped by its comparison, not
                // branched on: which side steps is a coin toss the processor mispredicts half the time.
                var i = range.lowerBound
                var p = from
                while i < range.upperBound && p < to {
                    let doc = driving[i]
                    let posting = list[p]
                    if posting.doc == doc { consider(i, posting) }
                    i &+= doc <= posting.doc ? 1 : 0
                    p &+= posting.doc <= doc ? 1 : 0
                }
            } else if to - from < range.count {
                var i = range.lowerBound
                for p in from..<to {
                    let posting = list[p]
                    i = KeywordRanker.gallop(count: range.upperBound, from: i, to: posting.doc) { driving[$0] }
                    guard i < range.upperBound else { break }
                    if driving[i] == posting.doc { consider(i, posting) }
                }
            } else {
                var p = from
                for i in range {
                    p = KeywordRanker.gallop(count: to, from: p, to: driving[i]) { list[$0].doc }
                    guard p < to else { break }
                    if list[p].doc == driving[i] { consider(i, list[p]) }
                }
            }
            return from
        }
    }
}
