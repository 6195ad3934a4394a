/// Least-significant-digit radix sort of 64-bit keys: 8 passes of one byte, each skipped when every key has the same
/// byte there (keys that use only some of their bits cost only those bits' passes).
///
/// For the millions of keys an import sorts (an address index's hashed name variants, its houses by street and cell),
/// several times faster than the standard library's comparison sort, and stable, so that equal keys keep their order.
public enum RadixSort {
    /// Sorts `keys` in ascending order.
    public static func sort(_ keys: inout [UInt64]) {
        guard keys.count > 1 else { return }
        let counts = histograms(keys)
        var buffer = [UInt64](repeating: 0, count: keys.count)
        for pass in 0..<8 where !isConstant(counts, pass, keys.count) {
            var starts = offsets(counts, pass)
            let shift = UInt64(pass * 8)
            keys.withUnsafeBufferPointer { source in
                buffer.withUnsafeMutableBufferPointer { target in
                    for key in source {
                        let digit = Int(truncatingIfNeeded: (key >> shift) & 0xFF)
                        target[starts[digit]] = key
                        starts[digit] += 1
                    }
                }
            }
            swap(&keys, &buffer)
        }
    }

    /// The positions of `keys` in ascending key order, equal keys in their order in `keys` (a stable sort's
    /// permutation): `order[0]` is the position of the smallest key.
    public static func order(of keys: [UInt64]) -> [Int32] {
        var sortedKeys = keys
        return sortWithOrder(&sortedKeys)
    }

    /// Sorts `keys` in ascending order and answers their former positions in that order (a stable sort's
    /// permutation, as `order(of:)`): for a caller that needs both, without a copy of the keys.
    public static func sortWithOrder(_ sortedKeys: inout [UInt64]) -> [Int32] {
        let n = sortedKeys.count
        precondition(n <= Int(Int32.max), "at most Int32.max keys")
        var order = (0..<Int32(n)).map { $0 }
        guard n > 1 else { return order }
        let counts = histograms(sortedKeys)
        var keyBuffer = [UInt64](repeating: 0, count: n)
        var orderBuffer = [Int32](repeating: 0, count: n)
        for pass in 0..<8 where !isConstant(counts, pass, n) {
            var starts = offsets(counts, pass)
            let shift = UInt64(pass * 8)
            for i in sortedKeys.indices {
                let key = sortedKeys[i]
                let digit = Int(truncatingIfNeeded: (key >> shift) & 0xFF)
                keyBuffer[starts[digit]] = key
                orderBuffer[starts[digit]] = order[i]
                starts[digit] += 1
            }
            swap(&sortedKeys, &keyBuffer)
            swap(&order, &orderBuffer)
        }
        return order
    }

    /// How many keys have each byte value at each of the 8 positions, in one pass over the keys.
    private static func histograms(_ keys: [UInt64]) -> [Int] {
        var counts = [Int](repeating: 0, count: 8 * 256)
        counts.withUnsafeMutableBufferPointer { counts in
            for key in keys {
                var k = key
                for pass in 0..<8 {
                    counts[pass << 8 | Int(truncatingIfNeeded: k & 0xFF)] += 1
                    k >>= 8
                }
            }
        }
        return counts
    }

    private static func isConstant(_ counts: [Int], _ pass: Int, _ n: Int) -> Bool {
        counts[(pass << 8)..<((pass + 1) << 8)].contains(n)
    }

    /// Where each byte value's keys start in the output of a pass.
    private static func offsets(_ counts: [Int], _ pass: Int) -> [Int] {
        var starts = [Int](repeating: 0, count: 256)
        var total = 0
        for digit in 0..<256 {
            starts[digit] = total
            total += counts[pass << 8 | digit]
        }
        return starts
    }
}
