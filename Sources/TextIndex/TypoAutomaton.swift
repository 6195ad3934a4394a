/// Typo candidates from a sorted key list without comparing the query with every key.
///
/// The sorted keys are walked as a trie (Schulz & Mihov's Levenshtein automaton, evaluated the way Hanov's
/// "Fast and Easy Levenshtein distance using a Trie" does it): one dynamic-programming row per character of the
/// current key, rows shared with the previous key up to their common prefix, and as soon as every cell of a row
/// exceeds the budget, no key with that prefix can be within it — the walk jumps past all of them with one binary
/// search. The distance is optimal string alignment (Levenshtein plus adjacent transposition), as `EditDistance`.
///
/// Invariant the caller keeps: `key(i)` for `i` in `0..<count` is sorted lexicographically by element.
/// - Complexity: proportional to the trie nodes within the budget of a query prefix (O(|alphabet|^e · |q|) for e
///   edits) plus a binary search per pruned subtree — independent of the number of keys far from the query.
public enum TypoAutomaton {
    /// Indices of keys within `maxEdits` of `query`, with their distance, in key order.
    public static func matches<E: Comparable>(
        of query: UnsafeBufferPointer<E>,
        maxEdits: Int,
        count: Int,
        key: (Int) -> UnsafeBufferPointer<E>
    ) -> [(index: Int, edits: Int)] {
        guard maxEdits >= 0, count > 0 else { return [] }
        let m = query.count
        let width = m + 1
        let maxDepth = m + maxEdits
        var rows = [Int](repeating: 0, count: (maxDepth + 2) * width)
        for j in 0...m { rows[j] = j }
        var found: [(index: Int, edits: Int)] = []
        var previous = UnsafeBufferPointer<E>(start: nil, count: 0)
        var validDepth = 0
        var i = 0
        while i < count {
            let k = key(i)
            var d = 0
            let common = min(validDepth, k.count, previous.count)
            while d < common && k[d] == previous[d] { d += 1 }
            var pruneAt = 0
            while d < k.count {
                if d + 1 > maxDepth {
                    // Longer than the query plus the budget: every key with this prefix is too long.
                    pruneAt = d + 1
                    break
                }
                let above = d * width
                let here = (d + 1) * width
                let c = k[d]
                rows[here] = d + 1
                var rowMin = d + 1
                for j in 1...m {
                    let cost = query[j - 1] == c ? 0 : 1
                    var value = Swift.min(rows[above + j - 1] + cost, rows[above + j] + 1, rows[here + j - 1] + 1)
                    if d >= 1 && j >= 2 && c == query[j - 2] && k[d - 1] == query[j - 1] {
                        value = Swift.min(value, rows[(d - 1) * width + j - 2] + 1)
                    }
                    rows[here + j] = value
                    if value < rowMin { rowMin = value }
                }
                d += 1
                if rowMin > maxEdits {
                    pruneAt = d
                    break
                }
            }
            previous = k
            validDepth = d
            if pruneAt > 0 {
                i = firstIndex(from: i + 1, count: count, notStartingWith: UnsafeBufferPointer(rebasing: k[0..<pruneAt]), key: key)
                continue
            }
            let distance = rows[d * width + m]
            if distance <= maxEdits { found.append((i, distance)) }
            i += 1
        }
        return found
    }

    /// The first index at or after `low` whose key does not start with `prefix` (the keys that do are contiguous
    /// there, because the list is sorted and key(low - 1) starts with it).
    static func firstIndex<E: Comparable>(
        from low: Int,
        count: Int,
        notStartingWith prefix: UnsafeBufferPointer<E>,
        key: (Int) -> UnsafeBufferPointer<E>
    ) -> Int {
        var low = low
        var high = count
        while low < high {
            let mid = (low + high) / 2
            let k = key(mid)
            if k.count >= prefix.count && k[0..<prefix.count].elementsEqual(prefix) { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
