import CPrefetch
import GeoCore
import HeapModule
import Records
import SnapshotFile
import Synchronization
import TextIndex

extension SearchEngine {
    /// Keyword search ranked by relevance (GET /v1/search), by the rules of `RankBucket`.
    ///
    /// Top-k without scoring every posting: a one-word query (the common case) is evaluated bucket by bucket, each
    /// bucket a few posting lists scanned block by block; a block whose BM25 bound (from its largest frequency and
    /// smallest length) cannot beat the current k-th result is skipped, and once the page is full no later bucket
    /// is read. A query of several words walks the smallest word's postings and checks the others by binary search.
    ///
    /// `total` is exact when the first word's matches come from at most `exactTotalLimit` postings; above that it is
    /// an estimate: the sum of the first word's posting-list and category sizes, before filters.
    public func search(_ query: SearchQuery) throws(SearchError) -> Page {
        try read { s throws(SearchError) in
            let matcher = self.matcher(query.text, s, deferTypos: true)
            guard !matcher.isEmpty else { throw .invalid(parameter: "q", rule: "must contain at least one letter or digit") }
            let ranker = KeywordRanker(engine: self, state: s, matcher: matcher, query: query)
            let entries = ranker.top(query.offset + query.limit + 1)
            let page = entries.dropFirst(query.offset).prefix(query.limit)
            let origin = query.origin
            s.records.prefetch(page.lazy.map(\.doc))
            let results = page.compactMap { entry -> Hit? in
                var distance: Double?
                if let origin {
                    let meta = s.meta[Int(entry.doc)]
                    distance = GreatCircle.distance(
                        latitude1: origin.latitude,
                        longitude1: origin.longitude,
                        latitude2: meta.latitude,
                        longitude2: meta.longitude
                    )
                }
                return hit(s, entry.doc, distance: distance, score: entry.score)
            }
            let nextOffset = query.offset + page.count
            return Page(results: results, next: entries.count > nextOffset ? .offset(nextOffset) : nil, total: ranker.total(atLeast: entries.count))
        }
    }

    static let exactTotalLimit = 4_096
}

/// One keyword query's evaluation over the engine state.
struct KeywordRanker {
    let engine: SearchEngine
    let s: EngineState
    let matcher: TextMatcher
    let query: SearchQuery
    /// BM25 at the index's average length, a posting's score in one division.
    let scorer: InvertedIndex.Scorer
    /// Tokens of the whole query, as a name that is the query has.
    let queryTokens: Int
    /// Neither a category nor a box filters the records (read once: the hot loops test it per posting).
    let unfiltered: Bool
    /// With an origin, the least distance to a block's box.
    let distanceFloor: DistanceFloor?

    init(engine: SearchEngine, state: EngineState, matcher: TextMatcher, query: SearchQuery) {
        self.engine = engine
        self.s = state
        self.matcher = matcher
        self.query = query
        scorer = InvertedIndex.Scorer(averageLength: state.text.averageLength)
        queryTokens = Tokenizer.tokens(matcher.normalizedQuery).count
        unfiltered = query.categories.isEmpty && query.bbox == nil
        distanceFloor = query.origin.map { DistanceFloor(from: $0) }
    }

    /// Whether the record of a posting passes the query's filters: without a category or box, the posting's mark
    /// tells its kind (postings exist only for live records), and the record's facts are not read.
    @inline(__always)
    func accepts(_ posting: InvertedIndex.Posting) -> Bool {
        guard unfiltered else { return accepts(posting.doc) }
        return query.kind.includes(posting.isMarked ? .pin : .poi)
    }

    /// Whether a record passes the query's filters.
    @inline(__always)
    func accepts(_ doc: UInt32) -> Bool {
        let meta = s.meta[Int(doc)]
        guard meta.live, query.kind.includes(meta.isPin ? .pin : .poi) else { return false }
        if !query.categories.isEmpty, !query.categories.admits(s.category(of: doc)) { return false }
        if let bbox = query.bbox, !bbox.contains(latitude: meta.latitude, longitude: meta.longitude) { return false }
        return true
    }

