import Foundation
import SnapshotFile
import Synchronization

/// An inverted index with BM25 scoring (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
/// Beyond", 2009; k1 = 1.2, b = 0.75), incremental adds and removes, a term dictionary for prefix and typo
/// expansion, and per-block score bounds for top-k evaluation that skips blocks (block-max WAND, Ding & Suel 2011;
/// Lucene's and Tantivy's block-max scorers).
///
/// Documents are numbered by the caller. Fields carry weights (a name counts three times an address), folded into
/// the term frequency; each posting also says in which kind of field the term occurs (the name, or only other
/// fields), for the "name before address" ranking rule.
///
/// Each posting carries what ranking needs of its document, so that scoring a posting reads nothing else: the
/// document's length as a one-byte norm (exact below 64, then four significant bits, as Lucene's and Tantivy's
/// field norms; BM25 uses the norm's length), how many tokens its first name field has (capped at 15), and one bit
/// the caller sets per document (the engine marks pins).
///
/// Documents may have a position (latitude and longitude, as Floats): each block then also has the box around its
/// documents' positions, so that a query ranked by distance bounds a block's distance without reading a posting
/// (block-max for the distance decay). The caller numbers documents in space-filling-curve order (`renumber`), so
/// that a block's documents lie close together and its box is small.
///
/// Invariants (`checkInvariants()`): each posting list is sorted by document and holds a document at most once; a
/// list longer than `blockSize` has one bound and one box per block of `blockSize` postings; each bound is at least
/// the largest frequency and at most the smallest document length of its block's postings of each field kind, and
/// each box holds the positions of its block's documents (the whole world when one has none).
public struct InvertedIndex: Sendable {
    public struct Posting: Sendable, Equatable, BitwiseCopyable {
        public let doc: UInt32
        public let frequency: UInt16
        /// `Posting.inName`, `Posting.inOther` and `Posting.marked` bits; the first name field's token count above.
        public let fields: UInt8
        /// The document's length, `InvertedIndex.norm(length:)`.
        public let norm: UInt8

        public static let inName: UInt8 = 1
        public static let inOther: UInt8 = 2
        public static let marked: UInt8 = 4
        /// `nameTokens` of a first name field of this many tokens or more.
        public static let manyNameTokens = 15

        public init(doc: UInt32, frequency: UInt16, fields: UInt8, norm: UInt8) {
            self.doc = doc
            self.frequency = frequency
            self.fields = fields
            self.norm = norm
        }

        // Read in every query's inner loops, in other modules: inlinable.
        @inlinable public var isInName: Bool { fields & Posting.inName != 0 }
        /// Whether the caller marked the document (`add(document:fields:marked:)`).
        @inlinable public var isMarked: Bool { fields & Posting.marked != 0 }
        /// Tokens of the document's first name field, at most `manyNameTokens`.
        @inlinable public var nameTokens: Int { Int(fields >> 4) }
        /// The document length BM25 uses.
        @inlinable public var length: UInt16 { InvertedIndex.length(norm: norm) }
    }

    /// One field of a document to index.
    public struct Field: Sendable {
        public var text: String
        public var weight: Int
        /// Whether this is the record's name (the ranking rules put name matches before other fields).
        public var isName: Bool
        /// Terms as they are, separated by spaces, not tokenized and not counted in the document's length or its name's
        /// tokens: what a name reads as in pinyin (`PinyinDictionary.runTerms`).
        public var isVerbatim: Bool

        public init(_ text: String, weight: Int, isName: Bool, isVerbatim: Bool = false) {
            self.text = text
            self.weight = weight
            self.isName = isName
            self.isVerbatim = isVerbatim
        }

        /// The field's terms: its tokens, or its verbatim terms.
        func terms() -> [String] {
            isVerbatim ? text.split(separator: " ").map(String.init) : Tokenizer.tokens(text).map(\.text)
        }
    }

    /// A document analyzed by `terms(of:)`: distinct terms with weighted frequency and field bits, its weighted
    /// length, the terms its name fields normalize to whole (a name that is one term), and its first name field's
    /// token count.
    public struct Analyzed: Sendable {
        public var terms: [(text: String, frequency: Int, fields: UInt8)]
        public var length: Int
        public var wholeNames: [String]
        public var nameTokens = 0
    }

    /// Score bounds of one block of a posting list, per field kind: the largest frequency and the smallest
    /// document length among its postings of that kind (frequency 0: none in this block).
    public struct BlockBound: Sendable, Equatable, BitwiseCopyable {
        public var nameFrequency: UInt16 = 0
        public var nameLength: UInt16 = .max
        public var otherFrequency: UInt16 = 0
        public var otherLength: UInt16 = .max
    }

    /// Where a document lies, in degrees (NaN: unknown).
    public struct Position: Sendable, Equatable, BitwiseCopyable {
        public var latitude: Float
        public var longitude: Float

        public init(latitude: Float, longitude: Float) {
            self.latitude = latitude
            self.longitude = longitude
        }

        public static let unknown = Position(latitude: .nan, longitude: .nan)
    }

