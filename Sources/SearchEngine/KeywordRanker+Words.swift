import CPrefetch
import GeoCore
import HeapModule
import Records
import SnapshotFile
import Synchronization
import TextIndex

extension KeywordRanker {
    // MARK: Several words

    /// Records matching every word: first those that match each word through a term (usually few; when they fill
    /// the page with buckets no label match can reach, the label members are never read), then with labels too.
    func rankAllWords(_ groups: [TextMatcher.Group], dropped: Int, into heap: inout TopK) {
        var cursors = groups.map { group in engine.wordCursors.cursor(for: group, ranker: self) { WordCursor(group, ranker: self) } }
        rank(&cursors, dropped: dropped, labels: false, into: &heap)
        guard cursors.contains(where: { !$0.members.isEmpty }) else { return }
        // The best bucket a record with a label match can reach: a word with no label matches through one of its
        // terms, so with at least that term's typos and prefix ("Market Str": "str" matches only as a prefix, and a
        // page full of such matches in the name refuses every label match unread).
        let least = cursors.map(\.leastClass)
        let total = least.reduce((typos: 0, prefix: 0)) { ($0.typos + $1.typos, $0.prefix + $1.prefix) }
        let bestWithLabel = RankBucket.make(
            dropped: dropped,
            typos: total.typos,
            prefixes: total.prefix,
            attributes: query.origin != nil ? 0 : RankBucket.label,
            wholeName: true
        )
        if heap.isFull, let worst = heap.worst {
            if worst.bucket < bestWithLabel { return }
            // The records this pass adds match some word through its label alone, so their bucket is at best
            // `bestWithLabel` with the typos and prefix of the lists they match through: a list that, with the other
            // words' least, cannot reach the page's worst is not read again ("Kahvila M" after a page of name matches
            // with a completion of "m": only the exact "m" can still pair with the kahvila label, not its 64
            // completions). A record whose every word matches through a term had its best entry in the pass above.
            for g in cursors.indices {
                let others = (typos: total.typos - least[g].typos, prefix: total.prefix - least[g].prefix)
                let cursor = cursors[g]
                cursors[g] = cursor.keeping { l in
                    let bucket = RankBucket.make(
                        dropped: dropped,
                        typos: cursor.typos[l] + others.typos,
                        prefixes: cursor.prefixes[l] + others.prefix,
                        attributes: query.origin != nil ? 0 : RankBucket.label,
                        wholeName: true
                    )
                    return heap.admits(bucket: bucket, scoreBound: .infinity)
                }
            }
        } else {
            for g in cursors.indices { cursors[g].rewind() }
        }
        rank(&cursors, dropped: dropped, labels: true, into: &heap)
    }

    /// How many times its records a short prefix's completions count when the driving word is chosen (see `rank`).
    static let completionsDrivingCost = 4