    @inline(__always)
    func decay(_ doc: UInt32) -> Double {
        guard let origin = query.origin else { return 1 }
        let meta = s.meta[Int(doc)]
        return RankBucket.decay(
            metres: GreatCircle.distance(
                latitude1: origin.latitude,
                longitude1: origin.longitude,
                latitude2: meta.latitude,
                longitude2: meta.longitude
            )
        )
    }

    /// An upper bound of `decay(doc)` without trigonometry: the meridian arc R·|Δφ| is never longer than the
    /// great-circle distance, so its decay is never smaller (with a margin for rounding). Far records — most of a
    /// common word's postings — are so refused with one subtraction instead of a haversine.
    @inline(__always)
    func decayBound(_ doc: UInt32) -> Double {
        guard let origin = query.origin else { return 1 }
        // The text index's Float latitude is within 1.1e-5° of the record's: the margin keeps the bound above the decay.
        let degrees = max(0, abs(Double(s.text.position(of: doc).latitude) - origin.latitude) - 2e-5)
        let metres = degrees * (.pi / 180) * GreatCircle.earthRadius
        return RankBucket.decay(metres: metres) * (1 + 1e-9)
    }

    /// With an origin, at most the distance decay of any record of a block: from the least distance to its box
    /// (widened by the Float positions' rounding). Records are numbered along a Hilbert curve, so a block's box is
    /// small and most of a common word's blocks are far: their bound refuses them whole.
    @inline(__always)
    func blockDecay(_ box: InvertedIndex.BlockBox) -> Double {
        guard let distanceFloor else { return 1 }
        let margin = 2e-5
        let metres = distanceFloor.metres(
            south: Double(box.south) - margin,
            north: Double(box.north) + margin,
            west: Double(box.west) - margin,
            east: Double(box.east) + margin
        )
        return RankBucket.decay(metres: metres) * (1 + 1e-9)
    }

    /// The order to read blocks in: with an origin, or `byKey`, by `key(block)` (the most a block can score, its
    /// distance decay included) from the highest, so that the page fills with good (near) records first and later
    /// blocks are refused by their bound; otherwise by record number. Blocks `include` refuses are left out.
    func blockOrder(count: Int, include: (Int) -> Bool = { _ in true }, byKey: Bool = false, key: (Int) -> Double) -> BlockOrder {
        var blocks: [BlockOrder.Ranked] = []
        blocks.reserveCapacity(count)
        for b in 0..<count where include(b) { blocks.append(.init(block: b, key: key(b))) }
        return BlockOrder(blocks, byKey: query.origin != nil || byKey, lazily: query.origin != nil)
    }

    /// Blocks and their keys in the order to read them (`KeywordRanker.blockOrder`). By key, the blocks can be a heap
    /// popped one at a time (`lazily`, swift-collections' `Heap`): near an origin a reader meets a key no record can
    /// reach after a few far-off blocks and stops there (`isOrderedByKey`) — of a one-word query's 190 blocks, 5 on
    /// average — so sorting them all would be wasted. After `popsBeforeSort` pops the rest is sorted at once, which
    /// costs less than popping it block by block. Without an origin the keys differ little and most blocks are read:
    /// they are sorted at once.
    struct BlockOrder: Sequence, IteratorProtocol {
        /// A block ranks above another with a higher key, or the same key and a lower number (read first).
        struct Ranked: Comparable {
            let block: Int
            let key: Double

            static func < (a: Ranked, b: Ranked) -> Bool { a.key != b.key ? a.key < b.key : a.block > b.block }
        }

        private var heap = Heap<Ranked>()
        /// The blocks in the order to read them from `cursor` on: all of them when not read lazily, else the rest once
        /// `popsBeforeSort` were popped.
        private var ordered: [Ranked] = []
        private var cursor = 0
        private var pops = 0
        /// The blocks come from the highest key down: one whose key cannot enter means none after it can.
        let isOrderedByKey: Bool