    /// The box around the positions of a block's documents (empty: south > north).
    public struct BlockBox: Sendable, Equatable, BitwiseCopyable {
        public var south: Float = .infinity
        public var north: Float = -.infinity
        public var west: Float = .infinity
        public var east: Float = -.infinity

        public static let world = BlockBox(south: -90, north: 90, west: -180, east: 180)

        /// An empty box, which `include` grows.
        public init() {}

        init(south: Float, north: Float, west: Float, east: Float) {
            (self.south, self.north, self.west, self.east) = (south, north, west, east)
        }

        public mutating func include(_ position: Position) {
            guard !position.latitude.isNaN, !position.longitude.isNaN else {
                self = .world
                return
            }
            south = min(south, position.latitude)
            north = max(north, position.latitude)
            west = min(west, position.longitude)
            east = max(east, position.longitude)
        }

        /// Grows the box to hold another.
        public mutating func include(_ other: BlockBox) {
            south = min(south, other.south)
            north = max(north, other.north)
            west = min(west, other.west)
            east = max(east, other.east)
        }

        /// Whether the box holds the position (any position, when the box is the world).
        public func contains(_ position: Position) -> Bool {
            if self == .world { return true }
            return position.latitude >= south && position.latitude <= north && position.longitude >= west && position.longitude <= east
        }
    }

    /// One way a query word can match: a dictionary term, and how far it is from the word as typed.
    public struct Expansion: Sendable, Hashable {
        public enum Kind: UInt8, Sendable {
            case exact = 0
            case prefix = 1
            case typo = 2
        }
        public let term: Int32
        public let kind: Kind
        /// Edits from the word as typed (typo expansions only).
        public let typos: UInt8

        public init(term: Int32, kind: Kind, typos: UInt8 = 0) {
            self.term = term
            self.kind = kind
            self.typos = typos
        }
    }

    public static let k1 = 1.2
    public static let b = 0.75
    /// Postings per block bound. 64 against 128: in-process keyword mean 69–73 → 64–65 µs at 1 M (bounds over fewer
    /// postings skip more blocks); the bounds take 1.6 % of the postings' memory (0.8 % at 128). Snapshots store the
    /// bounds: changing this changes both snapshot formats.
    public static let blockSize = 64
    /// Prefix completions considered for the last word of a query: the most frequent ones.
    public static let maxCompletions = 64

    var termIDs: [String: Int32] = [:]
    public internal(set) var terms: [String] = []
    /// Per term; served from the snapshot's mapping after a restart (`FlatArray`), a list copied by its first write.
    var postings: [FlatArray<Posting>] = []
    var bounds: [FlatArray<BlockBound>] = []
    /// Per term, one box per block (as `bounds`).
    var boxes: [FlatArray<BlockBox>] = []
    /// Per document, its position (`Position.unknown` when none was given).
    @usableFromInline var positions = FlatArray<Position>()
    /// Per `rangeSize` document numbers, and per `wideRangeSize`, the box around their positions: the box of any run
    /// of documents (`box(from:through:)`) without reading their positions, a cache miss apiece. Boxes only grow: a
    /// document removed leaves its old place inside, and the box still holds every document of its range.
    var rangeBoxes = FlatArray<BlockBox>()
    var wideRangeBoxes = FlatArray<BlockBox>()
    public static let rangeSize = 64
    public static let wideRangeSize = 4_096
    /// Per term, the documents whose whole name normalizes to that term (sorted), for the exactness rule.
    var wholeNames: [Int32: [UInt32]] = [:]
    @usableFromInline var totalLength = 0
    public internal(set) var documentCount = 0
    /// Terms sorted (by Unicode scalar, which is also UTF-8 byte order), as flat scalar keys for prefix ranges and
    /// the typo automaton; terms added since are in `unsortedTerms`.
    var sortedTerms: [Int32] = []
    var sortedKeys = ScalarKeys()
    var unsortedTerms: [Int32] = []
    /// Names this index's dictionary: terms are only ever appended to it, so what is derived from its first terms
    /// (`PinyinTerms`) stays true of them while the identity is the same. A new index (built, or read from a
    /// snapshot) has a new one.
    public let identity: UInt64 = InvertedIndex.identities.add(1, ordering: .relaxed).newValue
    private static let identities = Atomic<UInt64>(0)

    public init() {}

    // MARK: Writing

