import GeoCore
import SnapshotFile

/// One cell of a clustering answer.
public struct Cluster: Sendable, Equatable {
    public let geohash: Geohash
    public let count: Int
    /// Mean latitude and longitude of the records counted (a geohash cell never crosses the antimeridian, so the
    /// plain mean is the centroid on the map).
    public let latitude: Double, longitude: Double

    public init(geohash: Geohash, count: Int, latitude: Double, longitude: Double) {
        (self.geohash, self.count, self.latitude, self.longitude) = (geohash, count, latitude, longitude)
    }
}

/// Records sorted by their 64-bit geohash: the engine of map clustering.
///
/// The records of any geohash cell form one contiguous range of the sorted array, so a cell's count is a
/// difference of two positions and its centroid a difference of prefix sums: a cluster query costs per non-empty
/// cell, not per record. Prefix sums are kept every `blockSize` entries (one byte per record) and completed from
/// the entries themselves, whose geohash gives their position to within 2 cm.
///
/// Live writes go to a small delta — `added`, sorted, and `removed`, base entries no longer valid — that queries
/// merge in, and that is folded into a new base once it grows past `compactionThreshold` (amortised O(1) per write
/// for n up to millions). Invariant: every record appears exactly once among base-minus-removed and added, with
/// the geohash of its current position; all arrays are sorted by (hash, id).
public struct GeohashGrid: Sendable {
    static let blockSize = 16

    var baseHashes = FlatArray<UInt64>()
    var baseIDs = FlatArray<UInt32>()
    /// Sums of decoded latitudes/longitudes of entries [0, b·blockSize).
    var prefixLatitude: FlatArray<Double> = [0]
    var prefixLongitude: FlatArray<Double> = [0]

    /// Base entries that were removed or moved, by record: their base hash.
    var removed: [UInt32: UInt64] = [:]
    /// The same entries sorted by (hash, id), to find those inside a cell.
    var removedSorted: [Entry] = []
    /// Entries added since the base was built, sorted by (hash, id).
    var added: [Entry] = []

    var compactionThreshold: Int { max(4_096, baseHashes.count / 32) }

    struct Entry: Comparable, Sendable {
        var hash: UInt64
        var id: UInt32

        static func < (a: Entry, b: Entry) -> Bool { a.hash != b.hash ? a.hash < b.hash : a.id < b.id }
    }

    public init() {}

    /// Builds the grid from (record, full-precision geohash) pairs.
    init(entries: [Entry]) {
        self.init()
        rebuildBase(entries.sorted())
    }

    /// Number of records.
    public var count: Int { baseHashes.count - removed.count + added.count }

    mutating func insert(id: UInt32, hash: UInt64) {
        let entry = Entry(hash: hash, id: id)
        added.insert(entry, at: added.lowerBound(of: entry))
        compactIfNeeded()
    }

    /// Removes the record's entry at `hash` (the geohash of its current position).
    mutating func remove(id: UInt32, hash: UInt64) {
        let entry = Entry(hash: hash, id: id)
        let i = added.lowerBound(of: entry)
        if i < added.count && added[i] == entry {
            added.remove(at: i)
            return
        }
        precondition(removed[id] == nil, "GeohashGrid: record \(id) removed twice")
        removed[id] = hash
        removedSorted.insert(entry, at: removedSorted.lowerBound(of: entry))
        compactIfNeeded()
    }

    private mutating func compactIfNeeded() {
        guard added.count + removed.count > compactionThreshold else { return }
        var merged: [Entry] = []
        merged.reserveCapacity(count)
        var j = 0
        for i in baseHashes.indices {
            let entry = Entry(hash: baseHashes[i], id: baseIDs[i])
            if removed[entry.id] == entry.hash { continue }
            while j < added.count && added[j] < entry {
                merged.append(added[j])
                j += 1
            }
            merged.append(entry)
        }
        merged.append(contentsOf: added[j...])
        removed.removeAll()
        removedSorted.removeAll()
        added.removeAll()
        rebuildBase(merged)
    }

    private mutating func rebuildBase(_ sorted: [Entry]) {
        baseHashes = FlatArray(sorted.map(\.hash))
        baseIDs = FlatArray(sorted.map(\.id))
        let blocks = sorted.count / GeohashGrid.blockSize
        prefixLatitude = FlatArray(repeating: 0, count: blocks + 1)
        prefixLongitude = FlatArray(repeating: 0, count: blocks + 1)
        var lat = 0.0
        var lon = 0.0
        for (i, hash) in baseHashes.enumerated() {
            if i % GeohashGrid.blockSize == 0 {
                prefixLatitude[i / GeohashGrid.blockSize] = lat
                prefixLongitude[i / GeohashGrid.blockSize] = lon
            }
            let p = Geohash.approximatePosition(hash)
            lat += p.latitude
            lon += p.longitude
        }
        if sorted.count % GeohashGrid.blockSize == 0 {
            prefixLatitude[blocks] = lat
            prefixLongitude[blocks] = lon
        }
    }

    /// Sum of decoded positions of base entries [0, k).
    func prefixSum(_ k: Int) -> (latitude: Double, longitude: Double) {
        let b = GeohashGrid.blockSize
        var block = k / b
        if block >= prefixLatitude.count { block = prefixLatitude.count - 1 }
        var lat = prefixLatitude[block]
        var lon = prefixLongitude[block]
        for i in (block * b)..<k {
            let p = Geohash.approximatePosition(baseHashes[i])
            lat += p.latitude
            lon += p.longitude
        }
        return (lat, lon)
    }

    /// First index in `hashes[from..<to]` whose hash is > `value`.
    static func upperBound<C: RandomAccessCollection<UInt64>>(_ hashes: C, _ value: UInt64, from: Int, to: Int) -> Int where C.Index == Int {
        // Gallop first: cells are usually short compared with the range.
        var step = 1
        var low = from
        var high = from
        while high < to && hashes[high] <= value {
            low = high + 1
            high = from + step
            step *= 2
        }
        high = min(high, to)
        while low < high {
            let mid = (low + high) / 2
            if hashes[mid] <= value { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Approximate bytes held.
    public var memoryFootprint: Int {
        baseHashes.capacity * 8 + baseIDs.capacity * 4 + (prefixLatitude.capacity + prefixLongitude.capacity) * 8
            + (added.capacity + removedSorted.capacity) * MemoryLayout<Entry>.stride + removed.capacity * 24
    }
}
