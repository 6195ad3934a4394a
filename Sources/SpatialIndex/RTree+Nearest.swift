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
    ///
    /// Branch-and-bound over the same lower bounds as `NearestIterator` (Roussopoulos, Kelley & Vincent, SIGMOD
    /// 1995, with a best-first node queue): the k best (key, id) pairs seen so far are kept sorted, and a node is
    /// skipped once its lower bound exceeds the k-th best key, so records never enter a heap. Nodes whose bound
    /// equals the k-th key are still opened, since they may hold a record with an equal key and a smaller id.
    /// - Complexity: O(k log n) expected for spread-out data.
    public func nearest(
        k: Int,
        latitude: Double,
        longitude: Double,
        maxDistance: Double? = nil,
        after: NearestCursor? = nil,
        filter: ((UInt32) -> Bool)? = nil
    ) -> [Neighbor] {
        guard k > 0, root >= 0 else { return [] }
        let query = Vec3(latitude: latitude, longitude: longitude)
        let maxKey = maxDistance.map { ChordDistance.key(forMetres: $0) } ?? .infinity
        let m = RTree.m
        var best: [Neighbor] = []
        best.reserveCapacity(min(k, 4_096) + 1)
        var bound = maxKey
        var heap = MinHeap(capacity: 128)
        heap.push(.init(key: 0, tag: UInt64(rootLevel) << 32 | UInt64(UInt32(root))))
        leafVectors.withUnsafeBufferPointer { vectors in
            leafIDs.withUnsafeBufferPointer { ids in
                leafCounts.withUnsafeBufferPointer { leafCounts in
                    branchBoxes.withUnsafeBufferPointer { boxes in
                        branchChildren.withUnsafeBufferPointer { children in
                            branchCounts.withUnsafeBufferPointer { branchCounts in
                                while let top = heap.pop() {
                                    if top.key > bound { break }
                                    let node = Int(UInt32(truncatingIfNeeded: top.tag))
                                    let level = Int(top.tag >> 32)
                                    let base = node * m
                                    if level == 0 {
                                        for i in base..<(base + Int(leafCounts[node])) {
                                            let key = query.distanceSquared(to: vectors[i])
                                            if key > bound { continue }
                                            let id = ids[i]
                                            if best.count == k, let worst = best.last, key == worst.key && id > worst.id { continue }
                                            if let after, key < after.key || (key == after.key && id <= after.id) { continue }
                                            if let filter, !filter(id) { continue }
                                            // Insert into the sorted best list.
                                            var j = best.count
                                            best.append(Neighbor(id: id, key: key))
                                            while j > 0 && (best[j - 1].key > key || (best[j - 1].key == key && best[j - 1].id > id)) {
                                                best[j] = best[j - 1]
                                                j -= 1
                                            }
                                            best[j] = Neighbor(id: id, key: key)
                                            if best.count > k { best.removeLast() }
                                            if best.count == k { bound = min(maxKey, best[k - 1].key) }
                                        }
                                    } else {
                                        for i in base..<(base + Int(branchCounts[node])) {
                                            let key = boxes[i].distanceSquared(to: query)
                                            if key > bound { continue }
                                            heap.push(.init(key: key, tag: UInt64(level - 1) << 32 | UInt64(UInt32(children[i]))))
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return best
    }

    /// Every record within `radius` metres, nearest first (ties by record number).
    public func within(radius: Double, latitude: Double, longitude: Double, filter: ((UInt32) -> Bool)? = nil) -> [Neighbor] {
        guard root >= 0 else { return [] }
        let query = Vec3(latitude: latitude, longitude: longitude)
        let maxKey = ChordDistance.key(forMetres: radius)
        let m = RTree.m
        var results: [Neighbor] = []
        var stack: [(node: Int32, level: Int)] = [(root, rootLevel)]
        stack.reserveCapacity(64)
        while let (node, level) = stack.popLast() {
            let base = Int(node) * m
            if level == 0 {
                for i in base..<(base + Int(leafCounts[Int(node)])) {
                    let key = query.distanceSquared(to: leafVectors[i])
                    if key > maxKey { continue }
                    if let filter, !filter(leafIDs[i]) { continue }
                    results.append(Neighbor(id: leafIDs[i], key: key))
                }
            } else {
                for i in base..<(base + Int(branchCounts[Int(node)])) where branchBoxes[i].distanceSquared(to: query) <= maxKey {
                    stack.append((branchChildren[i], level - 1))
                }
            }
        }
        results.sort { $0.key != $1.key ? $0.key < $1.key : $0.id < $1.id }
        return results
    }
}
