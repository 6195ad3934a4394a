/// An inverted index with BM25 scoring (Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
/// Beyond", 2009; k1 = 1.2, b = 0.75), incremental adds and removes, and a term dictionary for prefix and typo
/// expansion.
///
/// Documents are numbered by the caller. Fields carry weights (a name counts three times an address), folded into
/// the term frequency. Invariant: each posting list is sorted by document and holds a document at most once.
public struct InvertedIndex: Sendable {
    public struct Posting: Sendable, Equatable {
        public let doc: UInt32
        public let frequency: UInt16
    }

    /// One way a query word can match: a dictionary term and how much a match through it is worth.
    public struct Expansion: Sendable, Equatable {
        public let term: Int32
        public let weight: Double

        public init(term: Int32, weight: Double) {
            self.term = term
            self.weight = weight
        }
    }

    static let k1 = 1.2
    static let b = 0.75

    private var termIDs: [String: Int32] = [:]
    public private(set) var terms: [String] = []
    private var postings: [[Posting]] = []
    private var documentLength: [UInt16] = []
    private var totalLength = 0
    public private(set) var documentCount = 0
    /// Terms sorted, for prefix ranges; terms added since are in `unsortedTerms`.
    private var sortedTerms: [Int32] = []
    private var unsortedTerms: [Int32] = []

    public init() {}

    // MARK: Writing

    /// A document's distinct terms with their weighted frequencies, and its weighted length.
    public static func terms(of fields: [(text: String, weight: Int)]) -> (terms: [(String, Int)], length: Int) {
        // Documents have a handful of distinct terms: a linear scan beats building a dictionary per document.
        var frequencies: [(String, Int)] = []
        var length = 0
        for field in fields {
            for token in Tokenizer.tokens(field.text) {
                // Terms are NFC already (TextNormalizer), so equal text is equal bytes; String's == would check
                // normalization again for every non-ASCII pair.
                if let i = frequencies.firstIndex(where: { $0.0.utf8.count == token.text.utf8.count && $0.0.utf8.elementsEqual(token.text.utf8) }) {
                    frequencies[i].1 += field.weight
                } else {
                    frequencies.append((token.text, field.weight))
                }
                length += field.weight
            }
        }
        return (frequencies, length)
    }

    /// Adds a document's fields (text, weight). A document already present must be removed first.
    public mutating func add(document: UInt32, fields: [(text: String, weight: Int)]) {
        let (frequencies, length) = InvertedIndex.terms(of: fields)
        insert(document: document, frequencies, length: length)
    }

    /// Adds a document already analyzed by `terms(of:)` (bulk loads analyze on several threads, then add in order).
    public mutating func add(document: UInt32, analyzed: (terms: [(String, Int)], length: Int)) {
        insert(document: document, analyzed.terms, length: analyzed.length)
    }

    private mutating func insert(document: UInt32, _ frequencies: [(String, Int)], length: Int) {
        let doc = Int(document)
        if documentLength.count <= doc { documentLength.append(contentsOf: repeatElement(0, count: doc + 1 - documentLength.count)) }
        documentLength[doc] = UInt16(min(length, Int(UInt16.max)))
        totalLength += length
        documentCount += 1
        for (text, frequency) in frequencies {
            let term = termID(text)
            let posting = Posting(doc: document, frequency: UInt16(min(frequency, Int(UInt16.max))))
            if let last = postings[Int(term)].last, last.doc > document {
                let i = InvertedIndex.lowerBound(postings[Int(term)], document)
                postings[Int(term)].insert(posting, at: i)
            } else {
                postings[Int(term)].append(posting)
            }
        }
    }

    /// Removes a document, given the same fields it was added with.
    public mutating func remove(document: UInt32, fields: [(text: String, weight: Int)]) {
        var seen = Set<String>()
        for field in fields {
            for token in Tokenizer.tokens(field.text) where seen.insert(token.text).inserted {
                guard let term = termIDs[token.text] else { continue }
                let i = InvertedIndex.lowerBound(postings[Int(term)], document)
                if i < postings[Int(term)].count && postings[Int(term)][i].doc == document { postings[Int(term)].remove(at: i) }
            }
        }
        let doc = Int(document)
        if doc < documentLength.count {
            totalLength -= Int(documentLength[doc])
            documentLength[doc] = 0
        }
        documentCount -= 1
    }