        static let popsBeforeSort = 32

        init(_ ranked: [Ranked], byKey: Bool, lazily: Bool) {
            isOrderedByKey = byKey
            if !byKey {
                ordered = ranked
            } else if lazily {
                heap = Heap(ranked)
            } else {
                ordered = ranked.sorted(by: >)
            }
        }

        mutating func next() -> (block: Int, key: Double)? {
            if pops == Self.popsBeforeSort && !heap.isEmpty {
                ordered = heap.unordered.sorted(by: >)
                heap = Heap()
            }
            if let top = heap.popMax() {
                pops += 1
                return (top.block, top.key)
            }
            guard cursor < ordered.count else { return nil }
            defer { cursor += 1 }
            return (ordered[cursor].block, ordered[cursor].key)
        }
    }

    /// The most a posting of a block can score: BM25 of its largest frequency and smallest length, per field kind
    /// (with an origin, the other fields' weight applied). `least`: the postings sought are of records no shorter
    /// (the records of another word, whose postings of one record share its length).
    func bound(_ block: InvertedIndex.BlockBound, idf: Double, least: UInt16 = 0) -> Double {
        var most = 0.0
        if block.nameFrequency > 0 {
            most = scorer.bm25(frequency: block.nameFrequency, length: max(block.nameLength, least), idf: idf)
        }
        if block.otherFrequency > 0 {
            let weight = query.origin != nil ? RankBucket.weight(attribute: RankBucket.other) : 1
            most = max(
                most,
                scorer.bm25(frequency: block.otherFrequency, length: max(block.otherLength, least), idf: idf)
                    * weight
            )
        }
        return most
    }

    /// The most a posting of a block in the name field can score (of records no shorter than `least`); nil when the
    /// block has none there.
    func nameBound(_ block: InvertedIndex.BlockBound, idf: Double, least: UInt16 = 0) -> Double? {
        guard block.nameFrequency > 0 else { return nil }
        return scorer.bm25(frequency: block.nameFrequency, length: max(block.nameLength, least), idf: idf)
    }

    /// A posting's score as a match through it counts (with an origin, weighted by its field).
    @inline(__always)
    func matchScore(_ posting: InvertedIndex.Posting, idf: Double) -> Double {
        let score = scorer.score(posting, idf: idf)
        return query.origin != nil ? score * RankBucket.weight(attribute: posting.isInName ? RankBucket.name : RankBucket.other) : score
    }

    /// The least length of a block's postings: every posting of a record has the record's length, so the records
    /// of a block match other words with postings no shorter either.
    static func leastLength(_ block: InvertedIndex.BlockBound) -> UInt16 {
        min(block.nameFrequency > 0 ? block.nameLength : .max, block.otherFrequency > 0 ? block.otherLength : .max)
    }

    /// The best `k` records, best first.
    func top(_ k: Int) -> [TopK.Entry] {
        var heap = TopK(capacity: k)
        // The query read as pinyin from a name's start first (one term and its completions: cheap): when it fills the
        // page, the words as typed are read only through the lists that can still reach it — "安ta" does not merge
        // every 安 with the 64 completions of "ta" when 安踏's pinyin has filled the page with better tiers.
        rankReadings(matcher.readings.filter { $0.rank != .pairs }, into: &heap)
        // The pinyin of character pairs anywhere in a name goes in after the words as typed with none dropped: its
        // tiers come after theirs and before any word dropped.
        rankTyped(matcher.groups, into: &heap) { heap in rankReadings(matcher.readings.filter { $0.rank == .pairs }, into: &heap) }
        // Words matched through typos rank after every pinyin match: asked for only when the page has room for them.
        if matcher.typosDeferred && !heap.isFull {
            let typed = TextMatcher(query.text, index: s.text, taxonomy: engine.taxonomy, known: (engine.wordCursors, s.generation))
            KeywordRanker(engine: engine, state: s, matcher: typed, query: query).rankTyped(typed.groups, into: &heap)
        }
        return heap.sorted()
    }