    /// A document's distinct terms with their weighted frequencies and field bits, and its weighted length.
    public static func terms(of fields: [Field]) -> Analyzed {
        // Documents have a handful of distinct terms: a linear scan beats building a dictionary per document.
        var frequencies: [(text: String, frequency: Int, fields: UInt8)] = []
        var length = 0
        var wholeNames: [String] = []
        var nameTokens: Int?
        for field in fields {
            if field.isVerbatim {
                let bit = field.isName ? Posting.inName : Posting.inOther
                for term in field.terms() {
                    if let i = frequencies.firstIndex(where: { $0.text == term }) {
                        frequencies[i].frequency += field.weight
                        frequencies[i].fields |= bit
                    } else {
                        frequencies.append((term, field.weight, bit))
                    }
                }
                continue
            }
            let tokens = Tokenizer.tokens(field.text)
            if field.isName {
                if nameTokens == nil { nameTokens = tokens.count }
                let normalized = TextNormalizer.normalize(field.text)
                if tokens.contains(where: { $0.text == normalized }) && !wholeNames.contains(normalized) { wholeNames.append(normalized) }
            }
            let bit = field.isName ? Posting.inName : Posting.inOther
            for token in tokens {
                // Terms are NFC already (TextNormalizer), so equal text is equal bytes; String's == would check
                // normalization again for every non-ASCII pair.
                if let i = frequencies.firstIndex(where: {
                    $0.text.utf8.count == token.text.utf8.count && $0.text.utf8.elementsEqual(token.text.utf8)
                }) {
                    frequencies[i].frequency += field.weight
                    frequencies[i].fields |= bit
                } else {
                    frequencies.append((token.text, field.weight, bit))
                }
                length += field.weight
            }
        }
        return Analyzed(terms: frequencies, length: length, wholeNames: wholeNames, nameTokens: nameTokens ?? 0)
    }

    /// Adds a document's fields, `marked` or not (`Posting.isMarked`), at a position if it has one. A document
    /// already present must be removed first.
    public mutating func add(document: UInt32, fields: [Field], marked: Bool = false, at position: Position = .unknown) {
        insert(document: document, InvertedIndex.terms(of: fields), marked: marked, at: position)
    }

    /// Adds a document already analyzed by `terms(of:)` (bulk loads analyze on several threads, then add in order).
    public mutating func add(document: UInt32, analyzed: Analyzed, marked: Bool = false, at position: Position = .unknown) {
        insert(document: document, analyzed, marked: marked, at: position)
    }

    private mutating func insert(document: UInt32, _ analyzed: Analyzed, marked: Bool, at position: Position) {
        while positions.count <= Int(document) {
            // A number skipped has no position: its ranges become the world (as when they are made from positions).
            if positions.count < Int(document) { includeInRangeBoxes(UInt32(positions.count), .unknown) }
            positions.append(.unknown)
        }
        positions[Int(document)] = position
        includeInRangeBoxes(document, position)
        let length = min(analyzed.length, Int(UInt16.max))
        let norm = InvertedIndex.norm(length: length)
        totalLength += length
        documentCount += 1
        let facts = UInt8(min(analyzed.nameTokens, Posting.manyNameTokens)) << 4 | (marked ? Posting.marked : 0)
        for (text, frequency, fields) in analyzed.terms {
            let term = Int(termID(text))
            let posting = Posting(doc: document, frequency: UInt16(min(frequency, Int(UInt16.max))), fields: fields | facts, norm: norm)
            if let last = postings[term].last, last.doc > document {
                insertPosting(posting, term: term)
            } else {
                postings[term].append(posting)
                extendBounds(term, with: posting)
            }
        }
        addWholeNames(of: document, analyzed.wholeNames)
    }

    /// Files `document` under the terms its name is whole (`Analyzed.wholeNames`), in place (a copy of a chain's list
    /// per write would cost the list).
    private mutating func addWholeNames(of document: UInt32, _ names: [String]) {
        for name in names {
            guard let term = termIDs[name] else { continue }
            if let last = wholeNames[term]?.last, last > document {
                let i = InvertedIndex.lowerBound(wholeNames[term]!, document)
                wholeNames[term]!.insert(document, at: i)
            } else {
                wholeNames[term, default: []].append(document)
            }
        }
    }

    /// Takes `document` out of the list of documents whose whole name is `term`, if it is there.
    private mutating func removeWholeName(_ term: Int32, _ document: UInt32) {
        guard let list = wholeNames[term] else { return }
        let j = InvertedIndex.lowerBound(list, document)
        guard j < list.count && list[j] == document else { return }
        if list.count == 1 {
            wholeNames[term] = nil
        } else {
            wholeNames[term]!.remove(at: j)
        }
    }

