import GeoCore

/// One result of a nearest-first walk.
public struct Neighbor: Sendable, Equatable {
    public let id: UInt32
    /// Squared chord between unit vectors: the exact ranking key (see `ChordDistance`).
    public let key: Double
    /// Great-circle distance in metres.
    public var distance: Double { ChordDistance.metres(fromKey: key) }

    public init(id: UInt32, key: Double) {
        self.id = id
        self.key = key
    }

    /// The position from which a walk resumes strictly after this result.
    public var cursor: NearestCursor { NearestCursor(key: key, id: id) }
}

/// Where a nearest-first walk resumes: strictly after (key, id) in (distance, record number) order. Stable under
/// inserts and deletes elsewhere: a record inserted closer than the cursor was is simply not returned again.
public struct NearestCursor: Sendable, Hashable {
    public let key: Double
    public let id: UInt32

    public init(key: Double, id: UInt32) {
        self.key = key
        self.id = id
    }
}

/// A best-first walk of the tree yielding records nearest first (Hjaltason & Samet, "Distance browsing in spatial
/// databases", TODS 1999).
///
/// One min-heap holds both nodes, keyed by the lower bound of their box, and records, keyed by their exact squared
/// chord. At equal keys nodes pop before records and records pop in record-number order, so when a record pops no
/// unvisited node can hold anything that ranks before it: the order is exactly (distance, id), identical to
/// sorting every record by brute force. The filter is applied before a record enters the heap, so "the 10 nearest
/// cafés" visits only as many cafés as it needs, and the walk stops as soon as the caller stops asking.
public struct NearestIterator: IteratorProtocol {
    private let tree: RTree
    private let query: Vec3
    private let maxKey: Double
    private let after: NearestCursor?
    private let filter: ((UInt32) -> Bool)?
    private var heap = MinHeap()

    private static let itemFlag: UInt64 = 1 << 63

    init(tree: RTree, latitude: Double, longitude: Double, maxDistance: Double?, after: NearestCursor?, filter: ((UInt32) -> Bool)?) {
        self.tree = tree
        self.query = Vec3(latitude: latitude, longitude: longitude)
        self.maxKey = maxDistance.map { ChordDistance.key(forMetres: $0) } ?? .infinity
        self.after = after
        self.filter = filter
        if tree.root >= 0 {
            heap.push(.init(key: 0, tag: NearestIterator.nodeTag(tree.root, level: tree.rootLevel)))
        }
    }

    private static func nodeTag(_ node: Int32, level: Int) -> UInt64 { UInt64(level) << 32 | UInt64(UInt32(node)) }

    public mutating func next() -> Neighbor? {
        let m = RTree.m
        while let top = heap.pop() {
            if top.tag & NearestIterator.itemFlag != 0 {
                return Neighbor(id: UInt32(truncatingIfNeeded: top.tag), key: top.key)
            }
            let node = Int(UInt32(truncatingIfNeeded: top.tag))
            let level = Int(top.tag >> 32)
            let base = node * m
            if level == 0 {
                let end = base + Int(tree.leafCounts[node])
                for i in base..<end {
                    let key = query.distanceSquared(to: tree.leafVectors[i])
                    if key > maxKey { continue }
                    let id = tree.leafIDs[i]
                    if let after, key < after.key || (key == after.key && id <= after.id) { continue }
                    if let filter, !filter(id) { continue }
                    heap.push(.init(key: key, tag: NearestIterator.itemFlag | UInt64(id)))
                }
            } else {
                let end = base + Int(tree.branchCounts[node])
                for i in base..<end {
                    let key = tree.branchBoxes[i].distanceSquared(to: query)
                    if key > maxKey { continue }
                    heap.push(.init(key: key, tag: NearestIterator.nodeTag(tree.branchChildren[i], level: level - 1)))
                }
            }
        }
        return nil
    }
}

extension RTree {
    /// A walk over records nearest first from a point.
    /// - Parameters:
    ///   - maxDistance: only records within this many metres (great-circle).
    ///   - after: resume strictly after a previous result.
    ///   - filter: records for which it returns false are skipped during the walk.
    public func nearest(
        latitude: Double,
        longitude: Double,
        maxDistance: Double? = nil,
        after: NearestCursor? = nil,
        filter: ((UInt32) -> Bool)? = nil
    ) -> NearestIterator {
        NearestIterator(tree: self, latitude: latitude, longitude: longitude, maxDistance: maxDistance, after: after, filter: filter)
    }

    /// The `k` nearest records, nearest first, ties by record number.
    /// - Complexity: O(k log n) expected for spread-out data.
    public func nearest(
        k: Int,
        latitude: Double,
        longitude: Double,
        maxDistance: Double? = nil,
        after: NearestCursor? = nil,
        filter: ((UInt32) -> Bool)? = nil
    ) -> [Neighbor] {
        guard k > 0 else { return [] }
        var walk = nearest(latitude: latitude, longitude: longitude, maxDistance: maxDistance, after: after, filter: filter)
        var results: [Neighbor] = []
        results.reserveCapacity(min(k, 1024))
        while results.count < k, let next = walk.next() { results.append(next) }
        return results
    }

    /// Every record within `radius` metres, nearest first.
    public func within(radius: Double, latitude: Double, longitude: Double, filter: ((UInt32) -> Bool)? = nil) -> [Neighbor] {
        var walk = nearest(latitude: latitude, longitude: longitude, maxDistance: radius, filter: filter)
        var results: [Neighbor] = []
        while let next = walk.next() { results.append(next) }
        return results
    }
}
