import CPrefetch
import Catalog
import GeoCore
import HeapModule
import SnapshotFile
import Synchronization
import TextIndex

/// Keyword ranking as a list of rules applied in order (Meilisearch's ranking rules):
/// 1. **words**: records matching every query word first; then, dropping words from the end of the query one at a
///    time (Meilisearch's default "last" matching strategy), records matching the rest;
/// 2. **typo**: fewer typos first;
/// 3. **exactness**: words as typed before prefix completions;
/// 4. **attribute**: words in the name before a category label before the address, city and other fields;
///    a name that is the whole query first;
/// 5. **BM25** (the sum over words of the best match's score) within those buckets; ties by record number.
/// With an origin, rules 4 and 5 become one score — BM25 weighted by field (name 1, label 1, other 0.5) times a
/// distance decay 1 / (1 + d / 2 km) — so near matches rise above far ones of the same bucket.
///
/// A rule bucket is a `UInt64` compared before the score (`TopK.Entry`).
enum RankBucket {
    /// How a query was read, ranked within one number of words dropped (`level`).
    enum Reading: Int {
        /// The words as typed.
        case typed = 0
        /// Full pinyin (or Han and pinyin mixed) from the start of a run of Han in a name: "xingbake" for 星巴克(…店).
        case runStart = 1
        /// Initials from the start of a run: "xbk".
        case runStartInitials = 2
        /// Pinyin of neighbouring characters anywhere in a name: "bake" for 星巴克, "ligong" for 北京理工大学.
        case pairs = 3
    }

    /// The first rule's rank, of words dropped and of how the query was read. Passed as `dropped` to the rank
    /// functions, which hand it to `make`; only 0 (nothing dropped, words as typed) allows a whole-name match.
    static func level(dropped: Int, reading: Reading) -> Int { dropped * 8 + reading.rawValue }

    /// The tier of a match within its number of words dropped, from how the query was read and the match's typos
    /// and prefixes: words as typed exactly (0); full pinyin from a run's start exactly (1); words as typed completed,
    /// and full pinyin from a run's start as typed — tied, so that near an origin the nearer wins, "ant" for 安踏 or
    /// for Antipolo (2); initials from a run's start (3); pinyin elsewhere in a name (4); pinyin read in a way the
    /// phrase table does not give it (5); words as typed with typos (6). So a Latin word keeps its Latin matches first
    /// ("man", "bank", "tea"), and pinyin typed in full beats a Latin word's completions and typos ("dasha" is 大厦
    /// before the city Dashan, "lining" 李宁 before Jining). Non-decreasing in typos and prefixes, as the bounds of
    /// the rank functions require.
    static func tier(level: Int, typos: Int, prefixes: Int) -> Int {
        switch Reading(rawValue: level % 8) ?? .pairs {
        case .typed: return typos > 0 ? 6 : (prefixes > 0 ? 2 : 0)
        case .runStart: return typos > 0 ? 5 : (prefixes > 0 ? 2 : 1)
        case .runStartInitials: return typos > 0 ? 5 : 3
        case .pairs: return typos > 0 ? 5 : 4
        }
    }

    static func make(dropped level: Int, typos: Int, prefixes: Int, attributes: Int, wholeName: Bool) -> UInt64 {
        let first = (level / 8) * 8 + tier(level: level, typos: typos, prefixes: prefixes)
        return UInt64(first) << 48 | UInt64(typos) << 36 | UInt64(prefixes) << 24 | UInt64(attributes) << 8 | (wholeName ? 0 : 1)
    }

    /// Attribute ranks of rule 4.
    static let name = 0
    static let label = 1
    static let other = 2

    /// Field weights with an origin.
    static func weight(attribute: Int) -> Double { attribute == other ? 0.5 : 1 }

    /// Distance decay with an origin.
    static func decay(metres: Double) -> Double { 1 / (1 + metres / 2_000) }
}

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
        case .label(let lists, let categories, let score):
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

    // MARK: Several words

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

    // MARK: Total

    /// The records matching the first word (every result matches it): exact when that is at most
    /// `exactTotalLimit` postings, else the sum of its list sizes. Never less than the results found.
    func total(atLeast found: Int) -> Int {
        guard let group = matcher.groups.first else { return 0 }
        if !matcher.readings.isEmpty {
            // Read as pinyin too: an estimate, the first group's postings of each reading added to the words' total.
            let read = matcher.readings.reduce(0) { sum, reading in
                sum + (reading.groups.first?.expansions.reduce(0) { $0 + s.text.documentFrequency($1.term) } ?? 0)
            }
            return max(found, total(of: group, atLeast: 0) + read)
        }
        return total(of: group, atLeast: found)
    }

    /// The total of the words as typed, `group` the first word's.
    private func total(of group: TextMatcher.Group, atLeast found: Int) -> Int {
        let lists = group.expansions.map { s.text.postings(of: $0.term) }
        let members = s.members(ofCategoriesUnder: group.categories)
        let size = lists.reduce(0) { $0 + $1.count } + members.reduce(0) { $0 + $1.count }
        // Posting lists hold live records only: without a filter, one list's size is its exact count.
        let otherKindExists = query.kind == .poi ? !s.pinNumbers.isEmpty : (query.kind == .pin ? s.poiIDs.count > 0 : false)
        if query.categories.isEmpty && query.bbox == nil && !otherKindExists && lists.count + members.count == 1 { return size }
        guard size <= SearchEngine.exactTotalLimit else { return max(found, size) }
        // Without a category or box the count depends on the word and the kind only: counted once per state.
        let cached = query.categories.isEmpty && query.bbox == nil
        if cached, let known = engine.wordCursors.total(of: group, kind: query.kind, generation: s.generation) { return known }
        var marks = engine.scratchPool.withLock { $0.popLast() } ?? VisitMarks()
        marks.ensure(count: s.meta.count)
        defer {
            marks.reset()
            engine.scratchPool.withLock { pool in if pool.count < 4 { pool.append(marks) } }
        }
        var count = 0
        // A posting tells its record's kind: without a category or box the records themselves are not read.
        for list in lists { for posting in list where marks.visit(posting.doc) && accepts(posting) { count += 1 } }
        for list in members { for doc in list where marks.visit(doc) && accepts(doc) { count += 1 } }
        if cached { engine.wordCursors.store(total: count, of: group, kind: query.kind, generation: s.generation) }
        return count
    }
}