    /// Replaces a document: what `remove(document:fields:)` with its old fields and then `add` with the new ones leave,
    /// but a term the document keeps has its posting rewritten where it stands, and only that posting's block has its
    /// bound and box made again. A record written again with the same words (a move, a new phone number) then costs a
    /// block per word, not the word's whole list: with a removal and an insertion, every block after the document's
    /// was made again, twice — at 1 M POIs, 73 % of the server's time under a load of POI updates (RESULTS.md,
    /// issue 59).
    public mutating func replace(
        document: UInt32,
        fields oldFields: [Field],
        with fields: [Field],
        marked: Bool = false,
        at position: Position = .unknown
    ) {
        guard Int(document) < positions.count else {
            remove(document: document, fields: oldFields)
            add(document: document, fields: fields, marked: marked, at: position)
            return
        }
        let analyzed = InvertedIndex.terms(of: fields)
        var kept = Set<String>()
        kept.reserveCapacity(analyzed.terms.count)
        for term in analyzed.terms { kept.insert(term.text) }
        // The old terms: gone ones removed, every one out of the whole-name lists (the new ones are filed below).
        var seen = Set<String>()
        var oldLength = 0
        for field in oldFields {
            for text in field.terms() {
                if !field.isVerbatim { oldLength += field.weight }
                guard seen.insert(text).inserted, let term = termIDs[text] else { continue }
                if !kept.contains(text) { removePosting(document, term: Int(term)) }
                removeWholeName(term, document)
            }
        }
        positions[Int(document)] = position
        includeInRangeBoxes(document, position)
        let length = min(analyzed.length, Int(UInt16.max))
        let norm = InvertedIndex.norm(length: length)
        totalLength += length - min(oldLength, Int(UInt16.max))
        let facts = UInt8(min(analyzed.nameTokens, Posting.manyNameTokens)) << 4 | (marked ? Posting.marked : 0)
        for (text, frequency, fields) in analyzed.terms {
            let term = Int(termID(text))
            let posting = Posting(doc: document, frequency: UInt16(min(frequency, Int(UInt16.max))), fields: fields | facts, norm: norm)
            let i = InvertedIndex.lowerBound(postings[term], document)
            if seen.contains(text), i < postings[term].count, postings[term][i].doc == document {
                postings[term][i] = posting
                if !bounds[term].isEmpty { remakeBlock(term, i / InvertedIndex.blockSize) }
            } else if i == postings[term].count {
                postings[term].append(posting)
                extendBounds(term, with: posting)
            } else {
                insertPosting(posting, term: term)
            }
        }
        addWholeNames(of: document, analyzed.wholeNames)
    }

    /// Removes a document, given the same fields it was added with.
    public mutating func remove(document: UInt32, fields: [Field]) {
        var seen = Set<String>()
        var length = 0
        for field in fields {
            for text in field.terms() {
                if !field.isVerbatim { length += field.weight }
                guard seen.insert(text).inserted else { continue }
                guard let term = termIDs[text] else { continue }
                removePosting(document, term: Int(term))
                removeWholeName(term, document)
            }
        }
        totalLength -= min(length, Int(UInt16.max))
        documentCount -= 1
    }

    /// Sorts the term dictionary after a bulk load (later terms are kept aside until the next call).
    public mutating func finishBulkLoad() {
        sortedTerms = (0..<Int32(terms.count)).sorted { terms[Int($0)] < terms[Int($1)] }
        sortedKeys = ScalarKeys(sortedTerms.map { terms[Int($0)] })
        unsortedTerms = []
    }

    private mutating func termID(_ text: String) -> Int32 {
        if let id = termIDs[text] { return id }
        let id = Int32(terms.count)
        termIDs[text] = id
        terms.append(text)
        postings.append([])
        bounds.append([])
        boxes.append([])
        unsortedTerms.append(id)
        return id
    }

    /// Keeps the last block's bound up to date after an append (bulk loads append only).
    private mutating func extendBounds(_ term: Int, with posting: Posting) {
        let count = postings[term].count
        guard count > InvertedIndex.blockSize else { return }
        if bounds[term].isEmpty {
            rebuildBounds(Int32(term), from: 0)
            return
        }
        if (count - 1) % InvertedIndex.blockSize == 0 {
            bounds[term].append(BlockBound())
            boxes[term].append(BlockBox())
        }
        bounds[term][bounds[term].count - 1].include(posting)
        boxes[term][boxes[term].count - 1].include(positions[Int(posting.doc)])
    }

    /// Inserts a posting before the end of its list. The postings after it move one place on, each block's first
    /// into the next: the block it lands in is made again, and every later block's bound and box take in the one
    /// posting that moved into it (a bound may only be looser than its block, never tighter: `checkInvariants`), so
    /// an insertion costs its block and a bound per later block, not a position read per later posting.
    private mutating func insertPosting(_ posting: Posting, term: Int) {
        let size = InvertedIndex.blockSize
        let i = InvertedIndex.lowerBound(postings[term], posting.doc)
        postings[term].insert(posting, at: i)
        let count = postings[term].count
        guard count > size else { return }
        guard !bounds[term].isEmpty else {
            rebuildBounds(Int32(term), from: 0)
            return
        }
        let before = bounds[term].count
        for b in stride(from: i / size + 1, to: before, by: 1) {
            let moved = postings[term][b * size]
            bounds[term][b].include(moved)
            boxes[term][b].include(position(of: moved.doc))
        }
        if (count + size - 1) / size > before {
            bounds[term].append(BlockBound())
            boxes[term].append(BlockBox())
            remakeBlock(term, before)
        }
        remakeBlock(term, i / size)
    }

    /// Removes `document`'s posting from a list, if it is there. The postings after it move one place back, each
    /// block's first into the block before: the block it left is made again and every later block's bound and box
    /// take in the posting that moved into it from the next (as `insertPosting`).
    private mutating func removePosting(_ document: UInt32, term: Int) {
        let size = InvertedIndex.blockSize
        let i = InvertedIndex.lowerBound(postings[term], document)
        guard i < postings[term].count && postings[term][i].doc == document else { return }
        postings[term].remove(at: i)
        let count = postings[term].count
        guard !bounds[term].isEmpty else { return }
        guard count > size else {
            bounds[term] = []
            boxes[term] = []
            return
        }
        let blocks = (count + size - 1) / size
        if bounds[term].count > blocks {
            bounds[term].removeLast()
            boxes[term].removeLast()
        }
        for b in stride(from: i / size + 1, to: blocks, by: 1) where (b + 1) * size - 1 < count {
            let moved = postings[term][(b + 1) * size - 1]
            bounds[term][b].include(moved)
            boxes[term][b].include(position(of: moved.doc))
        }
        if i / size < blocks { remakeBlock(term, i / size) }
    }

