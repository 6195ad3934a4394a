import Foundation
import GeoCore
import TestSupport
import Testing
import TextIndex

@testable import Gazetteer

/// The gazetteer's typo lookup against brute force over every key of the bundled name index: the letter-mask filter
/// may only skip keys that are too far, for Latin, Cyrillic and Chinese queries alike. (The first-or-last-byte rule is
/// a deliberate heuristic of the lookup, so the oracle applies it too.)
@Suite struct NameIndexTypoTests {
    /// Optimal-string-alignment distance (Levenshtein plus adjacent transposition), the textbook table.
    static func distance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[a.count][b.count]
    }

    @Test func typoCandidatesEqualBruteForce() {
        let names = BundledGazetteer.shared.names
        var random = SplitMix64(seed: 2026)
        var queries = ["helsnki", "barcelna", "amsterdm", "toronot", "мосвка", "санкт петербур", "北京", "上海市", "hlesinki", "zurch"]
        // Keys of the index with one random byte edit (any script; the result need not be valid UTF-8 to be looked up).
        for _ in 0..<8 {
            var key = Array(names.key(Int32(random.next() % UInt64(names.count))))
            let i = Int(random.next() % UInt64(key.count))
            switch random.next() % 3 {
            case 0: key.remove(at: i)
            case 1: key.insert(key[i], at: i)
            default: key[i] = key[i] &+ 1
            }
            queries.append(String(decoding: key, as: UTF8.self))
        }
        // Every key copied out once, not once a query.
        let keys = (0..<Int32(names.count)).map { Array(names.key($0)) }
        for query in queries {
            let q = Array(query.utf8)
            let maxEdits = EditDistance.allowedTypos(length: query.unicodeScalars.count)
            guard maxEdits > 0, !q.isEmpty else { continue }
            var expected = Set<Int32>()
            for (k, key) in zip(Int32(0)..., keys) {
                guard abs(key.count - q.count) <= maxEdits, !key.isEmpty, key[0] == q[0] || key[key.count - 1] == q[q.count - 1] else { continue }
                let d = NameIndexTypoTests.distance(q, key)
                if d > 0 && d <= maxEdits { expected.insert(k) }
            }
            let found = names.typos(query, maxEdits: maxEdits)
            #expect(Set(found.map(\.key)) == expected, "\(query): \(found.count) found, \(expected.count) by brute force")
            for (k, edits) in found { #expect(edits == NameIndexTypoTests.distance(q, Array(names.key(k))), "\(query) → \(names.keyString(k))") }
        }
    }

    /// Exact and prefix lookups (a binary search of the sorted keys narrowed by the fence of 8-byte heads) against a
    /// scan of every key, on an index of drawn keys from a small alphabet — so that many share heads of 8 bytes and
    /// more, and fence entries repeat — with Chinese among them. Queries: keys, their prefixes of every length, and
    /// keys with a byte changed. Replay by the seed.
    @Test func exactAndPrefixLookupsEqualAScan() {
        let seed: UInt64 = 56
        print("exactAndPrefixLookupsEqualAScan seed \(seed)")
        var random = SplitMix64(seed: seed)
        let alphabet = ["a", "b", "n", " ", "北", "京"]
        var keys: [[UInt8]] = []
        var index = NameIndex()
        for k in 0..<6_000 {
            // Many keys begin alike: a shared stem of up to 12 letters, then a drawn tail.
            let stem = Int(random.next() % 13)
            var text = String(repeating: "ab", count: 6).prefix(stem)
            for _ in 0..<(1 + Int(random.next() % 8)) { text += alphabet[Int(random.next() % UInt64(alphabet.count))] }
            let key = String(text).trimmingCharacters(in: .whitespaces)
            guard !key.isEmpty else { continue }
            index.add(key, target: Int32(k), kind: .primary)
            keys.append(Array(key.utf8))
        }
        index.finish { _ in 0 }
        var queries: [[UInt8]] = [Array("a".utf8), Array("zz".utf8), Array("abababababab".utf8), Array("北京".utf8)]
        for _ in 0..<300 {
            let key = keys[Int(random.next() % UInt64(keys.count))]
            queries.append(Array(key.prefix(1 + Int(random.next() % UInt64(key.count)))))
            queries.append(key)
            var changed = key
            changed[Int(random.next() % UInt64(key.count))] &+= 1
            queries.append(changed)
        }
        for q in queries {
            let query = String(decoding: q, as: UTF8.self)
            guard Array(query.utf8) == q else { continue }  // a changed byte that is not UTF-8: not a query
            let exact = keys.indices.filter { keys[$0] == q }.map { Int32($0) }
            let begun = keys.filter { $0.starts(with: q) }.count
            #expect(index.exact(query).sorted() == exact, "exact \"\(query)\" (seed \(seed))")
            // 1- and 2-byte prefixes are answered from their table of the best; longer ones by the range.
            if q.count > 2 {
                #expect(index.prefixed(query, limit: keys.count, importance: { _ in 0 }).count == begun, "prefix \"\(query)\" (seed \(seed))")
            }
        }
    }
}