    /// One pass over the records of the word with the fewest (the driving word), in record order, each checked
    /// against the other words from the smallest up. A record is dropped as soon as the words matched so far put it
    /// in a bucket the page's worst entry beats, or their scores plus the others' bounds cannot beat it.
    private func rank(_ cursors: inout [WordCursor], dropped: Int, labels: Bool, into heap: inout TopK) {
        let weighted = query.origin != nil
        // In the labels pass, when one word only has label members, a record still to find matches that word through
        // its label: one matching it through a term too had its best entry in the pass before (where a term match is
        // bettered by the label's). Its records are its members, not its postings as well ("Market Street" near an
        // origin: 42 000 members of markets, not 96 000 records merged and boxed).
        let labelledWords = labels ? cursors.indices.filter { !cursors[$0].members.isEmpty } : []
        let soleLabelled = labelledWords.count == 1 ? labelledWords[0] : nil
        let sizes = cursors.indices.map { g in
            g == soleLabelled ? cursors[g].memberCount : cursors[g].postingCount + (labels ? cursors[g].memberCount : 0)
        }
        // The driving word is the one with the fewest records, but a short prefix's many completions count four
        // times theirs: driving by them merges their lists first and bounds its stretches by their overall best (the
        // other words are read along them record by record), where a word of one list drives block by block with
        // its own block bounds and tables the completions ("Burger Kin" near an origin: 19 ms driven by the
        // completions of "kin", 4 ms by "burger").
        let cost = cursors.indices.map { g in
            sizes[g] * (cursors[g].lists.count > 4 && cursors[g].prefixes.contains { $0 > 0 } ? Self.completionsDrivingCost : 1)
        }
        let order = cursors.indices.sorted { (cost[$0], $0) < (cost[$1], $1) }
        let driving = order[0]
        guard sizes[driving] > 0 else { return }
        var matches = [WordMatch](repeating: WordMatch(typos: 0, prefix: 0, attribute: 0, score: 0, posting: nil), count: cursors.count)
        // remaining[i]: the most the words from order[i] on can still add (with a margin for summation order).
        // (A constant: a variable captured by the nested functions below is checked for exclusive access at run time.)
        let remaining = order.indices.reversed().reduce(into: [Double](repeating: 0, count: order.count + 1)) { sums, i in
            sums[i] = sums[i + 1] + cursors[order[i]].maxScore * (1 + 1e-9)
        }
        let wholeNameTokens = min(queryTokens, InvertedIndex.Posting.manyNameTokens)
        // The most the words from order[i] on can still add to a record of length norm `norm`: `remaining[i]`, or
        // less when their largest frequencies and idfs score less at that length (with the same margin).
        // (Each word's three figures, in the words' order, read without copying its cursor on every visit.)
        let lengthBounds = order.map { g in (frequency: cursors[g].maxFrequency, idf: cursors[g].maxIdf, label: cursors[g].labelScore) }
        func remainingBound(from i: Int, norm: UInt8) -> Double {
            var sum = 0.0
            for j in i..<order.count {
                let c = lengthBounds[j]
                let most = scorer.bm25(frequency: c.frequency, norm: norm, idf: c.idf)
                sum += max(c.label, most) * (1 + 1e-9)
            }
            return min(sum, remaining[i])
        }

        // (A word no label matches brings its least typos and prefix to any record's bucket.)
        let labelFloor = RankBucket.make(
            dropped: dropped,
            typos: cursors.reduce(0) { $0 + $1.leastClass.typos },
            prefixes: cursors.reduce(0) { $0 + $1.leastClass.prefix },
            attributes: RankBucket.label,
            wholeName: false
        )
        // Words of many lists (a short prefix's completions), matched list by list along a single driving list.
        var tables = [[WordMatch?]?](repeating: nil, count: cursors.count)
        // Once the page is full, a stretch is bounded only by the lists whose class can still reach it ("Market
        // Street" after a page of whole-name matches: "street" as typed, not its completions).
        let least = cursors.map(\.leastClass)
        let leastTypos = least.reduce(0) { $0 + $1.typos }
        let leastPrefixes = least.reduce(0) { $0 + $1.prefix }
        func classLimit(_ g: Int) -> ClassLimit {
            guard heap.isFull, let worst = heap.worst else { return .any }
            return ClassLimit(
                dropped: dropped,
                otherTypos: leastTypos - least[g].typos,
                otherPrefixes: leastPrefixes - least[g].prefix,
                worst: worst.bucket
            )
        }

        // The other words of few lists that only a term can satisfy (in the labels pass, a word its label can
        // satisfy matches anywhere): a stretch's records are tested against them all at once (`presence`), and only
        // those matching every one are visited.
        let screened = cursors.indices.filter { g in
            g != driving && cursors[g].lists.count <= 4 && !(labels && !cursors[g].labelled.isEmpty)
        }
        var stretchDocs: [UInt32] = []
        stretchDocs.reserveCapacity(InvertedIndex.blockSize)
        // The driving records of a stretch into `stretchDocs`.
        func gather(_ range: Range<Int>, _ doc: (Int) -> UInt32) {
            stretchDocs.removeAll(keepingCapacity: true)
            for i in range { stretchDocs.append(doc(i)) }
        }
        // Bits of the records of a stretch (at most 64, given by `doc(i)` for i in `range`) that every screened word
        // matches.
        func screen(_ range: Range<Int>, doc: (Int) -> UInt32) -> UInt64 {
            // Without an origin, once the page is full most records are refused by their bucket and score before any
            // other word is looked up, and screening them all would cost more than it saves (measured: CJK +20 %).
            guard !screened.isEmpty && (weighted || !heap.isFull) else { return range.count == 64 ? .max : (1 << UInt64(range.count)) - 1 }
            precondition(range.count <= 64, "a stretch fits in 64 bits")
            gather(range, doc)
            var bits = UInt64.max
            for g in screened where bits != 0 { bits &= cursors[g].presence(along: stretchDocs) }
            return bits
        }

        // With an origin, the positions and facts of a stretch's screened records are fetched together before they
        // are visited: a visit reads the record's position (its distance bound) and often its facts (its distance),
        // a cache miss apiece, which met record by record come one after another.
        var screenedDocs: [UInt32] = []
        screenedDocs.reserveCapacity(InvertedIndex.blockSize)
        func prefetch(_ bits: UInt64, _ doc: (Int) -> UInt32) {
            guard weighted else { return }
            screenedDocs.removeAll(keepingCapacity: true)
            var rest = bits
            while rest != 0 {
                screenedDocs.append(doc(rest.trailingZeroBitCount))
                rest &= rest - 1
            }
            prefetchPlaces(of: screenedDocs)
        }

        // What a visit reads of the words on every call, read once: the driving word's first list's class and idf,
        // and which words a label can satisfy (copying a cursor out of the array retains its fifteen arrays).
        let drivingMatch = (
            typos: cursors[driving].typos.first ?? 0, prefix: cursors[driving].prefixes.first ?? 0, idf: cursors[driving].idfs.first ?? 0
        )
        let hasLabel = cursors.map { !$0.labelled.isEmpty }
        func visit(_ doc: UInt32, at index: Int = -1, driven: InvertedIndex.Posting? = nil) {
            var typos = 0
            var prefixes = 0
            var attributes = 0
            var partial = 0.0
            // Whether the record's name may be the whole query (the test made below), known from the driving word's
            // match: if not, the record's best bucket is not a whole-name one, which lets far more records be
            // dropped early (the page's worst entry is rarely a whole-name match).
            var wholeNamePossible = true
            // The record's length (as its norm), once a posting of it is known: with it the words still to match are
            // bounded at that length, not at their lists' least (CJK −10 %). Not near an origin, where the distance
            // decides and the bound costs more than it refuses.
            var norm = weighted ? nil : driven?.norm
            // With an origin the score is multiplied by the distance decay: its cheap bound shrinks every bound below.
            let factor = weighted && heap.isFull ? decayBound(doc) : 1
            // A record with a word matched through its category label is at best in `labelFloor` (no typo, no prefix,
            // that word's attribute the label's, not a whole name): once the page's worst entry is better, no label
            // can change which records enter, and the category is not read (a cache miss per record).
            let labelsMatter = labels || weighted || !heap.isFull || !(heap.worst.map { $0.bucket < labelFloor } ?? false)
            for (i, g) in order.enumerated() {
                if (i > 0 || factor < 1) && heap.isFull {
                    let lowest = RankBucket.make(
                        dropped: dropped,
                        typos: typos,
                        prefixes: prefixes,
                        attributes: weighted ? 0 : attributes,
                        wholeName: weighted || wholeNamePossible
                    )
                    let rest = norm.map { remainingBound(from: i, norm: $0) } ?? remaining[i]
                    guard heap.admits(bucket: lowest, scoreBound: (partial + rest) * factor, firstDoc: doc) else { return }
                }
                let found: WordMatch?
                if i == 0, let driven {
                    // The driving word of one list matches through the posting being visited: as `match`, unsearched.
                    let attribute = driven.isInName ? RankBucket.name : RankBucket.other
                    var score = scorer.score(driven, idf: drivingMatch.idf)
                    if weighted { score *= RankBucket.weight(attribute: attribute) }
                    let own = WordMatch(typos: drivingMatch.typos, prefix: drivingMatch.prefix, attribute: attribute, score: score, posting: driven)
                    found = labelsMatter && hasLabel[g] ? cursors[g].withLabel(own, doc, ranker: self) : own
                } else if index >= 0, tables[g] != nil {
                    // As `match`: a label alone satisfies the word only in the labels pass.
                    let entry = tables[g].unsafelyUnwrapped[index]
                    found = entry != nil || labels ? (labelsMatter && hasLabel[g] ? cursors[g].withLabel(entry, doc, ranker: self) : entry) : nil
                } else {
                    found = cursors[g].match(doc, labels: labels, labelsMatter: labelsMatter, ranker: self)
                }
                guard let m = found else { return }
                matches[g] = m
                if norm == nil && !weighted { norm = m.posting?.norm }
                if i == 0 {
                    wholeNamePossible = dropped == 0 && m.posting.map { $0.isInName && $0.nameTokens == wholeNameTokens } ?? false
                }
                typos += m.typos
                prefixes += m.prefix
                attributes += m.attribute
                partial += m.score
            }
            if let posting = matches[driving].posting ?? matches.lazy.compactMap(\.posting).first {
                guard accepts(posting) else { return }
            } else {
                guard accepts(doc) else { return }
            }
            // The score is summed in the words' order, whatever order they were checked in.
            var score = matches.reduce(0.0) { $0 + $1.score }
            var wholeName = false
            if weighted {
                attributes = 0
                score *= decay(doc)
            } else if dropped == 0 && typos == 0 && prefixes == 0 && attributes == 0, let posting = matches[driving].posting,
                posting.nameTokens == wholeNameTokens
            {
                // Every word matched in the name: the name is the query only if it has as many tokens. The test reads
                // and normalizes the name, so it is made only when the record could enter the page at its best (a
                // page full of equal whole-name matches — a chain's name typed in full — refuses the rest unread).
                let asWhole = RankBucket.make(dropped: dropped, typos: 0, prefixes: 0, attributes: 0, wholeName: true)
                guard heap.admits(bucket: asWhole, scoreBound: score, firstDoc: doc) else { return }
                wholeName = hasWholeName(doc)
            }
            let bucket = RankBucket.make(dropped: dropped, typos: typos, prefixes: prefixes, attributes: attributes, wholeName: weighted || wholeName)
            if heap.admits(bucket: bucket, scoreBound: score, firstDoc: doc) { heap.offer(.init(bucket: bucket, score: score, doc: doc)) }
        }

        // With an origin, the best bucket a record of the stretch `range` of the driving records (given by `doc`) can
        // reach (attributes are weights there, and every bucket a whole-name one): the driving word at
        // `drivingClass`, each tabled word at the best class of its lists holding one of those records — a short
        // prefix's exact word rarely has one, so a page of its completions' matches refuses far stretches by their
        // score bound before their tables are filled ("Burger Kin", "Kahvila Ma", and "Kahvila M" in the labels pass:
        // a one-letter word is in the span of most stretches, but on few of its cafés) — and the others at their
        // least. Nil when a tabled word that must match holds none of them.
        func reach(_ range: Range<Int>, doc: (Int) -> UInt32, drivingClass: (typos: Int, prefix: Int)) -> UInt64? {
            var typos = drivingClass.typos
            var prefixes = drivingClass.prefix
            gather(range, doc)
            for g in cursors.indices where g != driving {
                var least = cursors[g].leastClass
                if tables[g] != nil && !(labels && !cursors[g].labelled.isEmpty) {
                    guard let found = cursors[g].bestClass(along: stretchDocs) else { return nil }
                    least = found
                }
                typos += least.typos
                prefixes += least.prefix
            }
            return RankBucket.make(dropped: dropped, typos: typos, prefixes: prefixes, attributes: 0, wholeName: true)
        }

        let source = cursors[driving]
        // Per word, its bound over the block or stretch being read (every entry is set before the entries are summed).
        var words = [WordBound?](repeating: nil, count: cursors.count)
        // The best bucket any record can reach in this pass (with an origin, attributes are weights, not buckets).
        let best = RankBucket.make(dropped: dropped, typos: 0, prefixes: 0, attributes: 0, wholeName: true)
        if !labels && source.lists.count == 1 {
            let list = source.lists[0]
            let bounds = s.text.blockBounds(of: source.terms[0])
            // With an origin (and blocks to order) the tables are filled block by block, for the blocks read below.
            // Without one, the first blocks read are filled one by one (`tabledBlocksFirst` at most, while the page
            // still needs most of the tabled lists), then every driving record at once from the lists that can still
            // reach the page (`fillTables`: "Central S" leaves out street, station, store and school).
            let tabling = cursors.indices.contains(where: { $0 != driving && cursors[$0].lists.count > 4 })
            var deferred = tabling && !weighted && !bounds.isEmpty
            var blocksTabled = 0
            let lazyTables = (weighted && !bounds.isEmpty) || deferred
            var drivingDocs: [UInt32] = []
            if tabling {
                drivingDocs = list.map(\.doc)
                for g in cursors.indices where g != driving && cursors[g].lists.count > 4 {
                    tables[g] =
                        lazyTables
                        ? [WordMatch?](repeating: nil, count: drivingDocs.count) : cursors[g].matches(along: drivingDocs, ranker: self)
                }
            }
            guard !bounds.isEmpty else {
                for (i, posting) in list.enumerated() { visit(posting.doc, at: i, driven: posting) }
                return
            }
            // Block-max: a block of the driving list is read only if the best bucket its records can reach and the
            // sum of every word's bound over them could still enter the page. The bucket is bounded word by word from
            // the blocks' contents (a word with no name posting among them matches there in other fields at best).
            // Blocks are read best bound first (with an origin, nearest first), so that the page fills with good
            // records early and raises the bar the later blocks must pass (without an origin too: three words
            // −10 % against record order); a block before the last one read sends the other words' cursors back to
            // the start, from where they gallop.
            let size = InvertedIndex.blockSize
            let boxes = s.text.blockBoxes(of: source.terms[0])
            let others = remaining[1]
            var order = blockOrder(count: bounds.count, byKey: true) { b in
                blockDecay(boxes[b]) * (max(bound(bounds[b], idf: source.idfs[0]), source.labelScore) * (1 + 1e-9) + others)
            }
            var lastRead = -1
            while let (b, key) = order.next() {
                // Refused whatever its first record, at the best bucket of all: so is every block after it.
                if heap.isFull && !heap.admits(bucket: best, scoreBound: key) { break }
                let start = b * size
                let end = min(list.count, start + size)
                let decay = weighted ? blockDecay(boxes[b]) : 1
                if weighted {
                    // The best bucket of all first (no search); then the block's own, which searches the tabled lists.
                    guard heap.admits(bucket: best, scoreBound: key, firstDoc: list[start].doc),
                        let reach = reach(start..<end, doc: { list[$0].doc }, drivingClass: (source.typos[0], source.prefixes[0])),
                        heap.admits(bucket: reach, scoreBound: key, firstDoc: list[start].doc)
                    else { continue }
                }
                if b < lastRead {
                    for g in cursors.indices { cursors[g].rewind() }
                }
                lastRead = b
                // (A page that never fills — fewer matches than its size — must not table every block one by one.)
                if deferred && (heap.isFull || blocksTabled >= Self.tabledBlocksFirst)
                    && fillTables(&tables, &cursors, along: drivingDocs, dropped: dropped, heap: heap, mayWait: blocksTabled < Self.tabledBlocksFirst)
                {
                    deferred = false
                }
                if deferred { blocksTabled += 1 }
                if weighted || deferred {
                    for g in cursors.indices where tables[g] != nil {
                        cursors[g].fill(&tables[g]!, along: drivingDocs, range: start..<end, ranker: self)
                    }
                }
                if heap.isFull {
                    let first = list[start].doc
                    let last = list[end - 1].doc
                    let own = bounds[b]
                    let labelled = !source.labelled.isEmpty
                    words[driving] = WordBound(
                        score: max(bound(own, idf: source.idfs[0]), labelled ? source.labelScore : 0),
                        typos: labelled ? 0 : source.typos[0],
                        prefix: labelled ? 0 : source.prefixes[0],
                        attribute: own.nameFrequency > 0 ? RankBucket.name : (labelled ? RankBucket.label : RankBucket.other),
                        nameScore: nameBound(own, idf: source.idfs[0])
                    )
                    var someMatch = true
                    // The block's records are no shorter than its least length: the other words' bounds are taken there.
                    let least = KeywordRanker.leastLength(own)
                    for g in cursors.indices where g != driving {
                        guard
                            let w = wordBound(
                                &cursors[g],
                                table: tables[g],
                                range: start..<end,
                                first: first,
                                last: last,
                                limit: classLimit(g),
                                least: least
                            )
                        else {
                            someMatch = false
                            break
                        }
                        words[g] = w
                    }
                    guard someMatch else { continue }
                    // Summed in the words' order, as a record's score is: rounding is monotonic, so the sum of the
                    // words' bounds in that order is never below a record's sum, where summed driving word first it
                    // could be one rounding below — and refuse, by the tie on record number, a block holding a record
                    // that ties the page's worst and should enter.
                    guard
                        admits(
                            words,
                            decay: decay,
                            dropped: dropped,
                            first: first,
                            heap: heap,
                            wholeName: {
                                (start..<end).contains { list[$0].isInName && list[$0].nameTokens == wholeNameTokens }
                            }
                        )
                    else { continue }
                }
                // Once only records with every word in the name (or only whole-name ones) can enter, the driving
                // word's own posting refuses the rest without a lookup.
                if heap.isFull && !weighted, let worst = heap.worst {
                    let needName = worst.bucket < RankBucket.make(dropped: dropped, typos: 0, prefixes: 0, attributes: 1, wholeName: false)
                    let needWhole = worst.bucket <= RankBucket.make(dropped: dropped, typos: 0, prefixes: 0, attributes: 0, wholeName: true)
                    if needName {
                        let tokens = min(queryTokens, InvertedIndex.Posting.manyNameTokens)
                        var bits = screen(start..<end) { list[$0].doc }
                        while bits != 0 {
                            let i = start + bits.trailingZeroBitCount
                            bits &= bits - 1
                            let posting = list[i]
                            guard posting.isInName, !needWhole || (dropped == 0 && posting.nameTokens == tokens) else { continue }
                            visit(posting.doc, at: i, driven: posting)
                        }
                        continue
                    }
                }
                var bits = screen(start..<end) { list[$0].doc }
                prefetch(bits) { list[start + $0].doc }
                while bits != 0 {
                    let i = start + bits.trailingZeroBitCount
                    bits &= bits - 1
                    visit(list[i].doc, at: i, driven: list[i])
                }
            }
        } else {
            let lists = (driving == soleLabelled ? [] : source.lists.map { $0.map(\.doc) }) + (labels ? source.members : [])
            let docs = lists.reduce([], Self.merge)
            // The driving records whose name may be the whole query (as `visit` tests it).
            let wholeDocs =
                weighted || dropped > 0 || driving == soleLabelled
                ? []
                : source.lists.map { Array($0.lazy.filter { $0.isInName && $0.nameTokens == wholeNameTokens }.map(\.doc)) }.reduce([], Self.merge)
            let tabled = cursors.indices.filter { $0 != driving && cursors[$0].lists.count > 4 }
            for g in tabled {
                tables[g] = weighted ? [WordMatch?](repeating: nil, count: docs.count) : cursors[g].matches(along: docs, ranker: self)
            }
            // A stretch where a tabled word that no label can satisfy matches no record is skipped whole.
            let required = tabled.filter { !labels || cursors[$0].labelled.isEmpty }
            let size = InvertedIndex.blockSize
            // With an origin, stretches are read nearest first, as blocks are above; their boxes are made here.
            let stretchCount = (docs.count + size - 1) / size
            var decays: [Double] = []
            if weighted {
                // A stretch's box is the box of the record numbers it spans, from the index's boxes of number ranges:
                // reading each record's position instead was a cache miss apiece, 15 % of the time near an origin.
                decays = (0..<stretchCount).map { k in
                    blockDecay(s.text.box(from: docs[k * size], through: docs[min(docs.count, (k + 1) * size) - 1]))
                }
            }
            var order = blockOrder(count: stretchCount) { weighted ? decays[$0] * remaining[0] : 0 }
            var lastRead = -1
            while let (k, key) = order.next() {
                if weighted && heap.isFull && !heap.admits(bucket: best, scoreBound: key) { break }
                let start = k * size
                let end = min(docs.count, start + size)
                if weighted {
                    // The best bucket of all first (no search); then the stretch's own.
                    guard heap.admits(bucket: best, scoreBound: key, firstDoc: docs[start]),
                        let reach = reach(start..<end, doc: { docs[$0] }, drivingClass: source.leastClass),
                        heap.admits(bucket: reach, scoreBound: key, firstDoc: docs[start])
                    else { continue }
                    for g in tabled { cursors[g].fill(&tables[g]!, along: docs, range: start..<end, ranker: self) }
                }
                if required.contains(where: { g in !(start..<end).contains { tables[g]![$0] != nil } }) { continue }
                if k < lastRead {
                    for g in cursors.indices { cursors[g].rewind() }
                }
                lastRead = k
                if heap.isFull {
                    // Block-max over a stretch of the driving word's records, as above, every word bounded alike (in
                    // the labels pass a word its label can satisfy matches anywhere, at the label's rank and score).
                    let (first, last) = (docs[start], docs[end - 1])
                    // The stretch's records are the driving word's: none is shorter than the least length of its blocks
                    // there, which bounds the others too (not in the labels pass when its label's members are among them).
                    var least: UInt16 = 0
                    var everyWord = true
                    for step in cursors.indices {
                        // The driving word first, then the others in their order.
                        let g = step == 0 ? driving : (step <= driving ? step - 1 : step)
                        let labelOnly =
                            labels && !cursors[g].labelled.isEmpty
                            ? WordBound(score: cursors[g].labelScore, typos: 0, prefix: 0, attribute: RankBucket.label, nameScore: nil) : nil
                        let w =
                            wordBound(&cursors[g], table: tables[g], range: start..<end, first: first, last: last, limit: classLimit(g), least: least)
                            ?? labelOnly
                        guard let w else {
                            everyWord = false
                            break
                        }
                        words[g] = w
                        if g == driving && !(labels && !source.members.isEmpty) { least = w.length }
                    }
                    guard everyWord else { continue }
                    guard
                        admits(
                            words,
                            decay: weighted ? decays[k] : 1,
                            dropped: dropped,
                            first: first,
                            heap: heap,
                            wholeName: {
                                guard !wholeDocs.isEmpty else { return false }
                                let at = KeywordRanker.gallop(wholeDocs, from: 0, to: first)
                                return at < wholeDocs.count && wholeDocs[at] <= last
                            }
                        )
                    else { continue }
                }
                var bits = screen(start..<end) { docs[$0] }
                prefetch(bits) { docs[start + $0] }
                while bits != 0 {
                    let i = start + bits.trailingZeroBitCount
                    bits &= bits - 1
                    visit(docs[i], at: i)
                }
            }
        }
    }

