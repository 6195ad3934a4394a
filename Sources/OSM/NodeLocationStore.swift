/// Node locations for assembling ways: 16 bytes per node (an Int64 id and two Int32 coordinates in 1e-7°, OSM's own
/// precision), in flat arrays sorted by id and found by binary search.
///
/// PBF files written by osmium, osmconvert and Osmosis are sorted by type then id, so appending keeps the arrays
/// sorted; an unsorted file is detected and sorted once, on the first lookup. 5 M nodes take 80 MB.
public struct NodeLocationStore: Sendable {
    private var ids: [Int64] = []
    /// Interleaved latitude, longitude in units of 1e-7°.
    private var coordinates: [Int32] = []
    private var sorted = true

    public init() {}

    public var count: Int { ids.count }
    /// The ids, ascending once `finish()` has run, and their coordinates (`fixed` latitude and longitude, interleaved).
    public var allIDs: [Int64] { ids }
    public var allCoordinates: [Int32] { coordinates }
    public var bytesPerNode: Int { MemoryLayout<Int64>.stride + 2 * MemoryLayout<Int32>.stride }

    public mutating func reserve(_ n: Int) {
        ids.reserveCapacity(n)
        coordinates.reserveCapacity(2 * n)
    }

    public mutating func append(id: Int64, latitude: Double, longitude: Double) {
        if let last = ids.last, id <= last { sorted = false }
        ids.append(id)
        coordinates.append(Self.fixed(latitude))
        coordinates.append(Self.fixed(longitude))
    }

    /// Appends nodes gathered elsewhere (a block's, on another thread): `coordinates` holds each node's `fixed`
    /// latitude and longitude, interleaved.
    public mutating func append(ids newIDs: [Int64], coordinates newCoordinates: [Int32]) {
        precondition(newCoordinates.count == 2 * newIDs.count, "two coordinates a node")
        guard let first = newIDs.first else { return }
        if sorted {
            if let last = ids.last, first <= last { sorted = false }
            for i in newIDs.indices.dropFirst() where newIDs[i] <= newIDs[i - 1] {
                sorted = false
                break
            }
        }
        ids.append(contentsOf: newIDs)
        coordinates.append(contentsOf: newCoordinates)
    }

    /// Degrees in the store's units of 1e-7° (OSM's own precision).
    @inline(__always) public static func fixed(_ degrees: Double) -> Int32 { Int32((degrees * 1e7).rounded()) }

    /// Sorts the store by id when appends came out of order (the last of equal ids wins).
    public mutating func finish() {
        guard !sorted else { return }
        let order = ids.indices.sorted { ids[$0] < ids[$1] || (ids[$0] == ids[$1] && $0 < $1) }
        var newIDs: [Int64] = []
        var newCoordinates: [Int32] = []
        newIDs.reserveCapacity(ids.count)
        newCoordinates.reserveCapacity(coordinates.count)
        for i in order {
            if newIDs.last == ids[i] {
                newCoordinates[newCoordinates.count - 2] = coordinates[2 * i]
                newCoordinates[newCoordinates.count - 1] = coordinates[2 * i + 1]
                continue
            }
            newIDs.append(ids[i])
            newCoordinates.append(coordinates[2 * i])
            newCoordinates.append(coordinates[2 * i + 1])
        }
        ids = newIDs
        coordinates = newCoordinates
        sorted = true
    }

    /// The location of node `id`, or nil when the file has no such node. Call `finish()` after the last append.
    /// - Complexity: O(log n).
    public func location(of id: Int64) -> (latitude: Double, longitude: Double)? {
        var hint = -1
        return location(of: id, hint: &hint)
    }

    /// The same, looking first just after `hint` (the slot the previous lookup found, -1 at first) and leaving there
    /// the slot found: a way's nodes are mostly numbered one after another, so most lookups of a way cost one
    /// comparison instead of a binary search over every node (23 cache misses at 5 M).
    public func location(of id: Int64, hint: inout Int) -> (latitude: Double, longitude: Double)? {
        precondition(sorted, "NodeLocationStore.finish() must be called before lookups")
        var slot = hint + 1
        if !(slot >= 0 && slot < ids.count && ids[slot] == id) {
            slot = ids.lowerBound(of: id)
            guard slot < ids.count, ids[slot] == id else { return nil }
        }
        hint = slot
        return (Double(coordinates[2 * slot]) / 1e7, Double(coordinates[2 * slot + 1]) / 1e7)
    }
}

extension Array where Element == Int64 {
    /// The first index whose element is not less than `value` in this ascending array.
    fileprivate func lowerBound(of value: Int64) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) >> 1
            if self[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
