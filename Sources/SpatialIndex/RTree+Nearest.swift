import CPrefetch
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
    /// Depth-first branch-and-bound (Roussopoulos, Kelley & Vincent, "Nearest neighbor queries", SIGMOD 1995): at
    /// each level the node's children's lower bounds (the squared chord to their boxes, exact in floating point) are
    /// computed once, and the children are opened nearest bound first, each while its bound is at most the k-th best
    /// key found so far; the k best (key, id) pairs are kept sorted. Children whose bound equals that key are still
    /// opened, since they may hold a record with an equal key and a smaller id — so the order is exactly
    /// (distance, id), identical to brute force. The filter runs on records as they are reached, so "the 10 nearest
    /// cafés" never collects 10 000 nearest records first; `after` resumes a previous walk (cursors).
    ///
    /// Measured against the best-first walk with a heap (Hjaltason & Samet, TODS 1999) that it replaced: the packed
    /// tree's first descent already finds near records, so the few extra nodes a depth-first walk opens cost less than
    /// a heap push for every child within the bound (RESULTS.md, issue 59).
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
        let depth = rootLevel + 1
        // Per level: the bounds of the children of the node open there that could reach the k best when it was
        // opened (NaN once a child is opened), their slots in the node, that node, and how many such children.
        withUnsafeTemporaryAllocation(of: Double.self, capacity: depth * m) { keys in
            withUnsafeTemporaryAllocation(of: Int32.self, capacity: depth * m) { slots in
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: 2 * depth) { open in
                    leafVectors.withUnsafeBufferPointer { vectors in
                        leafIDs.withUnsafeBufferPointer { ids in
                            leafCounts.withUnsafeBufferPointer { leafCounts in
                                branchBoxes.withUnsafeBufferPointer { boxes in
                                    branchChildren.withUnsafeBufferPointer { children in
                                        branchCounts.withUnsafeBufferPointer { branchCounts in
                                            var level = rootLevel
                                            // The leaf to read next; -1: none.
                                            var leaf: Int32 = -1
                                            var expand: Int32 = -1
                                            if rootLevel == 0 { leaf = root } else { expand = root }
                                            while true {
                                                if expand >= 0 {
                                                    // Open a branch: its children's bounds, once, keeping (without a
                                                    // branch) those within the bound, so that picks scan only them.
                                                    let base = Int(expand) * m
                                                    let count = Int(branchCounts[Int(expand)])
                                                    let row = level * m
                                                    Self.prefetch(boxes.baseAddress! + base, count: count)
                                                    var kept = 0
                                                    for i in 0..<count {
                                                        let key = boxes[base + i].distanceSquared(to: query)
                                                        keys[row + kept] = key
                                                        slots[row + kept] = Int32(truncatingIfNeeded: i)
                                                        kept += key <= bound ? 1 : 0
                                                    }
                                                    open[2 * level] = expand
                                                    open[2 * level + 1] = Int32(kept)
                                                    expand = -1
                                                }
                                                if leaf >= 0 {
                                                    let base = Int(leaf) * m
                                                    Self.prefetch(vectors.baseAddress! + base, count: Int(leafCounts[Int(leaf)]))
                                                    Self.prefetch(ids.baseAddress! + base, count: Int(leafCounts[Int(leaf)]))
                                                    for i in base..<(base + Int(leafCounts[Int(leaf)])) {
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
                                                    leaf = -1
                                                    if rootLevel == 0 { break }
                                                }
                                                // The nearest child not yet opened at this level, if its bound can still
                                                // reach the k best; else back up a level.
                                                let row = level * m
                                                var pick = -1
                                                var low = Double.infinity
                                                for i in 0..<Int(open[2 * level + 1]) where keys[row + i] < low {
                                                    low = keys[row + i]
                                                    pick = i
                                                }
                                                if pick < 0 || low > bound {
                                                    if level == rootLevel { break }
                                                    level += 1
                                                    continue
                                                }
                                                keys[row + pick] = .nan
                                                let child = children[Int(open[2 * level]) * m + Int(slots[row + pick])]
                                                if level == 1 {
                                                    leaf = child
                                                } else {
                                                    level -= 1
                                                    expand = child
                                                }
                                            }
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

    /// Asks for every cache line of `count` elements at once, so that their misses overlap rather than follow one
    /// another as the scan reaches them.
    @inline(__always)
    static func prefetch<T>(_ start: UnsafePointer<T>, count: Int) {
        let raw = UnsafeRawPointer(start)
        var offset = 0
        let bytes = count * MemoryLayout<T>.stride
        while offset < bytes {
            poi_prefetch(raw + offset)
            offset += 64
        }
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