    /// Makes one block's bound and box again from its postings.
    private mutating func remakeBlock(_ term: Int, _ block: Int) {
        let size = InvertedIndex.blockSize
        var bound = BlockBound()
        var box = BlockBox()
        let list = postings[term]
        for posting in list[(block * size)..<min(list.count, (block + 1) * size)] {
            bound.include(posting)
            box.include(position(of: posting.doc))
        }
        bounds[term][block] = bound
        boxes[term][block] = box
    }

    /// Recomputes the bounds of every block from `block` on (a list that grows past one block, a renumbering).
    private mutating func rebuildBounds(_ term: Int32, from block: Int) {
        let t = Int(term)
        let list = postings[t]
        guard list.count > InvertedIndex.blockSize else {
            if !bounds[t].isEmpty {
                bounds[t] = []
                boxes[t] = []
            }
            return
        }
        let blocks = (list.count + InvertedIndex.blockSize - 1) / InvertedIndex.blockSize
        let start = bounds[t].isEmpty ? 0 : min(block, bounds[t].count)
        bounds[t].removeSubrange(start...)
        boxes[t].removeSubrange(start...)
        for b in start..<blocks {
            var bound = BlockBound()
            var box = BlockBox()
            for posting in list[(b * InvertedIndex.blockSize)..<min(list.count, (b + 1) * InvertedIndex.blockSize)] {
                bound.include(posting)
                box.include(positions[Int(posting.doc)])
            }
            bounds[t].append(bound)
            boxes[t].append(box)
        }
    }

    /// Numbers documents anew: document `d` below `numbers.count` becomes `numbers[d]` (a permutation of
    /// `0..<numbers.count`); later documents keep their numbers. Every list is re-sorted and its bounds and boxes
    /// rebuilt. Bulk loads number records as they come, then in space-filling-curve order through this.
    public mutating func renumber(_ numbers: [UInt32]) {
        func renumbered(_ doc: UInt32) -> UInt32 { Int(doc) < numbers.count ? numbers[Int(doc)] : doc }
        var moved = positions
        for (old, new) in numbers.enumerated() { moved[Int(new)] = positions[old] }
        positions = moved
        rebuildRangeBoxes()
        for t in postings.indices where !postings[t].isEmpty {
            var list = postings[t].map { Posting(doc: renumbered($0.doc), frequency: $0.frequency, fields: $0.fields, norm: $0.norm) }
            list.sort { $0.doc < $1.doc }
            postings[t] = FlatArray(list)
            bounds[t] = []
            boxes[t] = []
            rebuildBounds(Int32(t), from: 0)
        }
        for (term, list) in wholeNames { wholeNames[term] = list.map(renumbered).sorted() }
    }

    // MARK: Reading

    public func postings(of term: Int32) -> FlatArray<Posting> { postings[Int(term)] }

    /// Per-block bounds of a posting list; empty for lists of at most `blockSize` postings.
    public func blockBounds(of term: Int32) -> FlatArray<BlockBound> { bounds[Int(term)] }

    /// Per-block boxes of a posting list, as `blockBounds(of:)`.
    public func blockBoxes(of term: Int32) -> FlatArray<BlockBox> { boxes[Int(term)] }

    /// The position a document was added at (`Position.unknown` for none, or a number never added).
    @inlinable
    public func position(of doc: UInt32) -> Position { Int(doc) < positions.count ? positions[Int(doc)] : .unknown }

    /// A box that holds the positions of every document numbered from `first` through `last` (and maybe more): the
    /// union of their ranges' boxes, a wide range's box where a whole one lies between them.
    public func box(from first: UInt32, through last: UInt32) -> BlockBox {
        var box = BlockBox()
        let perWide = InvertedIndex.wideRangeSize / InvertedIndex.rangeSize
        var range = Int(first) / InvertedIndex.rangeSize
        let end = min(Int(last) / InvertedIndex.rangeSize, rangeBoxes.count - 1)
        while range <= end {
            if range % perWide == 0 && range + perWide - 1 <= end {
                box.include(wideRangeBoxes[range / perWide])
                range += perWide
            } else {
                box.include(rangeBoxes[range])
                range += 1
            }
        }
        // Numbers past every position's (none is indexed there): no box to bound them by.
        return box.south <= box.north ? box : .world
    }

    mutating func includeInRangeBoxes(_ document: UInt32, _ position: Position) {
        let range = Int(document) / InvertedIndex.rangeSize
        let wide = Int(document) / InvertedIndex.wideRangeSize
        while rangeBoxes.count <= range { rangeBoxes.append(BlockBox()) }
        while wideRangeBoxes.count <= wide { wideRangeBoxes.append(BlockBox()) }
        rangeBoxes[range].include(position)
        wideRangeBoxes[wide].include(position)
    }

