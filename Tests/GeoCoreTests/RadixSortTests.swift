import GeoCore
import TestSupport
import Testing

/// The radix sort against the standard library's sort: the same order, and the same permutation as a stable sort.
@Suite struct RadixSortTests {
    /// Keys of several shapes: any bits, few distinct values (many ties), only high bits, only low bits, already sorted,
    /// descending.
    static func keySets(_ random: inout SplitMix64) -> [(String, [UInt64])] {
        var sets: [(String, [UInt64])] = [("empty", []), ("one", [42]), ("all equal", Array(repeating: 7, count: 1_000))]
        for n in [2, 3, 255, 256, 257, 10_000] {
            sets.append(("any bits, \(n)", (0..<n).map { _ in random.next() }))
            sets.append(("ties, \(n)", (0..<n).map { _ in random.next() % 5 }))
            sets.append(("high bits, \(n)", (0..<n).map { _ in random.next() & 0xFFFF_0000_0000_0000 }))
            sets.append(("low bits, \(n)", (0..<n).map { _ in random.next() & 0xFFF }))
            sets.append(("sorted, \(n)", (0..<n).map { _ in random.next() }.sorted()))
            sets.append(("descending, \(n)", (0..<n).map { _ in random.next() }.sorted(by: >)))
        }
        return sets
    }

    @Test func sortsAsTheStandardLibraryDoes() {
        var random = testRandom("sortsAsTheStandardLibraryDoes")
        for (name, keys) in Self.keySets(&random) {
            var sorted = keys
            RadixSort.sort(&sorted)
            #expect(sorted == keys.sorted(), "\(name)")
        }
    }

    @Test func orderIsAStableSortsPermutation() {
        var random = testRandom("orderIsAStableSortsPermutation")
        for (name, keys) in Self.keySets(&random) {
            let expected = keys.indices.sorted { (keys[$0], $0) < (keys[$1], $1) }.map { Int32($0) }
            #expect(RadixSort.order(of: keys) == expected, "\(name)")
            // Sorting in place gives the same permutation and leaves the keys sorted.
            var sorted = keys
            #expect(RadixSort.sortWithOrder(&sorted) == expected, "\(name), in place")
            #expect(sorted == keys.sorted(), "\(name), in place")
        }
    }
}
