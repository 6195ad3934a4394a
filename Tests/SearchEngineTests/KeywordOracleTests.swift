import Catalog
import Foundation
import GeoCore
import Records
import TestSupport
import Testing
import TextIndex

@testable import SearchEngine

/// The engine's keyword top-k against an exhaustive scorer written from the ranking rules and the documents
/// themselves (no index): every record gets its rule bucket and BM25 score, all are sorted, and the engine's page
/// must be that order's prefix (equal keys position by position, so near-ties cannot make it flaky).
@Suite struct KeywordOracleTests {
    static let names = [
        "cafe", "cafeteria", "caffe", "java", "javanese", "bar", "barcelona", "kahvila", "sushi", "pizza",
        "north", "harbour", "market", "green", "咖啡", "星巴克", "中关村",
    ]
    static let streets = ["north street", "harbour road", "java lane", "market square", "green park", "cafe alley"]
    static let cities = ["helsinki", "espoo", "barcelona", "java city"]
    static let categories = ["food.cafe", "food.restaurant", "transport.bus_stop", "education.university", "shop.supermarket", "office"]

    struct Corpus {
        var records: [POIRecord]
        var engine: SearchEngine
        /// The scorer's analysis of `records`, kept for the queries that follow while they are unchanged.
        private let analysis = Analysis()

        init(records: [POIRecord], engine: SearchEngine) { (self.records, self.engine) = (records, engine) }

        /// The scorer for `query` over the records as they are now.
        func oracle(_ query: SearchQuery) -> Oracle { analysis.oracle(records, query) }

        /// The records' analysis (their terms, lengths, document frequencies) does not depend on the query: it is made
        /// again only when the records differ from those it was made of.
        final class Analysis {
            private var kept: Oracle?

            func oracle(_ records: [POIRecord], _ query: SearchQuery) -> Oracle {
                if var oracle = kept, oracle.records == records {
                    oracle.query = query
                    return oracle
                }
                let made = Oracle(records: records, query: query)
                kept = made
                return made
            }
        }
    }

    static func corpus(_ random: inout SplitMix64, count: Int, names: [String] = names) -> Corpus {
        let centres = [(60.17, 24.94), (39.98, 116.31), (41.39, 2.17)]
        func pick(_ list: [String]) -> String { list[Int(random.next() % UInt64(list.count))] }
        var records: [POIRecord] = []
        for i in 0..<count {
            let c = centres[Int(random.next() % UInt64(centres.count))]
            let p = GreatCircle.destination(
                from: Coordinate(uncheckedLatitude: c.0, longitude: c.1),
                distance: random.uniform(0...30_000),
                bearing: random.uniform(0...360)
            )
            let name = (0..<(1 + Int(random.next() % 3))).map { _ in pick(names) }.joined(separator: " ")
            let address = random.next() % 2 == 0 ? pick(streets) + " \(random.next() % 50)" : nil
            let city = random.next() % 3 == 0 ? pick(cities) : nil
            records.append(
                POIRecord(
                    id: "r\(i)",
                    name: name,
                    category: pick(categories),
                    address: address,
                    city: city,
                    country: nil,
                    lat: p.latitude,
                    lon: p.longitude,
                    tags: [:]
                )
            )
        }
        return Corpus(records: records, engine: SearchEngine.typedOnly(pois: records, taxonomy: testTaxonomy))
    }

    /// The ranking rules, evaluated for one record from its fields.
    struct Oracle {
        let records: [POIRecord]
        /// The query scored; the records' analysis does not depend on it, so one oracle serves several queries.
        var query: SearchQuery
        var documentTerms: [[String: (frequency: Int, inName: Bool)]] = []
        var lengths: [Int] = []
        var df: [String: Int] = [:]
        var average = 0.0
        /// Records per category (a label's members are counted from these once, not per record scored).
        var categoryCounts: [String: Int] = [:]