    /// Blocks of the driving word whose tables are filled one by one, without an origin, before all are filled at once.
    static let tabledBlocksFirst = 8

    /// Fills the tabled words' tables along every driving record, from the lists through which a record could still
    /// enter the page: matched through one of them at its best bucket (its class, the other words at their least,
    /// every word in the name, a whole name only as typed) and scoring its largest with the other words at theirs. A
    /// record that matches through a list left out better than through the lists kept cannot enter either way, so
    /// the entries of the records that can enter are as a full table's. `mayWait`: when most postings would still be
    /// read, nothing is filled and false is answered (the caller fills its next block alone and asks again).
    private func fillTables(
        _ tables: inout [[WordMatch?]?],
        _ cursors: inout [WordCursor],
        along driving: [UInt32],
        dropped: Int,
        heap: TopK,
        mayWait: Bool
    ) -> Bool {
        let least = cursors.map(\.leastClass)
        var fills: [(Int, WordCursor)] = []
        var keptPostings = 0
        var allPostings = 0
        for g in cursors.indices where tables[g] != nil {
            let others = cursors.indices.filter { $0 != g }
            let otherTypos = others.reduce(0) { $0 + least[$1].typos }
            let otherPrefixes = others.reduce(0) { $0 + least[$1].prefix }
            let otherScores = others.reduce(0.0) { $0 + cursors[$1].maxScore * (1 + 1e-9) }
            let cursor = cursors[g]
            let kept = cursor.keeping { l in
                let (typos, prefixes) = (cursor.typos[l] + otherTypos, cursor.prefixes[l] + otherPrefixes)
                // (A name is the whole query only as typed, every word matched exactly.)
                let bucket = RankBucket.make(
                    dropped: dropped,
                    typos: typos,
                    prefixes: prefixes,
                    attributes: 0,
                    wholeName: dropped == 0 && typos == 0 && prefixes == 0
                )
                return heap.admits(bucket: bucket, scoreBound: (cursor.listMaxScores[l] * (1 + 1e-9) + otherScores) * (1 + 1e-9))
            }
            keptPostings += kept.postingCount
            allPostings += cursor.postingCount
            fills.append((g, kept))
        }
        if mayWait && keptPostings * 2 > allPostings { return false }
        for (g, var kept) in fills { kept.fill(&tables[g]!, along: driving, range: driving.indices, ranker: self) }
        return true
    }