    mutating func rebuildRangeBoxes() {
        rangeBoxes = FlatArray()
        wideRangeBoxes = FlatArray()
        // A number without a position (never added, or added without one) makes its ranges the world.
        for (document, position) in positions.enumerated() { includeInRangeBoxes(UInt32(document), position) }
    }

    /// The documents' positions by number, for a caller about to read many (to fetch their cache lines together).
    @inlinable
    public func withPositions<R>(_ body: (UnsafeBufferPointer<Position>) -> R) -> R { positions.withUnsafeBufferPointer(body) }

    /// The documents whose whole name is this one term, sorted.
    public func wholeNameDocuments(of term: Int32) -> [UInt32] { wholeNames[term] ?? [] }

    public func term(_ text: String) -> Int32? { termIDs[text] }

    public func documentFrequency(_ term: Int32) -> Int { postings[Int(term)].count }

    /// The posting of a document in a term's list (binary search), if it has the term.
    public func posting(term: Int32, document: UInt32) -> Posting? {
        let list = postings[Int(term)]
        let i = InvertedIndex.lowerBound(list, document)
        return i < list.count && list[i].doc == document ? list[i] : nil
    }

    /// Whether the document has the term (binary search in the posting list).
    public func contains(term: Int32, document: UInt32) -> Bool { posting(term: term, document: document) != nil }

    /// Ways a query word matches: the word itself; when it is the last word of the query, terms it begins (the
    /// `maxCompletions` most frequent); and when the word is absent from the index and has no completion, the terms
    /// within its typo budget (`EditDistance.allowedTypos`), found by `TypoAutomaton` over the sorted dictionary.
    /// `typos: false` leaves the typo neighbours out (the costly part: an automaton over the whole dictionary).
    public func expansions(of word: String, isLast: Bool, typos: Bool = true) -> [Expansion] {
        var result: [Expansion] = []
        if let exact = termIDs[word], !postings[Int(exact)].isEmpty { result.append(Expansion(term: exact, kind: .exact)) }
        if isLast && !TextNormalizer.containsCJK(word) {
            result += completions(of: word).map { Expansion(term: $0, kind: .prefix) }
        }
        if result.isEmpty && typos {
            result = typoNeighbours(of: word).map { Expansion(term: $0.term, kind: .typo, typos: UInt8($0.edits)) }
        }
        return result
    }

    /// Terms that begin with `prefix` and are longer, the `maxCompletions` most frequent (ties by term number).
    public func completions(of prefix: String) -> [Int32] {
        var candidates: [Int32] = []
        let scalars = Array(prefix.unicodeScalars.map(\.value))
        scalars.withUnsafeBufferPointer { q in
            var low = 0
            var high = sortedKeys.count
            while low < high {
                let mid = (low + high) / 2
                if ScalarKeys.compare(sortedKeys.key(mid), q) < 0 { low = mid + 1 } else { high = mid }
            }
            var i = low
            while i < sortedKeys.count {
                let key = sortedKeys.key(i)
                guard key.count >= q.count, key[0..<q.count].elementsEqual(q) else { break }
                if key.count > q.count { candidates.append(sortedTerms[i]) }
                i += 1
            }
        }
        candidates += unsortedTerms.filter { terms[Int($0)].hasPrefix(prefix) && terms[Int($0)] != prefix }
        candidates.removeAll { postings[Int($0)].isEmpty }
        guard candidates.count > InvertedIndex.maxCompletions else { return candidates }
        // One pass keeping the most frequent (a sort of a long range would cost more than the rest of the query).
        var best: [Int32] = []
        best.reserveCapacity(InvertedIndex.maxCompletions + 1)
        func before(_ a: Int32, _ b: Int32) -> Bool {
            let ca = postings[Int(a)].count
            let cb = postings[Int(b)].count
            return ca != cb ? ca > cb : a < b
        }
        for term in candidates {
            if best.count == InvertedIndex.maxCompletions, let last = best.last, !before(term, last) { continue }
            var i = best.count
            best.append(term)
            while i > 0 && before(term, best[i - 1]) {
                best[i] = best[i - 1]
                i -= 1
            }
            best[i] = term
            if best.count > InvertedIndex.maxCompletions { best.removeLast() }
        }
        return best
    }

    /// Terms with postings within the word's typo budget, other than the word itself, with their edit distance.
    public func typoNeighbours(of word: String) -> [(term: Int32, edits: Int)] {
        let query = Array(word.unicodeScalars.map(\.value))
        let budget = EditDistance.allowedTypos(length: query.count)
        guard budget > 0 else { return [] }
        var result: [(term: Int32, edits: Int)] = []
        query.withUnsafeBufferPointer { q in
            for (index, edits) in TypoAutomaton.matches(of: q, maxEdits: budget, count: sortedKeys.count, key: sortedKeys.key) where edits > 0 {
                result.append((sortedTerms[index], edits))
            }
        }
        let scalars = Array(word.unicodeScalars)
        for term in unsortedTerms {
            if let edits = EditDistance.within(scalars, Array(terms[Int(term)].unicodeScalars), limit: budget), edits > 0 {
                result.append((term, edits))
            }
        }
        // (Not the pinyin of names: a word typed is no typo of "\u{2}kendeji".)
        return result.filter { !postings[Int($0.term)].isEmpty && !InvertedIndex.isMarkedTerm(terms[Int($0.term)]) }
    }