        init(records: [POIRecord], query: SearchQuery) {
            self.records = records
            self.query = query
            for record in records {
                var terms: [String: (frequency: Int, inName: Bool)] = [:]
                var length = 0
                for field in EngineState.fields(.poi(record)) where !field.isVerbatim {
                    for token in Tokenizer.tokens(field.text) {
                        terms[token.text, default: (0, false)].frequency += field.weight
                        if field.isName { terms[token.text]!.inName = true }
                        length += field.weight
                    }
                }
                documentTerms.append(terms)
                lengths.append(length)
                for term in terms.keys { df[term, default: 0] += 1 }
                categoryCounts[record.category, default: 0] += 1
            }
            average = Double(lengths.reduce(0, +)) / Double(records.count)
        }

        func idf(_ n: Int) -> Double { log(1 + (Double(records.count) - Double(n) + 0.5) / (Double(n) + 0.5)) }

        struct Group {
            var expansions: [(term: String, typos: Int, prefix: Int)]
            var labels: [String]
        }

        /// Query words as the engine reads them: Latin words (prefix on the last, typos when unknown), CJK bigrams.
        func groups() -> [Group] {
            let words = TextNormalizer.normalize(query.text).split(separator: " ").map(String.init)
            var groups: [Group] = []
            for (w, word) in words.enumerated() {
                if word.unicodeScalars.contains(where: TextNormalizer.isCJK) {
                    let chars = Array(word)
                    let grams = chars.count == 1 ? [String(chars)] : (0..<(chars.count - 1)).map { String(chars[$0...($0 + 1)]) }
                    for gram in grams {
                        groups.append(Group(expansions: df[gram] != nil ? [(gram, 0, 0)] : [], labels: testTaxonomy.categories(forLabel: word)))
                    }
                    continue
                }
                var expansions: [(term: String, typos: Int, prefix: Int)] = []
                if df[word] != nil { expansions.append((word, 0, 0)) }
                if w == words.count - 1 {
                    for term in df.keys
                    where term.count > word.count && term.hasPrefix(word) && !term.unicodeScalars.contains(where: TextNormalizer.isCJK) {
                        expansions.append((term, 0, 1))
                    }
                }
                if expansions.isEmpty {
                    let scalars = Array(word.unicodeScalars)
                    let budget = EditDistance.allowedTypos(length: scalars.count)
                    for term in df.keys where budget > 0 {
                        if let d = EditDistance.within(scalars, Array(term.unicodeScalars), limit: budget), d > 0 { expansions.append((term, d, 0)) }
                    }
                }
                groups.append(Group(expansions: expansions, labels: testTaxonomy.categories(forLabel: word)))
            }
            return groups
        }

        func passes(_ i: Int) -> Bool {
            let r = records[i]
            if !query.categories.isEmpty, !query.categories.contains(where: { r.category.isCategory(under: $0) }) { return false }
            if let bbox = query.bbox, !bbox.contains(latitude: r.lat, longitude: r.lon) { return false }
            return true
        }

        /// Whether record i passes the filters and matches the first word (through a term or its label): what
        /// `Page.total` counts when that is exact.
        func matchesFirstWord(_ i: Int, _ groups: [Group]) -> Bool {
            guard passes(i), let first = groups.first else { return false }
            return first.expansions.contains { documentTerms[i][$0.term] != nil }
                || first.labels.contains { records[i].category.isCategory(under: $0) }
        }