    /// Whether a stretch of records whose words are bounded by `bounds` (one a word, every one set) can still put a
    /// record in the page: one whose every word matches in the name (a better bucket than any other, scoring at most
    /// the name bounds' sum), or one with some word elsewhere (a worse bucket, scoring at most the bounds' sum). The
    /// bounds are summed in the words' order, as a record's score is, then multiplied by the stretch's distance
    /// `decay`. With an origin the attribute is a weight inside the score, not a bucket. `wholeName`: whether some
    /// record of the stretch may have the whole query as its name (asked only when that decides).
    private func admits(_ bounds: [WordBound?], decay: Double, dropped: Int, first: UInt32, heap: TopK, wholeName: () -> Bool) -> Bool {
        var words = bounds[0]!
        for w in bounds.dropFirst() { words.add(w!) }
        words.score *= decay
        func bucket(attributes: Int, wholeName: Bool) -> UInt64 {
            RankBucket.make(dropped: dropped, typos: words.typos, prefixes: words.prefix, attributes: attributes, wholeName: wholeName)
        }
        if query.origin != nil { return heap.admits(bucket: bucket(attributes: 0, wholeName: true), scoreBound: words.score, firstDoc: first) }
        if let nameTotal = words.nameScore, heap.admits(bucket: bucket(attributes: 0, wholeName: true), scoreBound: nameTotal, firstDoc: first) {
            // As good as the page's worst only as a whole name: the stretch must hold a record whose name may be the
            // whole query (a page of 20 "The Golden Dragon" in the name refuses the chain's 13 000 others by block,
            // where a stretch bound that assumed a whole name admitted every one).
            if heap.admits(bucket: bucket(attributes: 0, wholeName: false), scoreBound: nameTotal, firstDoc: first) { return true }
            if dropped == 0 && words.typos == 0 && words.prefix == 0 && wholeName() { return true }
        }
        return heap.admits(bucket: bucket(attributes: max(1, words.attribute), wholeName: false), scoreBound: words.score, firstDoc: first)
    }

