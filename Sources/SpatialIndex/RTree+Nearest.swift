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

extension RTree {
    /// The `k` nearest records, nearest first, ties by record number.
    ///
    /// Best-first branch-and-bound (Hjaltason & Samet, "Distance browsing in spatial databases", TODS 1999;
    /// Roussopoulos, Kelley & Vincent, SIGMOD 1995): nodes leave a min-heap in order of their boxes' lower bound (the
    /// squared chord to the box, exact in floating point); the k best (key, id) pairs seen so far are kept sorted,
    /// and the walk stops once the next node's bound exceeds the k-th best key. Nodes whose bound equals it are
    /// still opened, since they may hold a record with an equal key and a smaller id — so the order is exactly
    /// (distance, id), identical to brute force. The filter runs on records as they are reached, so "the 10 nearest
    /// cafés" never collects 10 000 nearest records first; `after` resumes a previous walk (cursors).
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

    /// The nearest record within `maxDistance` metres (ties by record number): `nearest(k: 1, …).first` without its
    /// heap and result list. Depth-first, each node's children in order of their boxes' bound (kept on the stack), a
    /// child opened while its bound is at most the best key — equal too, for a record with an equal key and a
    /// smaller number. For the per-result lookups of an answer (the district of each of ten input tips).
    public func nearestOne(latitude: Double, longitude: Double, maxDistance: Double? = nil) -> Neighbor? {
        guard root >= 0 else { return nil }
        let query = Vec3(latitude: latitude, longitude: longitude)
        var best = Neighbor(id: .max, key: maxDistance.map { ChordDistance.key(forMetres: $0) } ?? .infinity)
        var found = false
        func visit(_ node: Int, _ level: Int) {
            let base = node * RTree.m
            if level == 0 {
                leafVectors.withUnsafeBufferPointer { vectors in
                    for i in base..<(base + Int(leafCounts[node])) {
                        let key = vectors[i].distanceSquared(to: query)
                        guard key <= best.key else { continue }
                        let id = leafIDs[i]
                        if key < best.key || !found || id < best.id {
                            best = Neighbor(id: id, key: key)
                            found = true
                        }
                    }
                }
                return
            }
            let count = Int(branchCounts[node])
            withUnsafeTemporaryAllocation(of: (key: Double, child: Int32).self, capacity: RTree.m) { order in
                var n = 0
                for i in base..<(base + count) {
                    let key = branchBoxes[i].distanceSquared(to: query)
                    guard key <= best.key else { continue }
                    // Insertion into the few kept, by bound.
                    var j = n
                    while j > 0 && order[j - 1].key > key {
                        order[j] = order[j - 1]
                        j -= 1
                    }
                    order[j] = (key, branchChildren[i])
                    n += 1
                }
                for j in 0..<n where order[j].key <= best.key { visit(Int(order[j].child), level - 1) }
            }
        }
        visit(Int(root), rootLevel)
        return found ? best : nil
    }

    /// Every record within `radius` metres, nearest first (ties by record number).
    public func within(radius: Double, latitude: Double, longitude: Double, filter: ((UInt32) -> Bool)? = nil) -> [Neighbor] {
        guard root >= 0 else { return [] }
        let query = Vec3(latitude: latitude, longitude: longitude)
        let maxKey = ChordDistance.key(forMetres: radius)
        var results: [Neighbor] = []
        _ = depthFirst(
            entering: { $0.distanceSquared(to: query) <= maxKey },
            slot: { i in
                let key = query.distanceSquared(to: leafVectors[i])
                if key <= maxKey, filter?(leafIDs[i]) ?? true { results.append(Neighbor(id: leafIDs[i], key: key)) }
                return true
            }
        )
        results.sort { $0.key != $1.key ? $0.key < $1.key : $0.id < $1.id }
        return results
    }
}