    /// Ranks the words as typed into the page: all of them, then dropping words from the end while the page has room
    /// (`afterAll` runs between the first pass and the others).
    private func rankTyped(_ groups: [TextMatcher.Group], into heap: inout TopK, afterAll: (inout TopK) -> Void = { _ in }) {
        let m = groups.count
        for dropped in 0..<m where dropped == 0 || !heap.isFull {
            let active = m - dropped
            let level = RankBucket.level(dropped: dropped, reading: .typed)
            if let reachable = Self.reachable(Array(groups[0..<active]), level: level, heap: heap) {
                if active == 1 {
                    rankOneWord(reachable[0], dropped: level, wholeQuery: m == 1, into: &heap)
                } else {
                    rankAllWords(reachable, dropped: level, into: &heap)
                }
            }
            if dropped == 0 { afterAll(&heap) }
        }
    }

    /// Ranks readings of the query as pinyin (best tier first) into the page, while their tier can still enter it.
    private func rankReadings(_ readings: [TextMatcher.Reading], into heap: inout TopK) {
        for reading in readings {
            let level = RankBucket.level(dropped: 0, reading: reading.rank)
            let best = RankBucket.make(dropped: level, typos: 0, prefixes: 0, attributes: 0, wholeName: true)
            guard heap.admits(bucket: best, scoreBound: .infinity) else { return }
            let ranker = KeywordRanker(
                engine: engine,
                state: s,
                matcher: TextMatcher(groups: reading.groups, normalizedQuery: matcher.normalizedQuery),
                query: query
            )
            guard let groups = Self.reachable(reading.groups, level: level, heap: heap) else { continue }
            if groups.count == 1 {
                ranker.rankOneWord(groups[0], dropped: level, wholeQuery: false, into: &heap)
            } else {
                ranker.rankAllWords(groups, dropped: level, into: &heap)
            }
        }
    }

    /// The groups with only the expansions through which a record can still enter a full page: a match through one
    /// has at least its typos and prefix, the other groups at least their least (a label: none), which gives a bucket
    /// the page's worst must not beat. Nil when a group keeps nothing (no record can enter). A record that also
    /// matches through a kept expansion is still found, with that better class.
    static func reachable(_ groups: [TextMatcher.Group], level: Int, heap: TopK) -> [TextMatcher.Group]? {
        guard heap.isFull, let worst = heap.worst else { return groups }
        let least = groups.map { group -> (typos: Int, prefixes: Int) in
            guard group.categories.isEmpty else { return (0, 0) }
            return (
                group.expansions.map { Int($0.typos) }.min() ?? 0,
                group.expansions.map { $0.kind == .prefix ? 1 : 0 }.min() ?? 0
            )
        }
        let total = least.reduce((typos: 0, prefixes: 0)) { ($0.typos + $1.typos, $0.prefixes + $1.prefixes) }
        var kept = groups
        for g in groups.indices {
            let others = (typos: total.typos - least[g].typos, prefixes: total.prefixes - least[g].prefixes)
            kept[g].expansions = groups[g].expansions.filter { e in
                let typos = others.typos + Int(e.typos)
                let prefixes = others.prefixes + (e.kind == .prefix ? 1 : 0)
                return RankBucket.make(dropped: level, typos: typos, prefixes: prefixes, attributes: 0, wholeName: true) <= worst.bucket
            }
            if kept[g].expansions.isEmpty && kept[g].categories.isEmpty { return nil }
        }
        return kept
    }

    // MARK: One word, bucket by bucket

    /// What a bucket reads: postings of a term in name or other fields, the records whose whole name is a term,
    /// or the members of the word's label categories.
    enum Source {
        case postings(term: Int32, inName: Bool, weight: Double)
        case wholeName(term: Int32)
        case label(members: [[UInt32]], categories: [String], score: Double)
    }