    /// The best a word can do on the records from `first` to `last` (positions `range` of the driving records) in a
    /// pass where a label alone does not satisfy it: exactly, from its table of matches along the driving records,
    /// or from its lists' block bounds. Nil when none of those records can match it.
    private func wordBound(
        _ cursor: inout WordCursor,
        table: [WordMatch?]?,
        range: Range<Int>,
        first: UInt32,
        last: UInt32,
        limit: ClassLimit,
        least: UInt16 = 0
    ) -> WordBound? {
        guard let table else { return cursor.bound(from: first, to: last, limit: limit, least: least, ranker: self) }
        let labelled = !cursor.labelled.isEmpty
        var found: WordBound?
        for i in range {
            guard let m = table[i], limit.allows(typos: m.typos, prefix: m.prefix) else { continue }
            var w = found ?? WordBound(score: m.score, typos: m.typos, prefix: m.prefix, attribute: m.attribute, nameScore: nil)
            (w.score, w.typos, w.prefix, w.attribute) = (
                max(w.score, m.score), min(w.typos, m.typos), min(w.prefix, m.prefix), min(w.attribute, m.attribute)
            )
            if m.attribute == RankBucket.name { w.nameScore = max(w.nameScore ?? 0, m.score) }
            found = w
        }
        guard var w = found else { return nil }
        if labelled {
            // A label match (no typo, no prefix, the label's rank and score) may better a term match.
            (w.score, w.typos, w.prefix, w.attribute) = (max(w.score, cursor.labelScore), 0, 0, min(w.attribute, RankBucket.label))
        }
        return w
    }

