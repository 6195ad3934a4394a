import Foundation
import SnapshotFile
import TestSupport
import Testing
import TextIndex

/// A seeded generator for these tests (SplitMix64); `SEED=n` replays a failure.
struct TestRandom {
    var state: UInt64

    init(_ name: String) {
        state = testSeed(name)
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

@Suite struct InvertedIndexTests {
    static let vocabulary = [
        "cafe", "cafeteria", "caffe", "kahvila", "java", "javanese", "bar", "barcelona", "barber", "museo",
        "museum", "kirjasto", "sushi", "market", "harbour", "north", "nord", "helsinki", "helsingin", "rautatieasema",
    ]

    static func randomText(_ random: inout TestRandom, words: Int, from vocabulary: [String] = vocabulary) -> String {
        (0..<words).map { _ in vocabulary[random.below(vocabulary.count)] }.joined(separator: " ")
    }

    @Test func tokenizesPunctuationAndMixedScripts() {
        #expect(Tokenizer.tokens("Café Ekberg, Bulevardi 9").map(\.text) == ["cafe", "ekberg", "bulevardi", "9"])
        #expect(Tokenizer.tokens("星巴克咖啡").map(\.text) == ["星", "星巴", "巴", "巴克", "克", "克咖", "咖", "咖啡", "啡"])
        #expect(Tokenizer.tokens("Manner咖啡 Shanghai").map(\.text) == ["manner", "咖", "咖啡", "啡", "shanghai"])
        #expect(Tokenizer.tokens("  ...  ").isEmpty)
    }

    @Test func analysisWeighsFieldsAndMarksNames() {
        let analyzed = InvertedIndex.terms(of: [
            .init("Cafe Java", weight: 3, isName: true), .init("Java Street 1", weight: 1, isName: false),
            .init("Helsinki", weight: 1, isName: false),
        ])
        let java = analyzed.terms.first { $0.text == "java" }
        #expect(java?.frequency == 4)
        #expect(java?.fields == InvertedIndex.Posting.inName | InvertedIndex.Posting.inOther)
        #expect(analyzed.terms.first { $0.text == "helsinki" }?.fields == InvertedIndex.Posting.inOther)
        #expect(analyzed.length == 3 + 3 + 1 + 1 + 1 + 1)
        #expect(analyzed.wholeNames.isEmpty)
        #expect(analyzed.nameTokens == 2)
        // What ranking needs of the document travels in each of its postings.
        var index = InvertedIndex()
        index.add(document: 7, analyzed: analyzed, marked: true)
        index.add(document: 8, fields: [.init("Java", weight: 3, isName: true)])
        let postings = index.postings(of: index.term("java")!)
        #expect(postings.map(\.isMarked) == [true, false])
        #expect(postings.map(\.nameTokens) == [2, 1])
        #expect(postings.map(\.length) == [10, 3])
        #expect(InvertedIndex.terms(of: [.init("Java!", weight: 3, isName: true)]).wholeNames == ["java"])
    }

    /// The length a one-byte norm stands for, written from its definition: exact below 64, else the largest
    /// (8 + m) · 2^(e − 3) not above it.
    static func normLength(_ length: Int) -> Int {
        guard length >= 64 else { return length }
        var e = 0
        while 1 << (e + 1) <= length { e += 1 }
        return (8...15).map { $0 << (e - 3) }.last { $0 <= length }!
    }

    @Test func lengthNormsAreExactBelow64AndKeepFourSignificantBits() {
        var previous: UInt8 = 0
        for length in 0...Int(UInt16.max) {
            let norm = InvertedIndex.norm(length: length)
            #expect(Int(InvertedIndex.length(norm: norm)) == Self.normLength(length), "length \(length)")
            #expect(norm >= previous, "norms grow with the length (\(length))")
            previous = norm
        }
        #expect(InvertedIndex.norm(length: 1_000_000) == InvertedIndex.norm(length: Int(UInt16.max)))
        #expect(InvertedIndex.length(norm: InvertedIndex.norm(length: 100)) == 96)
    }

    /// BM25 of every posting against the textbook formula computed from the documents themselves (the length being
    /// what its norm stands for; long documents included, so that rounding shows).
    @Test func bm25MatchesTheFormula() {
        var random = TestRandom("bm25MatchesTheFormula")
        var index = InvertedIndex()
        var documents: [[InvertedIndex.Field]] = []
        for doc in 0..<300 {
            let fields: [InvertedIndex.Field] = [
                .init(Self.randomText(&random, words: 1 + random.below(3)), weight: 3, isName: true),
                .init(Self.randomText(&random, words: doc % 10 == 0 ? 40 + random.below(200) : random.below(4)), weight: 1, isName: false),
            ]
            documents.append(fields)
            index.add(document: UInt32(doc), fields: fields)
        }
        index.finishBulkLoad()
        func tokens(_ fields: [InvertedIndex.Field]) -> [(String, Int)] {
            fields.flatMap { f in Tokenizer.tokens(f.text).map { ($0.text, f.weight) } }
        }
        let lengths = documents.map { tokens($0).reduce(0) { $0 + $1.1 } }
        let average = Double(lengths.reduce(0, +)) / Double(documents.count)
        for word in Self.vocabulary {
            guard let term = index.term(word) else { continue }
            let containing = documents.indices.filter { tokens(documents[$0]).contains { $0.0 == word } }
            #expect(index.postings(of: term).map { Int($0.doc) } == containing)
            let n = Double(documents.count)
            let df = Double(containing.count)
            let idf = log(1 + (n - df + 0.5) / (df + 0.5))
            for posting in index.postings(of: term) {
                let tf = Double(tokens(documents[Int(posting.doc)]).filter { $0.0 == word }.reduce(0) { $0 + $1.1 })
                let length = Double(Self.normLength(lengths[Int(posting.doc)]))
                let expected = idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / average))
                let got = index.score(posting, idf: index.idf(documentFrequency: index.documentFrequency(term)))
                #expect(abs(got - expected) < 1e-9 * max(1, expected), "\(word) in \(posting.doc)")
            }
        }
    }