    func rankOneWord(_ group: TextMatcher.Group, dropped: Int, wholeQuery: Bool, into heap: inout TopK) {
        // A word as typed has one exact term; a pair of pinyin pieces may have several (肯德 and 啃得 of "kende").
        let exacts = group.expansions.filter { $0.kind == .exact }.map(\.term)
        let exact = exacts.first
        let prefixes = group.expansions.filter { $0.kind == .prefix }.map(\.term)
        let typos = group.expansions.filter { $0.kind == .typo }
        let members = s.members(ofCategoriesUnder: group.categories)
        let labelScore = members.isEmpty ? 0 : s.text.idf(documentFrequency: members.reduce(0) { $0 + $1.count }) * 0.8
        func bucket(typos: Int = 0, prefix: Bool = false, attribute: Int = 0, wholeName: Bool = false) -> UInt64 {
            RankBucket.make(dropped: dropped, typos: typos, prefixes: prefix ? 1 : 0, attributes: attribute, wholeName: wholeName)
        }
        var buckets: [(UInt64, [Source])] = []
        if query.origin == nil {
            if let exact, wholeQuery, s.text.terms[Int(exact)] == matcher.normalizedQuery {
                buckets.append((bucket(wholeName: true), [.wholeName(term: exact)]))
            }
            if !exacts.isEmpty { buckets.append((bucket(), exacts.map { .postings(term: $0, inName: true, weight: 1) })) }
            if !members.isEmpty {
                buckets.append((bucket(attribute: RankBucket.label), [.label(members: members, categories: group.categories, score: labelScore)]))
            }
            if !exacts.isEmpty { buckets.append((bucket(attribute: RankBucket.other), exacts.map { .postings(term: $0, inName: false, weight: 1) })) }
            if !prefixes.isEmpty {
                buckets.append((bucket(prefix: true), prefixes.map { .postings(term: $0, inName: true, weight: 1) }))
                buckets.append((bucket(prefix: true, attribute: RankBucket.other), prefixes.map { .postings(term: $0, inName: false, weight: 1) }))
            }
            for edits in 1...2 {
                let terms = typos.filter { Int($0.typos) == edits }.map(\.term)
                guard !terms.isEmpty else { continue }
                buckets.append((bucket(typos: edits), terms.map { .postings(term: $0, inName: true, weight: 1) }))
                buckets.append((bucket(typos: edits, attribute: RankBucket.other), terms.map { .postings(term: $0, inName: false, weight: 1) }))
            }
        } else {
            let other = RankBucket.weight(attribute: RankBucket.other)
            func both(_ terms: [Int32]) -> [Source] {
                terms.map { .postings(term: $0, inName: true, weight: 1) } + terms.map { .postings(term: $0, inName: false, weight: other) }
            }
            var first = both(exacts)
            if !members.isEmpty { first.append(.label(members: members, categories: group.categories, score: labelScore)) }
            if !first.isEmpty { buckets.append((bucket(), first)) }
            if !prefixes.isEmpty { buckets.append((bucket(prefix: true), both(prefixes))) }
            for edits in 1...2 {
                let terms = typos.filter { Int($0.typos) == edits }.map(\.term)
                if !terms.isEmpty { buckets.append((bucket(typos: edits), both(terms))) }
            }
        }
        for (bucket, sources) in buckets {
            // Once the page is full of better buckets, nothing later can enter.
            if heap.isFull, let worst = heap.worst, worst.bucket < bucket { return }
            for source in sources { read(source, bucket: bucket, into: &heap) }
        }
    }