    /// Whether a term is one of a name's pinyin terms (`PinyinDictionary.runTerms`): they begin with a control
    /// character no typed word has.
    @inlinable
    public static func isMarkedTerm(_ term: String) -> Bool { (term.utf8.first ?? 0x20) < 0x20 }

    /// Inverse document frequency, the BM25 "+1" variant that stays positive for very common terms.
    public func idf(documentFrequency df: Int) -> Double {
        let n = Double(max(documentCount, 1))
        return log(1 + (n - Double(df) + 0.5) / (Double(df) + 0.5))
    }

    @inlinable public var averageLength: Double { Double(totalLength) / Double(max(documentCount, 1)) }

    /// The BM25 contribution of one posting.
    @inlinable
    public func score(_ posting: Posting, idf: Double) -> Double {
        InvertedIndex.bm25(frequency: posting.frequency, length: posting.length, averageLength: averageLength, idf: idf)
    }

    /// A document length in one byte: exact below 64, above that rounded down to four significant bits (a length of
    /// 64 ≤ L < 65 536 is (8 + m) · 2^(e − 3) with 2^e ≤ L, m in 0..<8). Monotonic, so bounds on norms bound lengths.
    @inlinable
    public static func norm(length: Int) -> UInt8 {
        let length = max(0, min(length, Int(UInt16.max)))
        guard length >= 64 else { return UInt8(length) }
        let exponent = Int.bitWidth - 1 - length.leadingZeroBitCount
        let mantissa = (length >> (exponent - 3)) & 7
        return UInt8(64 + (exponent - 6) * 8 + mantissa)
    }

    /// The length a norm stands for (the smallest length with that norm).
    @inlinable
    public static func length(norm: UInt8) -> UInt16 {
        guard norm >= 64 else { return UInt16(norm) }
        let k = Int(norm) - 64
        return UInt16((8 + k & 7) << (k >> 3 + 3))
    }