    /// The scorer with its tabled length terms answers `score` and `bm25` to the bit, for every norm, frequencies
    /// from 1 to the largest and average lengths from below 1 (clamped) to far above any document's.
    @Test func scorerEqualsTheFormulaToTheBit() {
        var random = TestRandom("scorerEqualsTheFormulaToTheBit")
        for _ in 0..<200 {
            let average = [0.5, 1, 3.7, 12.25, 1_000.5][random.below(5)] * (1 + Double(random.below(1_000)) / 1_000)
            let scorer = InvertedIndex.Scorer(averageLength: average)
            let idf = Double(1 + random.below(10_000)) / 997
            for norm in 0...Int(InvertedIndex.norm(length: Int(UInt16.max))) {
                let frequency = UInt16(1 + random.below(Int(UInt16.max)))
                let length = InvertedIndex.length(norm: UInt8(norm))
                let expected = InvertedIndex.bm25(frequency: frequency, length: length, averageLength: average, idf: idf)
                let posting = InvertedIndex.Posting(doc: 0, frequency: frequency, fields: InvertedIndex.Posting.inName, norm: UInt8(norm))
                #expect(scorer.score(posting, idf: idf).bitPattern == expected.bitPattern, "norm \(norm), tf \(frequency), average \(average)")
                #expect(scorer.bm25(frequency: frequency, norm: UInt8(norm), idf: idf).bitPattern == expected.bitPattern)
            }
            // By length: the norms' own lengths from the table, and every other length (which no posting has) too.
            let frequency = UInt16(1 + random.below(Int(UInt16.max)))
            for _ in 0..<300 {
                let length = UInt16(random.below(Int(UInt16.max) + 1))
                let expected = InvertedIndex.bm25(frequency: frequency, length: length, averageLength: average, idf: idf)
                #expect(scorer.bm25(frequency: frequency, length: length, idf: idf).bitPattern == expected.bitPattern, "length \(length)")
            }
        }
    }

