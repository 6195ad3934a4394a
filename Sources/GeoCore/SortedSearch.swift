extension RandomAccessCollection where Element: Comparable {
    /// The first index whose element is not less than `value` (`endIndex` when there is none): where `value` is, or
    /// would be inserted, in a collection sorted ascending.
    /// - Complexity: O(log n).
    @inlinable
    public func lowerBound(of value: Element) -> Index {
        var low = startIndex
        var count = self.count
        while count > 0 {
            let half = count / 2
            let mid = index(low, offsetBy: half)
            if self[mid] < value {
                low = index(after: mid)
                count -= half + 1
            } else {
                count = half
            }
        }
        return low
    }
}
