/// The Han terms of a text index — its CJK characters and neighbour pairs (`Tokenizer`) — by how they read, so that a
/// query typed in pinyin finds the terms it stands for and is then ranked over their postings like any query
/// (docs/ARCHITECTURE.md, "Type-ahead and pinyin").
///
/// Rows are sorted by reading (first syllable << 16 | second; a single character's second is `single`), so the terms a
/// pair of typed pieces may be are a few ranges: one per syllable the first piece may be. A row carries its term's
/// characters, so a Han character typed in the query and the chaining of neighbouring pairs are checked without
/// reading the dictionary's strings. A pair read in a way the phrase table does not give it (朝阳 as zhao-yang is
/// given; 银行 as yin-xing is not) is marked `other` and ranks as a typo.
///
/// Kept up to date by `update(from:dictionary:)`: the terms added to the index since are appended to an unsorted
/// tail, merged in once it grows past `tailLimit`.
public struct PinyinTerms: Sendable {
    struct Row: Sendable, BitwiseCopyable {
        var key: UInt32
        var term: Int32
        var first: UInt32
        var second: UInt32
        var other: Bool
    }

    static let single: UInt32 = 0xFFFF
    static let tailLimit = 2_048

    private var rows: [Row] = []
    private var tail: [Row] = []
    /// The index (`InvertedIndex.identity`) and how many of its terms have been read.
    public private(set) var identity: UInt64?
    public private(set) var covered = 0

    public init() {}

    /// Rows in memory (for the memory figures: 20 bytes each).
    public var count: Int { rows.count + tail.count }

    /// Reads the index's terms added since the last update (all of them for another index).
    public mutating func update(from index: borrowing InvertedIndex, dictionary: PinyinDictionary) {
        // Terms are only ever appended to an index: with the same identity, the rows made stay true (a state older
        // than the rows, with fewer terms, is answered by them too; its caller drops the terms it lacks).
        if identity != index.identity {
            self = PinyinTerms()
            identity = index.identity
        }
        guard covered < index.terms.count else { return }
        let terms = index.terms
        var added: [Row] = []
        for t in covered..<terms.count { PinyinTerms.rows(of: terms[t], term: Int32(t), dictionary: dictionary, into: &added) }
        covered = terms.count
        if rows.isEmpty || tail.count + added.count > PinyinTerms.tailLimit {
            rows += tail + added
            tail = []
            rows.sort { ($0.key, $0.term) < ($1.key, $1.term) }
        } else {
            tail += added
        }
    }

    static func rows(of text: String, term: Int32, dictionary: PinyinDictionary, into rows: inout [Row]) {
        var scalars = text.unicodeScalars.makeIterator()
        guard let a = scalars.next(), TextNormalizer.isCJK(a) else { return }
        guard let b = scalars.next() else {
            for s in dictionary.readings(of: a.value) {
                rows.append(Row(key: UInt32(s) << 16 | single, term: term, first: a.value, second: 0, other: false))
            }
            return
        }
        guard scalars.next() == nil, TextNormalizer.isCJK(b) else { return }
        let (settled, others) = dictionary.pairReadings(a.value, b.value)
        for key in settled { rows.append(Row(key: key, term: term, first: a.value, second: b.value, other: false)) }
        for key in others { rows.append(Row(key: key, term: term, first: a.value, second: b.value, other: true)) }
    }

    /// A term a query's pieces may stand for, with its characters and how good the match is.
    public struct Match: Sendable, Hashable {
        public var term: Int32
        public var first: UInt32
        /// 0 for a single character.
        public var second: UInt32
        /// 1 when read in a way the phrase table does not give the pair.
        public var typos: UInt8
        /// Whether a piece matched a syllable it was not typed as in full (an initial, a syllable cut short).
        public var completed: Bool
    }

    /// The single characters `unit` may be.
    public func matches(_ unit: PinyinQuery.Unit, dictionary: PinyinDictionary) -> [Match] {
        var found: [Int32: Match] = [:]
        for s in candidates(of: unit, dictionary: dictionary) {
            let key = UInt32(s) << 16 | PinyinTerms.single
            visit(from: key, through: key) { row in
                guard unit.han == nil || row.first == unit.han else { return }
                let match = Match(term: row.term, first: row.first, second: 0, typos: 0, completed: unit.han == nil && !unit.exact.contains(s))
                keepBetter(match, in: &found)
            }
        }
        return Array(found.values)
    }

    /// The neighbour pairs `first` then `second` may be.
    public func matches(_ first: PinyinQuery.Unit, _ second: PinyinQuery.Unit, dictionary: PinyinDictionary) -> [Match] {
        var found: [Int32: Match] = [:]
        let seconds = candidateRanges(of: second, dictionary: dictionary)
        for s in candidates(of: first, dictionary: dictionary) {
            for range in seconds {
                visit(from: UInt32(s) << 16 | UInt32(range.lowerBound), through: UInt32(s) << 16 | UInt32(range.upperBound)) { row in
                    guard first.han == nil || row.first == first.han, second.han == nil || row.second == second.han else { return }
                    let t = UInt16(row.key & 0xFFFF)
                    let completed = (first.han == nil && !first.exact.contains(s)) || (second.han == nil && !second.exact.contains(t))
                    let match = Match(term: row.term, first: row.first, second: row.second, typos: row.other ? 1 : 0, completed: completed)
                    keepBetter(match, in: &found)
                }
            }
        }
        return Array(found.values)
    }

    private func candidates(of unit: PinyinQuery.Unit, dictionary: PinyinDictionary) -> [UInt16] {
        if let han = unit.han { return Array(Set(dictionary.readings(of: han))) }
        return Array(Set(unit.syllables.flatMap { Array($0) }))
    }

    private func candidateRanges(of unit: PinyinQuery.Unit, dictionary: PinyinDictionary) -> [ClosedRange<UInt16>] {
        if let han = unit.han { return Set(dictionary.readings(of: han)).map { $0...$0 } }
        return unit.syllables
    }

    private func keepBetter(_ match: Match, in found: inout [Int32: Match]) {
        if let known = found[match.term], (known.typos, known.completed ? 1 : 0) <= (match.typos, match.completed ? 1 : 0) { return }
        found[match.term] = match
    }

    /// Calls `body` with every row whose key is in `low...high`: a binary search in the sorted rows, then the tail.
    private func visit(from low: UInt32, through high: UInt32, _ body: (Row) -> Void) {
        rows.withUnsafeBufferPointer { rows in
            var lo = 0
            var hi = rows.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if rows[mid].key < low { lo = mid + 1 } else { hi = mid }
            }
            while lo < rows.count && rows[lo].key <= high {
                body(rows[lo])
                lo += 1
            }
        }
        for row in tail where row.key >= low && row.key <= high { body(row) }
    }
}