/// Keyword query words compiled against one state of the engine: a word's groups (`TextMatcher`: its expansions and
/// labels, found in the dictionary and the taxonomy), and its cursor (`KeywordRanker.WordCursor` as made, before a
/// query moves it: the posting lists, idfs, labels and bounds — for a common word, its thousand blocks read for the
/// best; for a short prefix, its 65 lists). Each is found once and copied to every later query with the word, not
/// found again (of a query's time at 1 M, 5 % went to making cursors and 3 % to finding groups). A cursor is keyed by
/// its group and by whether the query has an origin (which weighs the bounds); a first word's total without filters,
/// by its group and the kind asked for (counting a common word's records on every query was 2 % of the keyword
/// classes' engine time). Emptied when the state changes (`SearchEngine.write` empties it first, and an entry made
/// from another state is never answered), and when it holds `capacity` entries of a kind.
final class WordCursorCache: Sendable {
    struct Key: Hashable, Sendable {
        let expansions: [InvertedIndex.Expansion]
        let categories: [String]
        let weighted: Bool
    }

    static let capacity = 4_096
    private let entries = Mutex<(generation: UInt64, cursors: [Key: KeywordRanker.WordCursor])>((0, [:]))

    /// A query word's groups (`TextMatcher`): its expansions — the last word's include its completions — and labels.
    struct WordKey: Hashable, Sendable {
        let word: String
        let isLast: Bool
        let typos: Bool
    }

    private let words = Mutex<(generation: UInt64, groups: [WordKey: [TextMatcher.Group]])>((0, [:]))

    func groups(of word: String, isLast: Bool, typos: Bool = true, generation: UInt64) -> [TextMatcher.Group]? {
        words.withLock { $0.generation == generation ? $0.groups[WordKey(word: word, isLast: isLast, typos: typos)] : nil }
    }

    func store(_ groups: [TextMatcher.Group], of word: String, isLast: Bool, typos: Bool = true, generation: UInt64) {
        words.withLock { words in
            if words.generation != generation || words.groups.count >= WordCursorCache.capacity { words = (generation, [:]) }
            words.groups[WordKey(word: word, isLast: isLast, typos: typos)] = groups
        }
    }

    private let pinyin = Mutex<(generation: UInt64, readings: [String: [TextMatcher.Reading]])>((0, [:]))

    /// A normalized query's readings as pinyin (`TextMatcher.readings`).
    func readings(of query: String, generation: UInt64) -> [TextMatcher.Reading]? {
        pinyin.withLock { $0.generation == generation ? $0.readings[query] : nil }
    }

    func store(readings: [TextMatcher.Reading], of query: String, generation: UInt64) {
        pinyin.withLock { pinyin in
            if pinyin.generation != generation || pinyin.readings.count >= WordCursorCache.capacity { pinyin = (generation, [:]) }
            pinyin.readings[query] = readings
        }
    }

    /// The cursor of `group` for the ranker's state and query, from the cache or made by `make` (outside the lock).
    func cursor(
        for group: TextMatcher.Group,
        ranker: borrowing KeywordRanker,
        make: () -> KeywordRanker.WordCursor
    )
        -> KeywordRanker.WordCursor
    {
        let key = Key(expansions: group.expansions, categories: group.categories, weighted: ranker.query.origin != nil)
        let generation = ranker.s.generation
        if let known = entries.withLock({ $0.generation == generation ? $0.cursors[key] : nil }) { return known }
        let made = make()
        entries.withLock { entries in
            if entries.generation != generation || entries.cursors.count >= WordCursorCache.capacity {
                entries = (generation, [:])
            }
            entries.cursors[key] = made
        }
        return made
    }

    /// The records a word's group matches, of a kind, without other filters (`KeywordRanker.total`).
    struct TotalKey: Hashable, Sendable {
        let expansions: [InvertedIndex.Expansion]
        let categories: [String]
        let kind: KindFilter
    }

    private let totals = Mutex<(generation: UInt64, counts: [TotalKey: Int])>((0, [:]))

    func total(of group: TextMatcher.Group, kind: KindFilter, generation: UInt64) -> Int? {
        let key = TotalKey(expansions: group.expansions, categories: group.categories, kind: kind)
        return totals.withLock { $0.generation == generation ? $0.counts[key] : nil }
    }

    func store(total: Int, of group: TextMatcher.Group, kind: KindFilter, generation: UInt64) {
        let key = TotalKey(expansions: group.expansions, categories: group.categories, kind: kind)
        totals.withLock { totals in
            if totals.generation != generation || totals.counts.count >= WordCursorCache.capacity { totals = (generation, [:]) }
            totals.counts[key] = total
        }
    }

    func removeAll() {
        entries.withLock { $0 = (0, [:]) }
        words.withLock { $0 = (0, [:]) }
        totals.withLock { $0 = (0, [:]) }
        pinyin.withLock { $0 = (0, [:]) }
    }
}