    private func read(_ source: Source, bucket: UInt64, into heap: inout TopK) {
        switch source {
        case .postings(let term, let inName, let weight):
            let list = s.text.postings(of: term)
            let idf = s.text.idf(documentFrequency: list.count) * weight
            let bounds = s.text.blockBounds(of: term)
            let boxes = s.text.blockBoxes(of: term)
            list.withUnsafeBufferPointer { postings in
                if bounds.isEmpty {
                    scan(postings[...], inName: inName, idf: idf, bucket: bucket, into: &heap)
                    return
                }
                var order = blockOrder(count: bounds.count, include: { (inName ? bounds[$0].nameFrequency : bounds[$0].otherFrequency) > 0 }) { b in
                    let bound = bounds[b]
                    let frequency = inName ? bound.nameFrequency : bound.otherFrequency
                    let length = inName ? bound.nameLength : bound.otherLength
                    // The same arithmetic as a posting's score, on the block's extremes: a posting with those values
                    // scores exactly the bound, and any other lower by far more than rounding.
                    let limit = scorer.bm25(frequency: frequency, length: length, idf: idf)
                    return query.origin == nil ? limit : limit * blockDecay(boxes[b])
                }
                while let (b, limit) = order.next() {
                    let start = b * InvertedIndex.blockSize
                    guard heap.admits(bucket: bucket, scoreBound: limit, firstDoc: postings[start].doc) else {
                        // Refused whatever its first record: so is every block after it.
                        if order.isOrderedByKey && !heap.admits(bucket: bucket, scoreBound: limit) { break }
                        continue
                    }
                    scan(
                        postings[start..<min(postings.count, start + InvertedIndex.blockSize)],
                        inName: inName,
                        idf: idf,
                        bucket: bucket,
                        into: &heap
                    )
                }
            }
        case .wholeName(let term):
            // The whole-name records are a sorted subset of the term's postings: one forward gallop finds them all.
            let list = s.text.postings(of: term)
            let idf = s.text.idf(documentFrequency: list.count)
            var at = 0
            for doc in s.text.wholeNameDocuments(of: term) {
                at = Self.gallop(list, from: at, to: doc)
                guard at < list.count, list[at].doc == doc else { continue }
                let posting = list[at]
                let score = scorer.score(posting, idf: idf)
                if heap.admits(bucket: bucket, scoreBound: score, firstDoc: doc) && accepts(posting) {
                    heap.offer(.init(bucket: bucket, score: score, doc: doc))
                }
            }
        case .label(let lists, _, let score):
            if query.origin != nil, query.kind.includes(.poi), lists.reduce(0, { $0 + $1.count }) > Self.labelWalkThreshold {
                walkNearest(lists, score: score, bucket: bucket, into: &heap)
                return
            }
            for members in lists {
                for doc in members {
                    if query.origin == nil {
                        // Equal scores: in record order, the first record refused ends this list.
                        guard heap.admits(bucket: bucket, scoreBound: score, firstDoc: doc) else { break }
                        if accepts(doc) { heap.offer(.init(bucket: bucket, score: score, doc: doc)) }
                    } else if heap.admits(bucket: bucket, scoreBound: score * decayBound(doc), firstDoc: doc), accepts(doc) {
                        let value = score * decay(doc)
                        if heap.admits(bucket: bucket, scoreBound: value, firstDoc: doc) { heap.offer(.init(bucket: bucket, score: value, doc: doc)) }
                    }
                }
            }
        }
    }