    /// The union of two sorted duplicate-free lists, sorted and duplicate-free.
    static func merge(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
        if a.isEmpty { return b }
        if b.isEmpty { return a }
        var out: [UInt32] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0
        var j = 0
        while i < a.count && j < b.count {
            if a[i] == b[j] {
                out.append(a[i])
                i += 1
                j += 1
            } else if a[i] < b[j] {
                out.append(a[i])
                i += 1
            } else {
                out.append(b[j])
                j += 1
            }
        }
        out += a[i...]
        out += b[j...]
        return out
    }

    /// Two sorted lists of record numbers whose lengths differ by less than this factor are intersected by a merge
    /// step by step, whose reads are in order and whose branches mostly go the same way, where galloping in the
    /// longer makes a few far reads and mispredicted branches per record: 16 against 8, 32, 64 and galloping always,
    /// measured in one process on the keyword classes at 1 M (mean 98.2 µs against 98.8–99.3 and 101.7).
    static let mergeRatio = 16

    /// The first index at or after `start` whose record is at least `target`, by exponential then binary search.
    @inline(__always)
    static func gallop(_ list: FlatArray<InvertedIndex.Posting>, from start: Int, to target: UInt32) -> Int {
        gallop(count: list.count, from: start, to: target) { list[$0].doc }
    }

