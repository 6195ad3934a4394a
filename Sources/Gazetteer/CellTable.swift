import GeoCore
import SnapshotFile

/// Items filed under 64-bit cell keys as three flat arrays, so that a snapshot serves them from its mapping: the keys
/// that have items, ascending; where each key's items start; and the items, by key and, under one key, in the order
/// they were given. The grids of houses (`HouseGrid`) and of street segments (`SegmentGrid`) are each one.
struct CellTable<Item: BitwiseCopyable>: Sendable {
    let keys: FlatArray<Int64>
    /// `items[starts[i]..<starts[i + 1]]` are `keys[i]`'s items (one more entry than `keys`).
    let starts: FlatArray<UInt32>
    let items: FlatArray<Item>

    init(keys: FlatArray<Int64>, starts: FlatArray<UInt32>, items: FlatArray<Item>) {
        self.keys = keys
        self.starts = starts
        self.items = items
    }

    /// The entries filed by key; entries of one key keep their order (a stable radix sort of the keys: a comparison
    /// sort of 2.3 M houses' cells was most of building the house grid).
    init(_ entries: [(key: Int64, item: Item)]) {
        // The sign bit flipped, so that the unsigned order of the keys is their signed order.
        var sorted = entries.map { UInt64(bitPattern: $0.key) ^ (1 << 63) }
        let order = RadixSort.sortWithOrder(&sorted)
        var distinct = 0
        for (p, key) in sorted.enumerated() where p == 0 || sorted[p - 1] != key { distinct += 1 }
        var keys = FlatArray<Int64>()
        var starts = FlatArray<UInt32>()
        var items = FlatArray<Item>()
        keys.reserveCapacity(distinct)
        starts.reserveCapacity(distinct + 1)
        items.reserveCapacity(entries.count)
        for (p, i) in order.enumerated() {
            if p == 0 || sorted[p - 1] != sorted[p] {
                keys.append(Int64(bitPattern: sorted[p] ^ (1 << 63)))
                starts.append(UInt32(items.count))
            }
            items.append(entries[Int(i)].item)
        }
        starts.append(UInt32(items.count))
        self.init(keys: keys, starts: starts, items: items)
    }

    /// The positions in `items` of `key`'s items (empty: none).
    func items(of key: Int64) -> Range<Int> {
        let i = keys.lowerBound(of: key)
        guard i < keys.count, keys[i] == key else { return 0..<0 }
        return items(at: i)
    }

    /// The positions in `items` of the items of the `i`th key.
    func items(at i: Int) -> Range<Int> { Int(starts[i])..<Int(starts[i + 1]) }

    /// The positions in `keys` of the keys from `first` through `last`.
    func keys(from first: Int64, through last: Int64) -> Range<Int> {
        let start = keys.lowerBound(of: first)
        var end = start
        while end < keys.count && keys[end] <= last { end += 1 }
        return start..<end
    }

    /// Keys strictly ascending, starts from 0 to the item count without going back.
    var isConsistent: Bool {
        guard starts.count == keys.count + 1, starts.first == 0, Int(starts.last!) == items.count else { return false }
        for i in keys.indices.dropFirst() where keys[i - 1] >= keys[i] { return false }
        for i in starts.indices.dropFirst() where starts[i - 1] > starts[i] { return false }
        return true
    }

    func write(to file: SnapshotWriter) throws(SnapshotError) {
        try file.write(keys)
        try file.write(starts)
        try file.write(items)
    }

    init(snapshot file: SnapshotReader) throws(SnapshotError) {
        self.init(keys: try file.readFlat(), starts: try file.readFlat(), items: try file.readFlat())
        guard isConsistent else { throw .corrupt(path: file.path, reason: "cell keys out of order or starts out of range") }
    }
}