    /// A label's members near an origin, nearest first: every label match scores the same before its decay, so the
    /// best are the nearest, and bounding every café of the world one by one would read all their facts. Records are
    /// numbered along a Hilbert curve, so the text index's boxes of number ranges (`InvertedIndex.box(from:through:)`)
    /// are small: ranges are read from the highest decay bound down, a wide range split into its narrow ones when it
    /// holds many members, and the walk stops at the first range no member of which could enter the page. Only the
    /// members of the ranges read are looked at — not the other records around the origin, as a walk of the R-tree
    /// would, whose leaves then became resident from every corner of the world.
    private func walkNearest(_ lists: [[UInt32]], score: Double, bucket: UInt64, into heap: inout TopK) {
        struct Stretch: Comparable {
            let first: UInt32
            let size: UInt32
            let key: Double

            /// From the highest key; equal keys in record order.
            static func < (a: Stretch, b: Stretch) -> Bool { a.key != b.key ? a.key < b.key : a.first > b.first }
        }
        let wide = UInt32(InvertedIndex.wideRangeSize)
        let narrow = UInt32(InvertedIndex.rangeSize)
        // A wide range's narrow ones fit the bits of a word.
        assert(wide / narrow <= 64)
        func stretch(_ first: UInt32, _ size: UInt32) -> Stretch {
            Stretch(first: first, size: size, key: blockDecay(s.text.box(from: first, through: first + (size - 1))))
        }
        // Members of every list numbered in `first..<end` (lists are sorted).
        func members(_ first: UInt32, _ end: UInt32) -> [Range<Int>] {
            lists.map { $0.lowerBound(of: first)..<$0.lowerBound(of: end) }
        }
        let count = UInt32(clamping: s.meta.count)
        var order = Heap<Stretch>(stride(from: 0, to: count, by: Int(wide)).map { stretch($0, min(wide, count - $0)) })
        while let top = order.popMax() {
            guard heap.admits(bucket: bucket, scoreBound: score * top.key) else { break }
            let spans = members(top.first, top.first + top.size)
            let total = spans.reduce(0) { $0 + $1.count }
            if total == 0 { continue }
            if top.size > narrow && total > Self.membersReadWhole {
                // Only the narrow ranges that hold a member (marked in one pass over the members): their boxes are
                // tighter than the wide one's.
                var held: UInt64 = 0
                for (list, span) in zip(lists, spans) {
                    for doc in list[span] { held |= 1 << UInt64((doc - top.first) / narrow) }
                }
                while held != 0 {
                    let first = top.first + UInt32(held.trailingZeroBitCount) * narrow
                    held &= held - 1
                    order.insert(stretch(first, min(narrow, top.first + top.size - first)))
                }
                continue
            }
            for (list, span) in zip(lists, spans) {
                for doc in list[span] {
                    guard heap.admits(bucket: bucket, scoreBound: score * decayBound(doc), firstDoc: doc), accepts(doc) else { continue }
                    let value = score * decay(doc)
                    if heap.admits(bucket: bucket, scoreBound: value, firstDoc: doc) { heap.offer(.init(bucket: bucket, score: value, doc: doc)) }
                }
            }
        }
    }

    /// Members of a wide range above which its narrow ranges are read one by one, nearest first.
    static let membersReadWhole = 64

    /// Asks for the cache lines of the records' positions (their distance bounds) and facts (their distances) at
    /// once: read record by record near an origin, they are cache misses that come one after another.
    func prefetchPlaces(of docs: some Sequence<UInt32>) {
        s.text.withPositions { positions in
            s.meta.withUnsafeBufferPointer { meta in
                for doc in docs.lazy.map({ Int($0) }) {
                    if doc < positions.count { poi_prefetch(positions.baseAddress! + doc) }
                    if doc < meta.count { poi_prefetch(meta.baseAddress! + doc) }
                }
            }
        }
    }

    @inline(__always)
    private func scan(_ postings: Slice<UnsafeBufferPointer<InvertedIndex.Posting>>, inName: Bool, idf: Double, bucket: UInt64, into heap: inout TopK)
    {
        if query.origin != nil { prefetchPlaces(of: postings.lazy.filter { $0.isInName == inName }.map(\.doc)) }
        for posting in postings where posting.isInName == inName {
            var score = scorer.score(posting, idf: idf)
            guard heap.admits(bucket: bucket, scoreBound: score, firstDoc: posting.doc) else { continue }
            if query.origin != nil {
                guard heap.admits(bucket: bucket, scoreBound: score * decayBound(posting.doc), firstDoc: posting.doc) else { continue }
                score *= decay(posting.doc)
                guard heap.admits(bucket: bucket, scoreBound: score, firstDoc: posting.doc) else { continue }
            }
            if accepts(posting) { heap.offer(.init(bucket: bucket, score: score, doc: posting.doc)) }
        }
    }

    /// Label members above which, with an origin, the nearest are found by `walkNearest`.
    static let labelWalkThreshold = 4_096
}