    /// The first index of `list` whose record is not below `target` (as `InvertedIndex.lowerBound`), searched for
    /// from `hint` outwards: galloping forward or backward, then a binary search between the last two steps — a few
    /// reads near the hint where a search of the whole list makes twenty far apart.
    static func lowerBound(_ list: FlatArray<InvertedIndex.Posting>, _ target: UInt32, near hint: Int) -> Int {
        lowerBound(count: list.count, target, near: hint) { list[$0].doc }
    }

    /// `lowerBound` over any sorted sequence of record numbers read by index.
    @inline(__always)
    static func lowerBound(count: Int, _ target: UInt32, near hint: Int, record: (Int) -> UInt32) -> Int {
        guard count > 0 else { return 0 }
        let h = min(max(hint, 0), count - 1)
        if record(h) < target { return gallop(count: count, from: h + 1, to: target, record: record) }
        // record(high) >= target throughout; step back until a record below target (or the start) is passed.
        var high = h
        var low = h - 1
        var step = 1
        while low >= 0 && record(low) >= target {
            high = low
            low -= step
            step *= 2
        }
        var first = max(low + 1, 0)
        while first < high {
            let middle = (first + high) / 2
            if record(middle) < target { first = middle + 1 } else { high = middle }
        }
        return first
    }