    /// Sorts the term dictionary after a bulk load (later terms are kept aside until the next call).
    public mutating func finishBulkLoad() {
        sortedTerms = (0..<Int32(terms.count)).sorted { terms[Int($0)] < terms[Int($1)] }
        unsortedTerms = []
    }

    private mutating func termID(_ text: String) -> Int32 {
        if let id = termIDs[text] { return id }
        let id = Int32(terms.count)
        termIDs[text] = id
        terms.append(text)
        postings.append([])
        unsortedTerms.append(id)
        return id
    }

    // MARK: Reading

    public func postings(of term: Int32) -> [Posting] { postings[Int(term)] }

    public func term(_ text: String) -> Int32? { termIDs[text] }

    /// Whether the document has the term (binary search in the posting list).
    public func contains(term: Int32, document: UInt32) -> Bool {
        let list = postings[Int(term)]
        let i = InvertedIndex.lowerBound(list, document)
        return i < list.count && list[i].doc == document
    }

    /// Ways a query word matches: the word itself (1.0); when it is the last word of the query, terms it begins
    /// (0.8, the 64 most frequent); and when the word is absent from the index, terms within the typo budget (0.6
    /// for one edit, 0.45 for two).
    public func expansions(of word: String, isLast: Bool) -> [Expansion] {
        var result: [Expansion] = []
        if let exact = termIDs[word] { result.append(Expansion(term: exact, weight: 1.0)) }
        if isLast && !TextNormalizer.containsCJK(word) {
            var prefixed = prefixRange(word).filter { terms[Int($0)] != word }
            if prefixed.count > 64 {
                prefixed = Array(prefixed.sorted { postings[Int($0)].count > postings[Int($1)].count }.prefix(64))
            }
            result += prefixed.map { Expansion(term: $0, weight: 0.8) }
        }
        if result.isEmpty {
            let scalars = Array(word.unicodeScalars)
            let budget = EditDistance.allowedTypos(length: scalars.count)
            if budget > 0 {
                for (id, text) in terms.enumerated() where abs(text.unicodeScalars.count - scalars.count) <= budget {
                    if let edits = EditDistance.within(scalars, Array(text.unicodeScalars), limit: budget), edits > 0, !postings[id].isEmpty {
                        result.append(Expansion(term: Int32(id), weight: edits == 1 ? 0.6 : 0.45))
                    }
                }
            }
        }
        return result
    }

    private func prefixRange(_ prefix: String) -> [Int32] {
        var low = 0
        var high = sortedTerms.count
        while low < high {
            let mid = (low + high) / 2
            if terms[Int(sortedTerms[mid])] < prefix { low = mid + 1 } else { high = mid }
        }
        var result: [Int32] = []
        var i = low
        while i < sortedTerms.count && terms[Int(sortedTerms[i])].hasPrefix(prefix) {
            result.append(sortedTerms[i])
            i += 1
        }
        result += unsortedTerms.filter { terms[Int($0)].hasPrefix(prefix) }
        return result
    }

    /// Inverse document frequency, the BM25 "+1" variant that stays positive for very common terms.
    public func idf(documentFrequency df: Int) -> Double {
        let n = Double(max(documentCount, 1))
        return log(1 + (n - Double(df) + 0.5) / (Double(df) + 0.5))
    }

    /// The BM25 contribution of one posting.
    public func score(_ posting: Posting, idf: Double) -> Double {
        let tf = Double(posting.frequency)
        let averageLength = Double(totalLength) / Double(max(documentCount, 1))
        let length = Double(documentLength[Int(posting.doc)])
        return idf * tf * (InvertedIndex.k1 + 1) / (tf + InvertedIndex.k1 * (1 - InvertedIndex.b + InvertedIndex.b * length / max(averageLength, 1)))
    }

    static func lowerBound(_ postings: [Posting], _ doc: UInt32) -> Int {
        var low = 0
        var high = postings.count
        while low < high {
            let mid = (low + high) / 2
            if postings[mid].doc < doc { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Checks that every posting list is sorted and duplicate-free.
    public func checkInvariants() -> Bool {
        postings.allSatisfy { list in zip(list, list.dropFirst()).allSatisfy { $0.doc < $1.doc } }
    }
}

import Foundation