        /// (bucket, score) of record i, or nil when it does not match the first word.
        func key(_ i: Int, _ groups: [Group]) -> (bucket: UInt64, score: Double)? {
            guard passes(i) else { return nil }
            let weighted = query.origin != nil
            let labelMembers = { (labels: [String]) in
                categoryCounts.reduce(0) { sum, entry in sum + (labels.contains { entry.key.isCategory(under: $0) } ? entry.value : 0) }
            }
            for dropped in 0..<groups.count {
                var typos = 0
                var prefixes = 0
                var attributes = 0
                var score = 0.0
                var all = true
                for group in groups[0..<(groups.count - dropped)] {
                    var best: (typos: Int, prefix: Int, attribute: Int, score: Double)?
                    func offer(_ c: (typos: Int, prefix: Int, attribute: Int, score: Double)) {
                        guard let b = best else {
                            best = c
                            return
                        }
                        let better: Bool
                        if c.typos != b.typos {
                            better = c.typos < b.typos
                        } else if c.prefix != b.prefix {
                            better = c.prefix < b.prefix
                        } else if !weighted && c.attribute != b.attribute {
                            better = c.attribute < b.attribute
                        } else {
                            better = c.score > b.score
                        }
                        if better { best = c }
                    }
                    for e in group.expansions {
                        guard let t = documentTerms[i][e.term] else { continue }
                        let tf = Double(t.frequency)
                        // BM25 with the length as its one-byte norm stands for it (exact below 64).
                        let length = Double(InvertedIndex.length(norm: InvertedIndex.norm(length: lengths[i])))
                        var s = idf(df[e.term]!) * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))
                        let attribute = t.inName ? 0 : 2
                        if weighted && attribute == 2 { s *= 0.5 }
                        offer((e.typos, e.prefix, attribute, s))
                    }
                    if !group.labels.isEmpty && group.labels.contains(where: { records[i].category.isCategory(under: $0) }) {
                        offer((0, 0, 1, idf(labelMembers(group.labels)) * 0.8))
                    }
                    guard let b = best else {
                        all = false
                        break
                    }
                    typos += b.typos
                    prefixes += b.prefix
                    attributes += b.attribute
                    score += b.score
                }
                guard all else { continue }
                var wholeName = false
                if let origin = query.origin {
                    attributes = 0
                    wholeName = true
                    let d = GreatCircle.distance(
                        latitude1: origin.latitude,
                        longitude1: origin.longitude,
                        latitude2: records[i].lat,
                        longitude2: records[i].lon
                    )
                    score *= 1 / (1 + d / 2_000)
                } else if dropped == 0 && typos == 0 && prefixes == 0 && attributes == 0 {
                    wholeName = TextNormalizer.normalize(records[i].name) == TextNormalizer.normalize(query.text)
                }
                return (
                    RankBucket.make(
                        dropped: RankBucket.level(dropped: dropped, reading: .typed),
                        typos: typos,
                        prefixes: prefixes,
                        attributes: attributes,
                        wholeName: wholeName
                    ), score
                )
            }
            return nil
        }

        func ranking() -> [(doc: Int, bucket: UInt64, score: Double)] {
            let groups = groups()
            return records.indices.compactMap { i in key(i, groups).map { (i, $0.bucket, $0.score) } }
                .sorted { a, b in a.bucket != b.bucket ? a.bucket < b.bucket : (a.score != b.score ? a.score > b.score : a.doc < b.doc) }
        }
    }

    static func randomQuery(_ random: inout SplitMix64) throws -> SearchQuery {
        func pick(_ list: [String]) -> String { list[Int(random.next() % UInt64(list.count))] }
        var words = (0..<(1 + Int(random.next() % 3))).map { _ in pick(names + ["helsinki", "street", "square", "coffee", "university"]) }
        switch random.next() % 4 {
        case 0: words[words.count - 1] = String(words[words.count - 1].prefix(2 + Int(random.next() % 3)))  // a prefix
        case 1:  // a typo in a long word
            var scalars = Array(words[0].unicodeScalars)
            if scalars.count >= 5 { scalars.swapAt(1, 2) }
            words[0] = String(String.UnicodeScalarView(scalars))
        default: break
        }
        let origin =
            random.next() % 3 == 0 ? try Coordinate(latitude: 60.17 + random.uniform(-0.2...0.2), longitude: 24.94 + random.uniform(-0.2...0.2)) : nil
        // Now and then one category, or two at once (the AMap adapter's `types=A|B`).
        let categories: [String] =
            switch random.next() % 10 {
            case 0, 1: ["food"]
            case 2: ["food.cafe", "transport"]
            default: []
            }
        return SearchQuery(text: words.joined(separator: " "), origin: origin, categories: categories, limit: 1 + Int(random.next() % 30))
    }

    /// Each result has the bucket and score of the scorer's entry at its position (records of equal keys may swap).
    static func expectSameKeys(_ got: [Int], _ expected: [(doc: Int, bucket: UInt64, score: Double)], _ oracle: Oracle, _ context: String) {
        let groups = oracle.groups()
        for (position, doc) in got.enumerated() where position < expected.count {
            guard let key = oracle.key(doc, groups) else {
                Issue.record("\(context): r\(doc) at \(position) does not match")
                return
            }
            let want = expected[position]
            guard key.bucket == want.bucket, abs(key.score - want.score) <= 1e-9 * max(1, abs(want.score)) else {
                Issue.record("\(context): position \(position) has r\(doc) \(key), expected r\(want.doc) \(want.bucket), \(want.score)")
                return
            }
        }
    }

    @Test func topKEqualsTheExhaustiveScorer() throws {
        var random = testRandom("topKEqualsTheExhaustiveScorer")
        let corpus = Self.corpus(&random, count: 3_000)
        for trial in 0..<100 {
            let query = try Self.randomQuery(&random)
            let oracle = corpus.oracle(query)
            let expected = oracle.ranking()
            let page = try corpus.engine.search(query)
            let got = page.results.map { Int($0.id.dropFirst())! }
            let context = "trial \(trial): q=\(query.text) origin=\(String(describing: query.origin)) categories=\(query.categories)"
            #expect(got.count == min(query.limit, expected.count), "\(context)")
            Self.expectSameKeys(got, expected, oracle, context)
            #expect((page.next != nil) == (expected.count > query.limit), "\(context)")
        }
    }

    /// The engine's page for `query` is the scorer's ranking's first `limit` (equal keys position by position).
    static func expectScorersOrder(_ corpus: Corpus, _ query: SearchQuery, _ context: String) throws {
        let oracle = corpus.oracle(query)
        let expected = oracle.ranking()
        let got = try corpus.engine.search(query).results.map { Int($0.id.dropFirst())! }
        #expect(got.count == min(query.limit, expected.count), "\(context)")
        expectSameKeys(got, expected, oracle, context)
    }

    /// 30 words beginning with m and 30 with k (fewer than the engine's 64 completions, so none is cut).
    static func completions(_ random: inout SplitMix64) -> [String] {
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        var vocabulary: [String] = []
        for first in ["m", "k"] {
            while vocabulary.filter({ $0.hasPrefix(first) }).count < 30 {
                let word = first + String((0..<(2 + Int(random.next() % 5))).map { _ in letters[Int(random.next() % 26)] })
                if !vocabulary.contains(word) { vocabulary.append(word) }
            }
        }
        return vocabulary
    }

    /// A last word of one or two letters with many completions (more than the four above which the engine matches a
    /// word list by list along the driving word rather than record by record), with and without an origin and a
    /// category: still the scorer's order.
    @Test func shortPrefixesWithManyCompletionsEqualTheScorer() throws {
        var random = testRandom("shortPrefixesWithManyCompletionsEqualTheScorer")
        let vocabulary = Self.completions(&random)
        let corpus = Self.corpus(&random, count: 4_000, names: Self.names + vocabulary)
        for trial in 0..<60 {
            let head = Self.names[Int(random.next() % UInt64(Self.names.count))]
            let tail = vocabulary[Int(random.next() % UInt64(vocabulary.count))]
            let text = head + " " + String(tail.prefix(1 + Int(random.next() % 2)))
            let origin =
                trial % 2 == 0 ? try Coordinate(latitude: 60.17 + random.uniform(-0.2...0.2), longitude: 24.94 + random.uniform(-0.2...0.2)) : nil
            let query = SearchQuery(text: text, origin: origin, category: trial % 5 == 0 ? "food" : nil, limit: 1 + Int(random.next() % 30))
            try Self.expectScorersOrder(
                corpus,
                query,
                "trial \(trial): q=\(text) origin=\(String(describing: origin)) categories=\(query.categories)"
            )
        }
    }

    /// Near an origin, a short prefix whose exact word some records have and most do not (a name word "m" or "k"), so
    /// that the best class a block can reach differs from block to block: blocks where only completions match are
    /// bounded as such, the others as exact matches — still the scorer's order.
    @Test func shortPrefixesWhoseExactWordIsSomewhereEqualTheScorer() throws {
        var random = testRandom("shortPrefixesWhoseExactWordIsSomewhereEqualTheScorer")
        let vocabulary = Self.completions(&random)
        // The bare letters are rarer than each completion: one name word in a few hundred.
        let corpus = Self.corpus(&random, count: 6_000, names: Self.names + Self.names + vocabulary + ["m", "k"])
        let centres = [(60.17, 24.94), (39.98, 116.31), (41.39, 2.17)]
        for trial in 0..<60 {
            let head = Self.names[Int(random.next() % UInt64(Self.names.count))]
            let text = head + " " + ["m", "k", "m", "k", "mo", "ka"][trial % 6]
            let c = centres[trial % centres.count]
            let origin = try Coordinate(latitude: c.0 + random.uniform(-0.3...0.3), longitude: c.1 + random.uniform(-0.3...0.3))
            let query = SearchQuery(text: text, origin: origin, category: trial % 7 == 0 ? "food" : nil, limit: 1 + Int(random.next() % 30))
            try Self.expectScorersOrder(corpus, query, "trial \(trial): q=\(text) origin=\(origin) categories=\(query.categories)")
        }
    }

    /// A word that labels a category with more members than `KeywordRanker.labelWalkThreshold`, near an origin: the
    /// label matches then come from a walk of the records' number ranges, nearest first, and still equal the scorer's —
    /// also after writes: cafés added (numbered past the Hilbert-ordered ones, their ranges' boxes grown), moved to
    /// another city (their old boxes kept), and removed; with a category filter now and then.
    @Test func labelWordsNearAnOriginEqualTheScorer() throws {
        var random = testRandom("labelWordsNearAnOriginEqualTheScorer")
        // Most records cafés, so that the cafe category alone is past the threshold.
        var records = Self.corpus(&random, count: 6_000).records
        func cafe(_ r: POIRecord, lat: Double? = nil, lon: Double? = nil) -> POIRecord {
            POIRecord(
                id: r.id,
                name: r.name,
                category: "food.cafe",
                address: r.address,
                city: r.city,
                country: r.country,
                lat: lat ?? r.lat,
                lon: lon ?? r.lon,
                tags: r.tags
            )
        }
        for i in records.indices where random.next() % 5 != 0 { records[i] = cafe(records[i]) }
        var corpus = Corpus(records: records, engine: SearchEngine.typedOnly(pois: records, taxonomy: testTaxonomy))
        let perCategory = Dictionary(grouping: corpus.records, by: \.category).mapValues(\.count)
        #expect(perCategory.values.contains { $0 > KeywordRanker.labelWalkThreshold }, "a category large enough: \(perCategory)")
        let words = ["cafe", "coffee", "kahvila", "咖啡", "kahvila", "supermarket"]
        let centres = [(60.17, 24.94), (39.98, 116.31), (41.39, 2.17), (0.0, 0.0)]
        for round in 0..<2 {
            for trial in 0..<24 {
                let c = centres[trial % centres.count]
                let origin = try Coordinate(latitude: c.0 + random.uniform(-0.3...0.3), longitude: c.1 + random.uniform(-0.3...0.3))
                let word = words[Int(random.next() % UInt64(words.count))]
                let query = SearchQuery(text: word, origin: origin, category: trial % 5 == 4 ? "food" : nil, limit: 1 + Int(random.next() % 40))
                try Self.expectScorersOrder(
                    corpus,
                    query,
                    "round \(round), trial \(trial): q=\(word) origin=\(origin) \(query.categories)"
                )
            }
            guard round == 0 else { break }
            for n in 0..<300 {
                let i = Int(random.next() % UInt64(corpus.records.count))
                let r = corpus.records[i]
                let centre = centres[Int(random.next() % UInt64(centres.count))]
                let lat = centre.0 + random.uniform(-0.3...0.3)
                let lon = centre.1 + random.uniform(-0.3...0.3)
                switch n % 3 {
                case 0:
                    let added = cafe(
                        POIRecord(id: "r\(corpus.records.count)", name: r.name, category: r.category, lat: lat, lon: lon),
                        lat: lat,
                        lon: lon
                    )
                    _ = try corpus.engine.upsertPOI(added)
                    corpus.records.append(added)
                case 1:
                    let moved = cafe(r, lat: lat, lon: lon)
                    _ = try corpus.engine.upsertPOI(moved)
                    corpus.records[i] = moved
                default:
                    // The last record: the others keep their places, which are their ids' numbers.
                    try corpus.engine.deletePOI(id: corpus.records.removeLast().id)
                }
            }
        }
    }

    /// Two words that both label categories, and name words too ("university kahvila": a café named after the
    /// university, a university named after a café): a record matching one word through its name and the other only
    /// through its category is found in the labels pass, whichever word drives it — with and without an origin.
    @Test func twoLabelWordsEqualTheScorer() throws {
        var random = testRandom("twoLabelWordsEqualTheScorer")
        let labelWords = ["cafe", "kahvila", "university", "supermarket", "restaurant"]
        let corpus = Self.corpus(&random, count: 4_000, names: Self.names + labelWords + labelWords)
        for trial in 0..<60 {
            let first = labelWords[Int(random.next() % UInt64(labelWords.count))]
            var second = first
            while second == first { second = labelWords[Int(random.next() % UInt64(labelWords.count))] }
            // A third word now and then: one of three words with no label.
            let text = [first, second].joined(separator: " ") + (trial % 4 == 3 ? " " + Self.names[Int(random.next() % 10)] : "")
            let origin =
                trial % 2 == 0 ? try Coordinate(latitude: 60.17 + random.uniform(-0.2...0.2), longitude: 24.94 + random.uniform(-0.2...0.2)) : nil
            let query = SearchQuery(text: text, origin: origin, limit: 1 + Int(random.next() % 30))
            try Self.expectScorersOrder(corpus, query, "trial \(trial): q=\(text) origin=\(String(describing: origin))")
        }
    }

    /// Chains: a few names of several words on thousands of records whose lengths (their addresses) vary widely,
    /// the short ones rare and late in record order, and the same words alone on short records. Block bounds are then
    /// decided by length and by whether a name may be the whole query: a word's bound at the driving word's least length,
    /// a record's remaining words at its own length, a stretch of chain names that cannot be the whole query — still
    /// the scorer's order, with and without an origin, as typed in full or as a prefix.
    @Test func chainsOfManyLengthsEqualTheScorer() throws {
        var random = testRandom("chainsOfManyLengthsEqualTheScorer")
        let chains = ["golden dragon", "the golden dragon", "north harbour market", "green java", "java green bar", "la piazza"]
        let filler = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
        // The chains' words alone, and completions of them (a last word typed in full is then several lists).
        let others = ["golden", "dragon", "green", "java", "market", "dragons", "goldenrod", "greenery", "javanese", "marketplace", "bar", "bars"]
        let count = 5_000
        var records: [POIRecord] = []
        for i in 0..<count {
            let chained = random.next() % 5 < 3
            // A rare completion (too few postings for block bounds), with a large idf: "la piazz" reaches it.
            let rare = i % 150 == 75
            let name =
                rare
                ? "la piazzola"
                : chained
                    ? chains[Int(random.next() % UInt64(chains.count))]
                    : (0..<(1 + Int(random.next() % 2))).map { _ in others[Int(random.next() % UInt64(others.count))] }.joined(separator: " ")
            // Chain records are long but for a few late ones; the others are short.
            let tokens = chained || rare ? (i < count * 3 / 4 || random.next() % 8 != 0 ? 3 + Int(random.next() % 12) : Int(random.next() % 3)) : 0
            let address = tokens == 0 ? nil : (0..<tokens).map { _ in filler[Int(random.next() % UInt64(filler.count))] }.joined(separator: " ")
            let p = GreatCircle.destination(
                from: Coordinate(uncheckedLatitude: 60.17, longitude: 24.94),
                distance: random.uniform(0...30_000),
                bearing: random.uniform(0...360)
            )
            records.append(
                POIRecord(
                    id: "r\(i)",
                    name: name,
                    category: Self.categories[Int(random.next() % UInt64(Self.categories.count))],
                    address: address,
                    city: nil,
                    country: nil,
                    lat: p.latitude,
                    lon: p.longitude,
                    tags: [:]
                )
            )
        }
        let corpus = Corpus(records: records, engine: SearchEngine.typedOnly(pois: records, taxonomy: testTaxonomy))
        for trial in 0..<80 {
            var words = chains[Int(random.next() % UInt64(chains.count))].split(separator: " ").map(String.init)
            switch trial % 4 {
            case 1: words.reverse()
            case 2: words[words.count - 1] = String(words[words.count - 1].prefix(1 + Int(random.next() % 3)))
            case 3: words = Array(words.dropFirst())
            default: break
            }
            let text = words.joined(separator: " ")
            let origin =
                trial % 3 == 0 ? try Coordinate(latitude: 60.17 + random.uniform(-0.2...0.2), longitude: 24.94 + random.uniform(-0.2...0.2)) : nil
            let query = SearchQuery(text: text, origin: origin, limit: 1 + Int(random.next() % 30))
            try Self.expectScorersOrder(corpus, query, "trial \(trial): q=\(text) origin=\(String(describing: origin))")
        }
        // Prefixes as typed that reach the rare completion.
        for (trial, text) in ["la p", "la pi", "la pia", "la piaz", "la piazz", "la piazzo", "piazz", "piazza la"].enumerated() {
            for limit in [3, 10, 25] {
                let origin = trial % 3 == 0 && limit == 10 ? try Coordinate(latitude: 60.2, longitude: 24.9) : nil
                let query = SearchQuery(text: text, origin: origin, limit: limit)
                try Self.expectScorersOrder(corpus, query, "q=\(text) limit=\(limit) origin=\(String(describing: origin))")
            }
        }
    }

    /// A word typed in full on thousands of records, then a short prefix with many completions of very different
    /// frequencies, without an origin: the completions are tabled along the full word's records, filled block by
    /// block until the page is full, then for every record from the completions that can still reach the page — the
    /// common ones left out only when even their best cannot. Still the scorer's order, on pages of every depth.
    @Test func tabledCompletionsLeftOutOnlyWhenTheyCannotReachThePage() throws {
        var random = testRandom("tabledCompletionsLeftOutOnlyWhenTheyCannotReachThePage")
        // Completions of "b": one on most records (a low idf: left out once the page is full of the others), the
        // others from common to rare (a record draws one by these weights); filler for the lengths.
        let completions = ["bolt", "bison", "berry", "basil", "bongo", "bugle", "banjo", "blink", "bytes"]
        let weights = [200, 100, 50, 25, 12, 6, 3, 2, 1]
        let filler = ["alpha", "beta", "gamma", "delta"].dropFirst()
        let count = 6_000
        var records: [POIRecord] = []
        for i in 0..<count {
            var words: [String] = []
            if random.next() % 3 != 0 { words.append("alpha") }
            if random.next() % 20 < 17 { words.append("bravo") }
            if random.next() % 2 == 0 {
                var pick = Int(random.next() % UInt64(weights.reduce(0, +)))
                let c = weights.firstIndex { w in
                    pick -= w
                    return pick < 0
                }!
                words.insert(completions[c], at: Int(random.next() % UInt64(words.count + 1)))
            }
            if words.isEmpty { words = ["omega"] }
            let tokens = Int(random.next() % 8)
            records.append(
                POIRecord(
                    id: "r\(i)",
                    name: words.joined(separator: " "),
                    category: Self.categories[Int(random.next() % UInt64(Self.categories.count))],
                    address: tokens == 0 ? nil : (0..<tokens).map { _ in filler.randomElement(using: &random)! }.joined(separator: " "),
                    city: random.next() % 4 == 0 ? "bravo city" : nil,
                    country: nil,
                    lat: 60.17,
                    lon: 24.94,
                    tags: [:]
                )
            )
        }
        let corpus = Corpus(records: records, engine: SearchEngine.typedOnly(pois: records, taxonomy: testTaxonomy))
        for trial in 0..<60 {
            let text = ["alpha b", "alpha b", "alpha bo", "b alpha"][trial % 4]
            let limit = 1 + Int(random.next() % 40)
            let offset = trial % 3 == 0 ? Int(random.next() % 200) : 0
            let query = SearchQuery(text: text, limit: limit, offset: offset)
            let oracle = corpus.oracle(query)
            let expected = Array(oracle.ranking().dropFirst(offset))
            let got = try corpus.engine.search(query).results.map { Int($0.id.dropFirst())! }
            let context = "trial \(trial): q=\(text) limit=\(limit) offset=\(offset)"
            #expect(got.count == min(limit, expected.count), "\(context)")
            Self.expectSameKeys(got, expected, oracle, context)
        }
    }

    /// Words compiled for one query are kept for the next (`WordCursorCache`): queries of several words asked again
    /// after each write — a renamed record, with and without an origin — see the write, as the scorer over the live
    /// records says; so does their total (the records matching the first word, counted once per state).
    @Test func queriesBetweenWritesSeeEachWrite() throws {
        var random = testRandom("queriesBetweenWritesSeeEachWrite")
        var corpus = Self.corpus(&random, count: 600)
        let texts = ["north cafe", "cafe java", "kahvila b", "sushi pizza c", "harbour market", "咖啡 north", "b", "caf"]
        for step in 0..<80 {
            for text in texts {
                let origin = step % 2 == 0 ? nil : Coordinate(uncheckedLatitude: 60.17, longitude: 24.94)
                let query = SearchQuery(text: text, origin: origin, limit: 10)
                try Self.expectScorersOrder(corpus, query, "step \(step): q=\(text)")
                let oracle = corpus.oracle(query)
                let groups = oracle.groups()
                let matching = corpus.records.indices.filter { oracle.matchesFirstWord($0, groups) }.count
                #expect(try corpus.engine.search(query).total == matching, "step \(step): q=\(text)")
            }
            try Self.renameRandomRecord(&corpus, &random, words: 1...3)
        }
    }

    /// Gives a random record of the corpus a name of random words (`words` of them), in the engine and the records.
    static func renameRandomRecord(_ corpus: inout Corpus, _ random: inout SplitMix64, words: ClosedRange<Int>) throws {
        let i = Int(random.next() % UInt64(corpus.records.count))
        let old = corpus.records[i]
        let count = words.lowerBound + Int(random.next() % UInt64(words.count))
        let name = (0..<count).map { _ in names[Int(random.next() % UInt64(names.count))] }.joined(separator: " ")
        let updated = POIRecord(
            id: old.id,
            name: name,
            category: old.category,
            address: old.address,
            city: old.city,
            country: nil,
            lat: old.lat,
            lon: old.lon,
            tags: [:]
        )
        _ = try corpus.engine.upsertPOI(updated)
        corpus.records[i] = updated
    }

    /// Deep pages and updates: the engine after random writes still equals the scorer over the live records.
    @Test func pagesAndWritesAgreeWithTheScorer() throws {
        var random = testRandom("pagesAndWritesAgreeWithTheScorer")
        var corpus = Self.corpus(&random, count: 1_500)
        for _ in 0..<300 { try Self.renameRandomRecord(&corpus, &random, words: 1...2) }
        for word in ["cafe", "java", "bar", "caf", "kahvila", "sushi pizza", "north cafe"] {
            let query = SearchQuery(text: word, limit: 20, offset: 40)
            let oracle = corpus.oracle(query)
            let expected = oracle.ranking()
            let got = try corpus.engine.search(query).results.map { Int($0.id.dropFirst())! }
            let groups = oracle.groups()
            let keys = got.compactMap { oracle.key($0, groups) }
            let want = expected.dropFirst(40).prefix(20)
            #expect(keys.count == want.count, "\(word)")
            for (k, w) in zip(keys, want) {
                #expect(k.bucket == w.bucket && abs(k.score - w.score) <= 1e-9 * max(1, abs(w.score)), "\(word)")
            }
        }
    }
}

extension SearchEngine {
    /// An engine that reads queries as typed only: the scorer here models the words as typed, not their pinyin
    /// ("ka", a prefix of "kahvila", is also the start of 咖啡's kafei; PinyinSearchTests checks that).
    static func typedOnly(pois: [POIRecord], taxonomy: CategoryTaxonomy) -> SearchEngine {
        let engine = SearchEngine(pois: pois, taxonomy: taxonomy)
        engine.disablePinyin()
        return engine
    }
}