    /// `gallop` over a list of record numbers.
    @inline(__always)
    static func gallop(_ list: [UInt32], from start: Int, to target: UInt32) -> Int {
        gallop(count: list.count, from: start, to: target) { list[$0] }
    }

    /// The search itself, over any sorted sequence of record numbers read by index.
    @inline(__always)
    static func gallop(count: Int, from start: Int, to target: UInt32, record: (Int) -> UInt32) -> Int {
        var low = start
        var step = 1
        var high = start
        while high < count && record(high) < target {
            low = high + 1
            high += step
            step *= 2
        }
        high = min(high, count)
        while low < high {
            let mid = (low + high) / 2
            if record(mid) < target { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Whether the record's name normalizes to the whole query. The length test skips names that cannot be equal
    /// (normalizing never lengthens a name, and shortens it only by punctuation, spacing and diacritics).
    func hasWholeName(_ doc: UInt32) -> Bool {
        let meta = s.meta[Int(doc)]
        let queryLength = matcher.normalizedQuery.utf8.count
        guard !meta.isPin, Int(meta.nameLength) >= queryLength, Int(meta.nameLength) <= queryLength + queryLength / 2 + 4,
            let name = s.records.poiName(Int(doc))
        else { return false }
        return TextNormalizer.normalize(name) == matcher.normalizedQuery
    }
}