    /// Block bounds and sorted lists hold after random adds and removes, including lists that cross block sizes.
    @Test func invariantsHoldUnderRandomWrites() throws {
        var random = TestRandom("invariantsHoldUnderRandomWrites")
        // A small vocabulary, so that posting lists grow past a block and shrink below one again.
        let words = Array(Self.vocabulary.prefix(5))
        var index = InvertedIndex()
        var present: [UInt32: [InvertedIndex.Field]] = [:]
        // Most documents have a position (every block's box must hold its documents'); some have none.
        func position() -> InvertedIndex.Position {
            random.below(10) == 0
                ? .unknown : InvertedIndex.Position(latitude: Float(random.below(1_800)) / 10 - 90, longitude: Float(random.below(3_600)) / 10 - 180)
        }
        for doc in 0..<600 {
            let fields: [InvertedIndex.Field] = [.init(Self.randomText(&random, words: 1 + random.below(3), from: words), weight: 3, isName: true)]
            index.add(document: UInt32(doc), fields: fields, at: position())
            present[UInt32(doc)] = fields
        }
        index.finishBulkLoad()
        try index.checkInvariants()
        for step in 0..<1_500 {
            let doc = UInt32(random.below(700))
            if let fields = present[doc] {
                index.remove(document: doc, fields: fields)
                present[doc] = nil
            } else {
                let fields: [InvertedIndex.Field] = [
                    .init(Self.randomText(&random, words: 1 + random.below(3), from: words), weight: 3, isName: true),
                    .init(Self.randomText(&random, words: random.below(3), from: words), weight: 1, isName: false),
                ]
                index.add(document: doc, fields: fields, at: position())
                present[doc] = fields
            }
            if step % 100 == 0 {
                do { try index.checkInvariants() } catch { Issue.record("after step \(step): \(error)") }
            }
        }
        try index.checkInvariants()
        #expect(index.documentCount == present.count)
        // Some list is long enough to have blocks, so bounds were exercised.
        #expect(words.contains { index.term($0).map { !index.blockBounds(of: $0).isEmpty } ?? false })
    }

