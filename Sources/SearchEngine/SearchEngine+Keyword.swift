import Catalog
import GeoCore
import TextIndex

/// Keyword ranking as a list of rules applied in order (Meilisearch's ranking rules; DESIGN.md §4):
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
    static func make(dropped: Int, typos: Int, prefixes: Int, attributes: Int, wholeName: Bool) -> UInt64 {
        UInt64(dropped) << 48 | UInt64(typos) << 36 | UInt64(prefixes) << 24 | UInt64(attributes) << 8 | (wholeName ? 0 : 1)
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
            let matcher = TextMatcher(query.text, index: s.text, taxonomy: taxonomy)
            guard !matcher.isEmpty else { throw .invalid(parameter: "q", rule: "must contain at least one letter or digit") }
            let ranker = KeywordRanker(engine: self, state: s, matcher: matcher, query: query)
            let entries = ranker.top(query.offset + query.limit + 1)
            let page = entries.dropFirst(query.offset).prefix(query.limit)
            let origin = query.origin
            let results = page.compactMap { entry -> Hit? in
                var distance: Double?
                if let origin {
                    let meta = s.meta[Int(entry.doc)]
                    distance = GreatCircle.distance(latitude1: origin.latitude, longitude1: origin.longitude, latitude2: meta.latitude, longitude2: meta.longitude)
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
    let averageLength: Double

    init(engine: SearchEngine, state: EngineState, matcher: TextMatcher, query: SearchQuery) {
        self.engine = engine
        self.s = state
        self.matcher = matcher
        self.query = query
        averageLength = state.text.averageLength
    }

    /// Whether a record passes the query's filters.
    @inline(__always)
    func accepts(_ doc: UInt32) -> Bool {
        let meta = s.meta[Int(doc)]
        guard meta.live, query.kind.includes(meta.isPin ? .pin : .poi) else { return false }
        if let category = query.category {
            guard let own = s.category(of: doc), own.isCategory(under: category) else { return false }
        }
        if let bbox = query.bbox, !bbox.contains(latitude: meta.latitude, longitude: meta.longitude) { return false }
        return true
    }

    @inline(__always)
    func decay(_ doc: UInt32) -> Double {
        guard let origin = query.origin else { return 1 }
        let meta = s.meta[Int(doc)]
        return RankBucket.decay(
            metres: GreatCircle.distance(latitude1: origin.latitude, longitude1: origin.longitude, latitude2: meta.latitude, longitude2: meta.longitude)
        )
    }

    /// The best `k` records, best first.
    func top(_ k: Int) -> [TopK.Entry] {
        var heap = TopK(capacity: k)
        let m = matcher.groups.count
        for dropped in 0..<m where !heap.isFull {
            let active = m - dropped
            if active == 1 {
                rankOneWord(matcher.groups[0], dropped: dropped, wholeQuery: m == 1, into: &heap)
            } else {
                rankAllWords(Array(matcher.groups[0..<active]), dropped: dropped, into: &heap)
            }
        }
        return heap.sorted()
    }

    // MARK: One word, bucket by bucket

    /// What a bucket reads: postings of a term in name or other fields, the records whose whole name is a term,
    /// or the members of the word's label categories.
    enum Source {
        case postings(term: Int32, inName: Bool, weight: Double)
        case wholeName(term: Int32)
        case label(members: [[UInt32]], score: Double)
    }

    func rankOneWord(_ group: TextMatcher.Group, dropped: Int, wholeQuery: Bool, into heap: inout TopK) {
        let exact = group.expansions.first { $0.kind == .exact }?.term
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
            if let exact { buckets.append((bucket(), [.postings(term: exact, inName: true, weight: 1)])) }
            if !members.isEmpty { buckets.append((bucket(attribute: RankBucket.label), [.label(members: members, score: labelScore)])) }
            if let exact { buckets.append((bucket(attribute: RankBucket.other), [.postings(term: exact, inName: false, weight: 1)])) }
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
            var first = both(exact.map { [$0] } ?? [])
            if !members.isEmpty { first.append(.label(members: members, score: labelScore)) }
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
            list.withUnsafeBufferPointer { postings in
                if bounds.isEmpty {
                    scan(postings[...], inName: inName, idf: idf, bucket: bucket, into: &heap)
                    return
                }
                for (b, bound) in bounds.enumerated() {
                    let frequency = inName ? bound.nameFrequency : bound.otherFrequency
                    guard frequency > 0 else { continue }
                    let length = inName ? bound.nameLength : bound.otherLength
                    // The same arithmetic as a posting's score, on the block's extremes: a posting with those values
                    // scores exactly the bound, and any other lower by far more than rounding.
                    let limit = InvertedIndex.bm25(frequency: frequency, length: length, averageLength: averageLength, idf: idf)
                    let start = b * InvertedIndex.blockSize
                    guard heap.admits(bucket: bucket, scoreBound: limit, firstDoc: postings[start].doc) else { continue }
                    scan(postings[start..<min(postings.count, start + InvertedIndex.blockSize)], inName: inName, idf: idf, bucket: bucket, into: &heap)
                }
            }
        case .wholeName(let term):
            let idf = s.text.idf(documentFrequency: s.text.documentFrequency(term))
            for doc in s.text.wholeNameDocuments(of: term) {
                guard let posting = s.text.posting(term: term, document: doc) else { continue }
                let score = InvertedIndex.bm25(frequency: posting.frequency, length: s.text.length(of: doc), averageLength: averageLength, idf: idf)
                if heap.admits(bucket: bucket, scoreBound: score, firstDoc: doc) && accepts(doc) { heap.offer(.init(bucket: bucket, score: score, doc: doc)) }
            }
        case .label(let lists, let score):
            for members in lists {
                for doc in members {
                    if query.origin == nil {
                        // Equal scores: in record order, the first record refused ends this list.
                        guard heap.admits(bucket: bucket, scoreBound: score, firstDoc: doc) else { break }
                        if accepts(doc) { heap.offer(.init(bucket: bucket, score: score, doc: doc)) }
                    } else if accepts(doc) {
                        let value = score * decay(doc)
                        if heap.admits(bucket: bucket, scoreBound: value, firstDoc: doc) { heap.offer(.init(bucket: bucket, score: value, doc: doc)) }
                    }
                }
            }
        }
    }

    @inline(__always)
    private func scan(_ postings: Slice<UnsafeBufferPointer<InvertedIndex.Posting>>, inName: Bool, idf: Double, bucket: UInt64, into heap: inout TopK) {
        for posting in postings where posting.isInName == inName {
            var score = s.text.score(posting, idf: idf)
            guard heap.admits(bucket: bucket, scoreBound: score, firstDoc: posting.doc) else { continue }
            if query.origin != nil {
                score *= decay(posting.doc)
                guard heap.admits(bucket: bucket, scoreBound: score, firstDoc: posting.doc) else { continue }
            }
            if accepts(posting.doc) { heap.offer(.init(bucket: bucket, score: score, doc: posting.doc)) }
        }
    }

    // MARK: Several words

    /// The best way a record matches one word: its rule class (typos, prefix, attribute) and score.
    struct WordMatch {
        var typos: Int
        var prefix: Int
        var attribute: Int
        var score: Double

        /// Whether this match is better than `other` (by class, then score; with an origin the attribute is a weight).
        func isBetter(than other: WordMatch, weighted: Bool) -> Bool {
            if typos != other.typos { return typos < other.typos }
            if prefix != other.prefix { return prefix < other.prefix }
            if !weighted && attribute != other.attribute { return attribute < other.attribute }
            return score > other.score
        }
    }

    func match(_ doc: UInt32, _ group: TextMatcher.Group, idfs: [Double], labelScore: Double, weighted: Bool) -> WordMatch? {
        var best: WordMatch?
        for (e, expansion) in group.expansions.enumerated() {
            guard let posting = s.text.posting(term: expansion.term, document: doc) else { continue }
            let attribute = posting.isInName ? RankBucket.name : RankBucket.other
            var score = s.text.score(posting, idf: idfs[e])
            if weighted { score *= RankBucket.weight(attribute: attribute) }
            let candidate = WordMatch(typos: Int(expansion.typos), prefix: expansion.kind == .prefix ? 1 : 0, attribute: attribute, score: score)
            if best.map({ candidate.isBetter(than: $0, weighted: weighted) }) ?? true { best = candidate }
        }
        if !group.categories.isEmpty, let own = s.category(of: doc), group.categories.contains(where: { own.isCategory(under: $0) }) {
            let candidate = WordMatch(typos: 0, prefix: 0, attribute: RankBucket.label, score: labelScore)
            if best.map({ candidate.isBetter(than: $0, weighted: weighted) }) ?? true { best = candidate }
        }
        return best
    }

    func rankAllWords(_ groups: [TextMatcher.Group], dropped: Int, into heap: inout TopK) {
        let weighted = query.origin != nil
        let idfs = groups.map { group in group.expansions.map { s.text.idf(documentFrequency: s.text.documentFrequency($0.term)) } }
        let members = groups.map { s.members(ofCategoriesUnder: $0.categories) }
        let labelScores = members.map { lists in lists.isEmpty ? 0 : s.text.idf(documentFrequency: lists.reduce(0) { $0 + $1.count }) * 0.8 }
        // First the records that match every word through a term (no category label): usually few, and when they
        // fill the page with attribute buckets no label match can reach, the label members are never read.
        let termCandidates = intersect(groups.map { group in group.expansions.map { DocList.postings(s.text.postings(of: $0.term)) } })
        consider(termCandidates, groups: groups, dropped: dropped, idfs: idfs, labelScores: labelScores, into: &heap)
        guard members.contains(where: { !$0.isEmpty }) else { return }
        let bestWithLabel = RankBucket.make(dropped: dropped, typos: 0, prefixes: 0, attributes: weighted ? 0 : RankBucket.label, wholeName: true)
        if heap.isFull, let worst = heap.worst, worst.bucket < bestWithLabel { return }
        let all = intersect(groups.indices.map { g in groups[g].expansions.map { DocList.postings(s.text.postings(of: $0.term)) } + members[g].map(DocList.docs) })
        consider(all, groups: groups, dropped: dropped, idfs: idfs, labelScores: labelScores, into: &heap)
    }

    /// Records in every group's union of sorted lists, in record order: the smallest union narrowed by each other
    /// group in turn with galloping cursors (cost ~ candidates × log gap, not a binary search over whole lists).
    func intersect(_ groups: [[DocList]]) -> [UInt32] {
        let sizes = groups.map { $0.reduce(0) { $0 + $1.count } }
        let order = groups.indices.sorted { sizes[$0] < sizes[$1] }
        guard let driving = order.first, sizes[driving] > 0 else { return [] }
        var candidates = groups[driving].map(\.documents).reduce([]) { Self.merge($0, $1) }
        for g in order.dropFirst() where !candidates.isEmpty {
            let sources = groups[g]
            var cursors = [Int](repeating: 0, count: sources.count)
            candidates = candidates.filter { doc in
                var found = false
                for l in sources.indices {
                    cursors[l] = Self.gallop(sources[l], from: cursors[l], to: doc)
                    if cursors[l] < sources[l].count && sources[l][cursors[l]] == doc { found = true }
                }
                return found
            }
        }
        return candidates
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

    private func consider(_ candidates: [UInt32], groups: [TextMatcher.Group], dropped: Int, idfs: [[Double]], labelScores: [Double], into heap: inout TopK) {
        let weighted = query.origin != nil
        for doc in candidates {
            guard accepts(doc) else { continue }
            var typos = 0
            var prefixes = 0
            var attributes = 0
            var score = 0.0
            var matchedAll = true
            for g in groups.indices {
                guard let m = match(doc, groups[g], idfs: idfs[g], labelScore: labelScores[g], weighted: weighted) else {
                    matchedAll = false
                    break
                }
                typos += m.typos
                prefixes += m.prefix
                attributes += m.attribute
                score += m.score
            }
            guard matchedAll else { continue }
            var wholeName = false
            if weighted {
                attributes = 0
                score *= decay(doc)
            } else if dropped == 0 && typos == 0 && prefixes == 0 && attributes == 0 {
                wholeName = hasWholeName(doc)
            }
            let bucket = RankBucket.make(dropped: dropped, typos: typos, prefixes: prefixes, attributes: attributes, wholeName: weighted || wholeName)
            if heap.admits(bucket: bucket, scoreBound: score, firstDoc: doc) { heap.offer(.init(bucket: bucket, score: score, doc: doc)) }
        }
    }

    /// A sorted list of record numbers: a posting list (read in place) or a category's members.
    enum DocList {
        case postings([InvertedIndex.Posting])
        case docs([UInt32])

        var count: Int {
            switch self {
            case .postings(let list): return list.count
            case .docs(let list): return list.count
            }
        }

        @inline(__always)
        subscript(i: Int) -> UInt32 {
            switch self {
            case .postings(let list): return list[i].doc
            case .docs(let list): return list[i]
            }
        }

        var documents: [UInt32] {
            switch self {
            case .postings(let list): return list.map(\.doc)
            case .docs(let list): return list
            }
        }
    }

    /// The first index at or after `start` whose element is at least `target`, by exponential then binary search.
    static func gallop(_ list: DocList, from start: Int, to target: UInt32) -> Int {
        var low = start
        var step = 1
        var high = start
        while high < list.count && list[high] < target {
            low = high + 1
            high += step
            step *= 2
        }
        high = min(high, list.count)
        while low < high {
            let mid = (low + high) / 2
            if list[mid] < target { low = mid + 1 } else { high = mid }
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
        let lists = group.expansions.map { s.text.postings(of: $0.term).lazy.map(\.doc) }
        let members = s.members(ofCategoriesUnder: group.categories)
        let size = lists.reduce(0) { $0 + $1.count } + members.reduce(0) { $0 + $1.count }
        // Posting lists hold live records only: without a filter, one list's size is its exact count.
        let otherKindExists = query.kind == .poi ? !s.pinNumbers.isEmpty : (query.kind == .pin ? !s.poiNumbers.isEmpty : false)
        if query.category == nil && query.bbox == nil && !otherKindExists && lists.count + members.count == 1 { return size }
        guard size <= SearchEngine.exactTotalLimit else { return max(found, size) }
        var marks = engine.scratchPool.withLock { $0.popLast() } ?? VisitMarks()
        marks.ensure(count: s.meta.count)
        defer {
            marks.reset()
            engine.scratchPool.withLock { pool in if pool.count < 4 { pool.append(marks) } }
        }
        var count = 0
        for list in lists { for doc in list where marks.visit(doc) && accepts(doc) { count += 1 } }
        for list in members { for doc in list where marks.visit(doc) && accepts(doc) { count += 1 } }
        return count
    }
}
