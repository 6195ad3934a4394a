import GeoCore
import SnapshotFile

/// The spatial indexes of one record set kept in step: the R-tree for nearest, radius, box and polygon queries and
/// the geohash grid for clustering.
///
/// A value type: copies are independent snapshots (arrays are copy-on-write). Not safe for concurrent mutation on
/// its own; the search engine publishes whole states under its lock.
public struct SpatialIndex: Sendable {
    public internal(set) var tree: RTree
    public internal(set) var grid: GeohashGrid

    public init() {
        tree = RTree()
        grid = GeohashGrid()
    }

    /// Builds both indexes at once from points (later duplicates of an id replace earlier ones).
    public init(bulkLoading points: [IndexedPoint]) {
        tree = RTree(bulkLoading: points)
        var latest: [UInt32: IndexedPoint] = [:]
        var entries: [GeohashGrid.Entry] = []
        entries.reserveCapacity(points.count)
        if tree.count == points.count {
            for p in points { entries.append(.init(hash: Geohash.encode(latitude: p.latitude, longitude: p.longitude), id: p.id)) }
        } else {
            for p in points { latest[p.id] = p }
            for p in latest.values { entries.append(.init(hash: Geohash.encode(latitude: p.latitude, longitude: p.longitude), id: p.id)) }
        }
        grid = GeohashGrid(entries: entries)
    }

    public var count: Int { tree.count }

    /// Adds a record, or moves it when it is already indexed.
    public mutating func insert(_ point: IndexedPoint) {
        if let old = tree.position(of: point.id) {
            grid.remove(id: point.id, hash: Geohash.encode(latitude: old.latitude, longitude: old.longitude))
        }
        tree.insert(point)
        grid.insert(id: point.id, hash: Geohash.encode(latitude: point.latitude, longitude: point.longitude))
    }

    /// Removes a record; returns whether it was indexed.
    @discardableResult
    public mutating func remove(_ id: UInt32) -> Bool {
        guard let old = tree.position(of: id) else { return false }
        grid.remove(id: id, hash: Geohash.encode(latitude: old.latitude, longitude: old.longitude))
        tree.remove(id)
        return true
    }

    /// Map clusters: records inside the box grouped by geohash cell at `precision` (1–12).
    public func clusters(in box: BoundingBox, precision: Int) throws(GeoError) -> [Cluster] {
        try grid.clusters(in: box, precision: precision) { tree.position(of: $0) }
    }

    /// About the number of records inside `box`, from geohash cell counts at `precision` (1–12) weighted by the
    /// share of each cell in the box, without visiting records: cheap enough for a query planner.
    public func estimatedCount(in box: BoundingBox, precision: Int) throws(GeoError) -> Double {
        try grid.estimatedCount(in: box, precision: precision)
    }

    /// Approximate bytes held by both indexes.
    public var memoryFootprint: Int { tree.memoryFootprint + grid.memoryFootprint }

    /// Checks both structures and that they hold the same records at the same positions.
    public func checkInvariants() throws {
        try tree.checkInvariants()
        if grid.count != tree.count { throw InvariantViolation(description: "grid holds \(grid.count) records, tree \(tree.count)") }
        func check(_ hashes: FlatArray<UInt64>, _ ids: FlatArray<UInt32>, skipRemoved: Bool) throws {
            for k in hashes.indices {
                if k > 0 && GeohashGrid.Entry(hash: hashes[k], id: ids[k]) < GeohashGrid.Entry(hash: hashes[k - 1], id: ids[k - 1]) {
                    throw InvariantViolation(description: "grid not sorted at \(k)")
                }
                if skipRemoved && grid.removed[ids[k]] == hashes[k] { continue }
                guard let p = tree.position(of: ids[k]) else {
                    throw InvariantViolation(description: "grid holds record \(ids[k]) that the tree does not")
                }
                if Geohash.encode(latitude: p.latitude, longitude: p.longitude) != hashes[k] {
                    throw InvariantViolation(description: "grid hash of record \(ids[k]) is not that of its position")
                }
            }
        }
        try check(grid.baseHashes, grid.baseIDs, skipRemoved: true)
        try check(FlatArray(grid.added.map(\.hash)), FlatArray(grid.added.map(\.id)), skipRemoved: false)
        if grid.removedSorted.count != grid.removed.count || grid.removedSorted != grid.removedSorted.sorted() {
            throw InvariantViolation(description: "grid removed set out of step")
        }
        var blockCheck = 0.0
        for (i, hash) in grid.baseHashes.enumerated() {
            if i % GeohashGrid.blockSize == 0, abs(grid.prefixLatitude[i / GeohashGrid.blockSize] - blockCheck) > 1e-6 * Double(i + 1) {
                throw InvariantViolation(description: "grid prefix sum wrong at block \(i / GeohashGrid.blockSize)")
            }
            blockCheck += Geohash.approximatePosition(hash).latitude
        }
    }
}