    /// BM25's term weight: idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · length / average length)). It grows with
    /// tf and shrinks with length, so (largest tf, smallest length) of a block bounds every posting in it.
    @inlinable
    public static func bm25(frequency: UInt16, length: UInt16, averageLength: Double, idf: Double) -> Double {
        let tf = Double(frequency)
        return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * Double(length) / max(averageLength, 1)))
    }

    /// BM25 at one average length, with its length term tabled by norm: a posting's score is one division where
    /// `score(_:idf:)` makes three (the average, the length's share of it, the weight), and the same value to the bit
    /// — each entry is `bm25`'s own arithmetic on the norm's length. Ranking scores thousands of postings a query.
    public struct Scorer: Sendable {
        public let averageLength: Double
        /// k1 · (1 − b + b · length / average length), per norm (up to the norm of the longest length).
        @usableFromInline let lengthTerms: [Double]

        public init(averageLength: Double) {
            self.averageLength = averageLength
            lengthTerms = (0...Int(InvertedIndex.norm(length: Int(UInt16.max)))).map { norm in
                k1 * (1 - b + b * Double(InvertedIndex.length(norm: UInt8(norm))) / max(averageLength, 1))
            }
        }

        /// `InvertedIndex.score(_:idf:)`.
        @inlinable @inline(__always)
        public func score(_ posting: Posting, idf: Double) -> Double {
            bm25(frequency: posting.frequency, norm: posting.norm, idf: idf)
        }

        /// `InvertedIndex.bm25` at the length of `norm`.
        @inlinable @inline(__always)
        public func bm25(frequency: UInt16, norm: UInt8, idf: Double) -> Double {
            let tf = Double(frequency)
            return idf * tf * (k1 + 1) / (tf + lengthTerms[Int(norm)])
        }

        /// `InvertedIndex.bm25` at `length`, to the bit: from the table when the length is a norm's own — every length
        /// of a posting or a block bound is, and so is the larger of two — else by the formula.
        @inlinable @inline(__always)
        public func bm25(frequency: UInt16, length: UInt16, idf: Double) -> Double {
            let norm = InvertedIndex.norm(length: Int(length))
            guard InvertedIndex.length(norm: norm) == length else {
                return InvertedIndex.bm25(frequency: frequency, length: length, averageLength: averageLength, idf: idf)
            }
            return bm25(frequency: frequency, norm: norm, idf: idf)
        }
    }

    /// The first index whose document is at least `doc` (binary search).
    @inlinable
    public static func lowerBound<C: RandomAccessCollection<Posting>>(_ postings: C, _ doc: UInt32) -> Int where C.Index == Int {
        var low = 0
        var high = postings.count
        while low < high {
            let mid = (low + high) / 2
            if postings[mid].doc < doc { low = mid + 1 } else { high = mid }
        }
        return low
    }

    static func lowerBound(_ docs: [UInt32], _ doc: UInt32) -> Int {
        var low = 0
        var high = docs.count
        while low < high {
            let mid = (low + high) / 2
            if docs[mid] < doc { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Checks that every posting list is sorted and duplicate-free and that block bounds cover their blocks.
    public func checkInvariants() throws(InvertedIndexViolation) {
        let ranges = (positions.count + InvertedIndex.rangeSize - 1) / InvertedIndex.rangeSize
        let wideRanges = (positions.count + InvertedIndex.wideRangeSize - 1) / InvertedIndex.wideRangeSize
        guard rangeBoxes.count == ranges, wideRangeBoxes.count == wideRanges else {
            throw .init(
                "\(rangeBoxes.count) range boxes and \(wideRangeBoxes.count) wide ones for \(positions.count) positions, expected \(ranges) and \(wideRanges)"
            )
        }
        for (doc, position) in positions.enumerated()
        where !rangeBoxes[doc / InvertedIndex.rangeSize].contains(position) || !wideRangeBoxes[doc / InvertedIndex.wideRangeSize].contains(position) {
            throw .init("document \(doc)'s position is outside its range's box")
        }
        let size = InvertedIndex.blockSize
        for (t, list) in postings.enumerated() {
            if let i = zip(list.indices, list.indices.dropFirst()).first(where: { list[$0.0].doc >= list[$0.1].doc })?.0 {
                throw .init(
                    "term \(t) (\(terms[t])): postings \(i) and \(i + 1) are for documents \(list[i].doc) and \(list[i + 1].doc), not increasing"
                )
            }
            let expected = list.count > size ? (list.count + size - 1) / size : 0
            guard bounds[t].count == expected, boxes[t].count == expected else {
                throw .init(
                    "term \(t) (\(terms[t])): \(bounds[t].count) block bounds and \(boxes[t].count) boxes for \(list.count) postings, expected \(expected)"
                )
            }
            for (b, box) in boxes[t].enumerated() {
                for posting in list[(b * size)..<min(list.count, (b + 1) * size)] where !box.contains(position(of: posting.doc)) {
                    throw .init("term \(t) (\(terms[t])): block \(b)'s box does not hold document \(posting.doc)'s position")
                }
            }
            for (b, bound) in bounds[t].enumerated() {
                for posting in list[(b * size)..<min(list.count, (b + 1) * size)] {
                    let length = posting.length
                    let (frequency, shortest) = posting.isInName ? (bound.nameFrequency, bound.nameLength) : (bound.otherFrequency, bound.otherLength)
                    guard frequency >= posting.frequency, shortest <= length else {
                        throw .init(
                            "term \(t) (\(terms[t])): block \(b) bounds frequency \(frequency) and length \(shortest), below document \(posting.doc)'s \(posting.frequency) and \(length)"
                        )
                    }
                }
            }
        }
        for (term, list) in wholeNames where zip(list, list.dropFirst()).contains(where: { $0 >= $1 }) {
            throw .init("term \(term): its whole-name documents are not increasing")
        }
    }
}

/// A broken invariant of the inverted index, named: the term, and what is wrong with its list.
public struct InvertedIndexViolation: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}

extension InvertedIndex.BlockBound {
    mutating func include(_ posting: InvertedIndex.Posting) {
        let length = posting.length
        if posting.isInName {
            nameFrequency = max(nameFrequency, posting.frequency)
            nameLength = min(nameLength, length)
        } else {
            otherFrequency = max(otherFrequency, posting.frequency)
            otherLength = min(otherLength, length)
        }
    }
}

/// Strings as Unicode scalar values in one flat buffer, in the order given (the caller sorts them).
struct ScalarKeys: Sendable {
    var storage = FlatArray<UInt32>()
    var offsets: FlatArray<Int32> = [0]

    init() {}

    init(_ strings: [String]) {
        var values: [UInt32] = []
        var offsets: [Int32] = [0]
        offsets.reserveCapacity(strings.count + 1)
        for string in strings {
            for scalar in string.unicodeScalars { values.append(scalar.value) }
            offsets.append(Int32(values.count))
        }
        storage = FlatArray(values)
        self.offsets = FlatArray(offsets)
    }

    var count: Int { offsets.count - 1 }

    /// Key `i`, valid while this value is alive and not mutated (keys are only ever replaced whole).
    func key(_ i: Int) -> UnsafeBufferPointer<UInt32> {
        let start = Int(offsets[i])
        let end = Int(offsets[i + 1])
        precondition(start >= 0 && start <= end && end <= storage.count, "scalar key out of its buffer")
        return UnsafeBufferPointer(start: storage.baseAddress.map { $0 + start }, count: end - start)
    }

    static func compare(_ a: UnsafeBufferPointer<UInt32>, _ b: UnsafeBufferPointer<UInt32>) -> Int {
        let n = min(a.count, b.count)
        for i in 0..<n where a[i] != b[i] { return a[i] < b[i] ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }
}
