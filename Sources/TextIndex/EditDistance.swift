/// Bounded edit distance for typo tolerance.
public enum EditDistance {
    /// The number of typos a word of this many characters may have: 0 below 5, 1 from 5, 2 from 9 (the
    /// thresholds Meilisearch and Typesense use).
    public static func allowedTypos(length: Int) -> Int { length >= 9 ? 2 : (length >= 5 ? 1 : 0) }

    /// Optimal-string-alignment distance (Levenshtein plus adjacent transposition, each costing one) between `a`
    /// and `b` if it is at most `limit`, else nil. Row-by-row dynamic programming that gives up as soon as a whole
    /// row exceeds the limit, so mismatches cost little. O(|a|·|b|) at worst.
    public static func within(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int) -> Int? {
        a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in within(a, b, limit: limit) } }
    }

    /// The same on any buffers of comparable elements (UTF-8 bytes of normalized keys in the gazetteer).
    public static func within<T: Equatable>(_ a: UnsafeBufferPointer<T>, _ b: UnsafeBufferPointer<T>, limit: Int) -> Int? {
        if abs(a.count - b.count) > limit { return nil }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) <= limit ? max(a.count, b.count) : nil }
        let width = b.count + 1
        var before = [Int](repeating: 0, count: width)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: width)
        for i in 1...a.count {
            current[0] = i
            var rowMin = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j - 1] + cost, previous[j] + 1, current[j - 1] + 1)
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    value = min(value, before[j - 2] + 1)
                }
                current[j] = value
                rowMin = min(rowMin, value)
            }
            if rowMin > limit { return nil }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count] <= limit ? previous[b.count] : nil
    }
}