    /// Replacing a document (`replace`) leaves what removing and adding it again leaves, as a fresh index of the
    /// final documents has it: the same lists, whole names, positions, counts and lengths, with bounds and boxes that
    /// hold their blocks. Oracle: a fresh index built from the documents as they end. Drawn writes: moves that keep
    /// every word, new texts that keep some words and bring others, removals and new documents, on lists that grow
    /// past a block and shrink below one again. When every write keeps its words, the bounds and boxes are exactly a
    /// fresh index's (the in-place path makes its block again); after the shifting writes they may only be looser.
    @Test func replacingEqualsAFreshIndexOfTheFinalDocuments() throws {
        var random = TestRandom("replacingEqualsAFreshIndexOfTheFinalDocuments")
        let words = Array(Self.vocabulary.prefix(6))
        func position() -> InvertedIndex.Position {
            random.below(12) == 0
                ? .unknown : InvertedIndex.Position(latitude: Float(random.below(1_800)) / 10 - 90, longitude: Float(random.below(3_600)) / 10 - 180)
        }
        func fields() -> [InvertedIndex.Field] {
            [
                .init(Self.randomText(&random, words: 1 + random.below(3), from: words), weight: 3, isName: true),
                .init(Self.randomText(&random, words: random.below(3), from: words), weight: 1, isName: false),
            ]
        }
        var documents: [UInt32: (fields: [InvertedIndex.Field], position: InvertedIndex.Position)] = [:]
        var index = InvertedIndex()
        for doc in 0..<700 {
            let document = (fields(), position())
            index.add(document: UInt32(doc), fields: document.0, at: document.1)
            documents[UInt32(doc)] = document
        }
        index.finishBulkLoad()
        func fresh() -> InvertedIndex {
            var fresh = InvertedIndex()
            for (doc, document) in documents.sorted(by: { $0.key < $1.key }) {
                fresh.add(document: doc, fields: document.fields, at: document.position)
            }
            fresh.finishBulkLoad()
            return fresh
        }
        func expectSame(exactBounds: Bool, _ context: String) throws {
            let expected = fresh()
            do { try index.checkInvariants() } catch { Issue.record("\(context): \(error)") }
            #expect(index.documentCount == expected.documentCount, "\(context)")
            #expect(index.averageLength == expected.averageLength, "\(context)")
            func bits(_ p: InvertedIndex.Position) -> [UInt32] { [p.latitude.bitPattern, p.longitude.bitPattern] }  // NaN: unknown
            for doc in documents.keys { #expect(bits(index.position(of: doc)) == bits(expected.position(of: doc)), "\(context): document \(doc)") }
            for word in words {
                guard let b = expected.term(word) else { continue }
                let a = try #require(index.term(word))
                #expect(Array(index.postings(of: a)) == Array(expected.postings(of: b)), "\(context): \(word)")
                #expect(index.wholeNameDocuments(of: a) == expected.wholeNameDocuments(of: b), "\(context): \(word)")
                if exactBounds {
                    #expect(Array(index.blockBounds(of: a)) == Array(expected.blockBounds(of: b)), "\(context): \(word)")
                    #expect(Array(index.blockBoxes(of: a)) == Array(expected.blockBoxes(of: b)), "\(context): \(word)")
                }
            }
        }
        // Moves and rewrites that keep every word: in place.
        for step in 0..<600 {
            let doc = UInt32(random.below(700))
            let old = documents[doc]!
            let same = random.below(2) == 0 ? old.fields : Array(old.fields.reversed())
            let moved = (same, position())
            index.replace(document: doc, fields: old.fields, with: moved.0, at: moved.1)
            documents[doc] = moved
            if step % 200 == 199 { try expectSame(exactBounds: true, "in place, step \(step)") }
        }
        // Every kind of write.
        for step in 0..<1_500 {
            let doc = UInt32(random.below(800))
            switch (documents[doc], random.below(4)) {
            case (let old?, 0):
                index.remove(document: doc, fields: old.fields)
                documents[doc] = nil
            case (let old?, _):
                let new = (fields(), position())
                index.replace(document: doc, fields: old.fields, with: new.0, at: new.1)
                documents[doc] = new
            case (nil, _):
                let new = (fields(), position())
                index.add(document: doc, fields: new.0, at: new.1)
                documents[doc] = new
            }
            if step % 250 == 249 { try expectSame(exactBounds: false, "any write, step \(step)") }
        }
        // Lists crossed a block's size, so bounds were made, shifted and dropped.
        #expect(words.contains { index.term($0).map { index.blockBounds(of: $0).count > 2 } ?? false })
    }

    /// Numbering documents anew gives the index that adding them under their new numbers gives: the same lists,
    /// bounds, boxes, positions and whole names.
    @Test func renumberingEqualsAddingUnderTheNewNumbers() throws {
        var random = TestRandom("renumberingEqualsAddingUnderTheNewNumbers")
        let words = Array(Self.vocabulary.prefix(6))
        let count = 500
        let documents: [[InvertedIndex.Field]] = (0..<count).map { _ in
            [
                .init(Self.randomText(&random, words: 1 + random.below(2), from: words), weight: 3, isName: true),
                .init(Self.randomText(&random, words: random.below(3), from: words), weight: 1, isName: false),
            ]
        }
        let positions = (0..<count).map { _ in
            InvertedIndex.Position(latitude: Float(random.below(1_800)) / 10 - 90, longitude: Float(random.below(3_600)) / 10 - 180)
        }
        var numbers = (0..<count).map { UInt32($0) }
        for i in stride(from: count - 1, to: 0, by: -1) { numbers.swapAt(i, random.below(i + 1)) }
        var renumbered = InvertedIndex()
        for doc in 0..<count { renumbered.add(document: UInt32(doc), fields: documents[doc], at: positions[doc]) }
        renumbered.finishBulkLoad()
        renumbered.renumber(numbers)
        var direct = InvertedIndex()
        let old = (0..<count).sorted { numbers[$0] < numbers[$1] }
        for doc in old { direct.add(document: numbers[doc], fields: documents[doc], at: positions[doc]) }
        direct.finishBulkLoad()
        try renumbered.checkInvariants()
        for word in words {
            let a = try #require(renumbered.term(word))
            let b = try #require(direct.term(word))
            #expect(renumbered.postings(of: a) == direct.postings(of: b), "\(word)")
            #expect(renumbered.blockBounds(of: a) == direct.blockBounds(of: b), "\(word)")
            #expect(renumbered.blockBoxes(of: a) == direct.blockBoxes(of: b), "\(word)")
            #expect(renumbered.wholeNameDocuments(of: a) == direct.wholeNameDocuments(of: b), "\(word)")
        }
        #expect((0..<UInt32(count)).allSatisfy { renumbered.position(of: $0) == direct.position(of: $0) })
        #expect(words.contains { renumbered.term($0).map { !renumbered.blockBoxes(of: $0).isEmpty } ?? false })
    }

    /// The box of a run of document numbers holds every one of their positions, whatever the run (inside one range,
    /// across several, across whole wide ranges), after adding, numbering anew and a snapshot; the box of a run that
    /// is one range is the box of its positions exactly.
    @Test func boxesOfDocumentRunsHoldTheirPositions() throws {
        var random = TestRandom("boxesOfDocumentRunsHoldTheirPositions")
        let count = 20_000
        var index = InvertedIndex()
        var positions: [InvertedIndex.Position] = []
        for doc in 0..<count {
            // Positions that drift as a space-filling curve's do, so that a range's box is small.
            let position = InvertedIndex.Position(
                latitude: Float(doc % 1_600) / 10 - 80 + Float(random.below(100)) / 1_000,
                longitude: Float(doc / 1_600) * 20 - 170 + Float(random.below(100)) / 1_000
            )
            index.add(document: UInt32(doc), fields: [.init("w\(random.below(50))", weight: 1, isName: true)], at: position)
            positions.append(position)
        }
        func check(_ index: InvertedIndex, _ positions: [InvertedIndex.Position], _ context: String) {
            for trial in 0..<400 {
                let first = random.below(count)
                let span = [random.below(InvertedIndex.rangeSize), random.below(3 * InvertedIndex.wideRangeSize), random.below(count)][trial % 3]
                let last = min(count - 1, first + span)
                let box = index.box(from: UInt32(first), through: UInt32(last))
                if let outside = (first...last).first(where: { !box.contains(positions[$0]) }) {
                    Issue.record("\(context): the box of \(first)...\(last) does not hold document \(outside)")
                    return
                }
            }
            for range in [0, 1, count / InvertedIndex.rangeSize / 2, random.below(count / InvertedIndex.rangeSize)] {
                var exact = InvertedIndex.BlockBox()
                for doc in (range * InvertedIndex.rangeSize)..<((range + 1) * InvertedIndex.rangeSize) { exact.include(positions[doc]) }
                let first = UInt32(range * InvertedIndex.rangeSize)
                #expect(index.box(from: first, through: first + UInt32(InvertedIndex.rangeSize - 1)) == exact, "\(context): range \(range)")
            }
        }
        try index.checkInvariants()
        check(index, positions, "added")
        #expect(index.box(from: UInt32(count + 100), through: UInt32(count + 200)) == .world, "numbers past every position")

        var numbers = (0..<count).map { UInt32($0) }
        for i in stride(from: count - 1, to: 0, by: -1) { numbers.swapAt(i, random.below(i + 1)) }
        index.renumber(numbers)
        var moved = positions
        for (old, new) in numbers.enumerated() { moved[Int(new)] = positions[old] }
        try index.checkInvariants()
        check(index, moved, "renumbered")

        let scratch = ScratchDirectory("boxes")
        let path = scratch.url.appendingPathComponent("text.snapshot").path
        let writer = try SnapshotWriter(path: path, formatVersion: 1)
        try index.write(to: writer)
        try writer.commit()
        let restored = try InvertedIndex(snapshot: SnapshotReader(path: path, formatVersion: 1))
        try restored.checkInvariants()
        check(restored, moved, "restored")
    }

    /// Typo candidates from the automaton equal a brute-force bounded edit distance over the whole dictionary.
    @Test func typoCandidatesMatchBruteForce() {
        var random = TestRandom("typoCandidatesMatchBruteForce")
        let letters = Array("abcdeiklmnorstuvyäö")
        var words = Set<String>()
        while words.count < 3_000 {
            words.insert(String((0..<(2 + random.below(10))).map { _ in letters[random.below(letters.count)] }))
        }
        var index = InvertedIndex()
        for (doc, word) in words.sorted().enumerated() { index.add(document: UInt32(doc), fields: [.init(word, weight: 1, isName: true)]) }
        index.finishBulkLoad()
        let terms = index.terms
        for trial in 0..<300 {
            var query = Array(terms[random.below(terms.count)].unicodeScalars)
            // Mutate: substitute, delete, insert or transpose, once or twice.
            for _ in 0..<(1 + random.below(2)) {
                let i = random.below(max(1, query.count))
                switch random.below(4) {
                case 0 where !query.isEmpty: query[i] = letters[random.below(letters.count)].unicodeScalars.first!
                case 1 where query.count > 1: query.remove(at: i)
                case 2: query.insert(letters[random.below(letters.count)].unicodeScalars.first!, at: i)
                default: if i + 1 < query.count { query.swapAt(i, i + 1) }
                }
            }
            let word = String(String.UnicodeScalarView(query))
            let budget = EditDistance.allowedTypos(length: query.count)
            var expected: [String: Int] = [:]
            if budget > 0 {
                for term in terms {
                    if let d = EditDistance.within(query, Array(term.unicodeScalars), limit: budget), d > 0 { expected[term] = d }
                }
            }
            var got: [String: Int] = [:]
            for (term, edits) in index.typoNeighbours(of: word) { got[terms[Int(term)]] = edits }
            #expect(got == expected, "trial \(trial): \(word)")
        }
    }

    @Test func completionsAreTheMostFrequentLongerTerms() {
        var index = InvertedIndex()
        var doc: UInt32 = 0
        for (word, count) in [("cafe", 5), ("cafeteria", 3), ("cafes", 1), ("caffe", 4), ("bar", 2)] {
            for _ in 0..<count {
                index.add(document: doc, fields: [.init(word, weight: 1, isName: true)])
                doc += 1
            }
        }
        index.finishBulkLoad()
        let names = { (terms: [Int32]) in terms.map { index.terms[Int($0)] } }
        #expect(Set(names(index.completions(of: "caf"))) == ["cafe", "cafeteria", "cafes", "caffe"])
        #expect(Set(names(index.completions(of: "cafe"))) == ["cafeteria", "cafes"])
        #expect(index.completions(of: "x").isEmpty)
        let expansions = index.expansions(of: "cafe", isLast: true)
        #expect(expansions.first == .init(term: index.term("cafe")!, kind: .exact))
        #expect(expansions.dropFirst().allSatisfy { $0.kind == .prefix })
        // A word absent from the index (and without completions) gets its typo neighbours.
        #expect(names(index.expansions(of: "cafeterya", isLast: true).map(\.term)) == ["cafeteria"])
        #expect(index.expansions(of: "cafeterya", isLast: true).first?.typos == 1)
        #expect(index.expansions(of: "cafetyra", isLast: true).isEmpty)  // two edits in 8 letters: over the budget
    }

    @Test func topKKeepsTheBestEntryOfADocument() {
        var top = TopK(capacity: 2)
        top.offer(.init(bucket: 1, score: 1, doc: 7))
        top.offer(.init(bucket: 1, score: 3, doc: 8))
        top.offer(.init(bucket: 0, score: 0.5, doc: 7))  // document 7 again, in a better bucket: raised in place
        top.offer(.init(bucket: 1, score: 2, doc: 9))
        #expect(top.sorted().map(\.doc) == [7, 8])
        #expect(top.sorted().first?.bucket == 0)
        #expect(!top.admits(bucket: 1, scoreBound: 2.9))
        #expect(top.admits(bucket: 1, scoreBound: 3, firstDoc: 5))
        #expect(!top.admits(bucket: 1, scoreBound: 3, firstDoc: 9))
    }

    /// TopK against brute force (each document's best entry, sorted, the first `capacity`), for heaps found by
    /// scanning (up to `TopK.scanLimit`) and by a position map, with documents offered many times in any order.
    @Test func topKEqualsBruteForce() {
        var random = TestRandom("topKEqualsBruteForce")
        for capacity in [1, 2, 5, 21, TopK.scanLimit, TopK.scanLimit + 1, 200] {
            for round in 0..<20 {
                var top = TopK(capacity: capacity)
                var best: [UInt32: TopK.Entry] = [:]
                for _ in 0..<(capacity * 4 + random.below(400)) {
                    // Few buckets, scores and documents, so that ties and repeats are common.
                    let entry = TopK.Entry(
                        bucket: UInt64(random.below(3)),
                        score: Double(random.below(6)),
                        doc: UInt32(random.below(capacity * 3 + 5))
                    )
                    top.offer(entry)
                    if let old = best[entry.doc], !entry.ranks(before: old) { continue }
                    best[entry.doc] = entry
                }
                let expected = Array(best.values.sorted { $0.ranks(before: $1) }.prefix(capacity))
                #expect(top.sorted() == expected, "capacity \(capacity), round \(round)")
                #expect(expected.allSatisfy { top.contains($0.doc) }, "capacity \(capacity), round \(round)")
            }
        }
    }
}
