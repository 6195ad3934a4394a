import CNodeKernels
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
        let avx2 = RTree.nodeKernels
        var bound = maxKey
        let depth = rootLevel + 1
        // Per branch level: the node open there and the keys of its children (all `m` slots, as the kernel computes
        // them; infinity for a slot past its count or a child already opened); then a leaf's keys. Small enough to be
        // on the stack (1 KiB at 1 M records) rather than a malloc a walk.
        let kept = min(k, count)
        return withUnsafeTemporaryAllocation(of: Neighbor.self, capacity: kept + 1) { bestBuffer in
            var best = BestList(k: kept, buffer: bestBuffer.baseAddress!)
            withUnsafeTemporaryAllocation(of: Double.self, capacity: depth * m) { keys in
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: depth) { open in
                    leafVectors.withUnsafeBufferPointer { vectors in
                        leafIDs.withUnsafeBufferPointer { ids in
                            leafCounts.withUnsafeBufferPointer { leafCounts in
                                branchBoxes.withUnsafeBufferPointer { boxes in
                                    branchChildren.withUnsafeBufferPointer { children in
                                        branchCounts.withUnsafeBufferPointer { branchCounts in
                                            let leafKeys = keys.baseAddress! + rootLevel * m
                                            var level = rootLevel
                                            // The leaf to read next; -1: none.
                                            var leaf: Int32 = -1
                                            var expand: Int32 = -1
                                            if rootLevel == 0 { leaf = root } else { expand = root }
                                            while true {
                                                if expand >= 0 {
                                                    // Open a branch: its children's bounds, once.
                                                    let node = boxes.baseAddress! + Int(expand) * NodeLanes<Box3>.nodeStride
                                                    Self.prefetch(node, count: NodeLanes<Box3>.nodeStride)
                                                    let mask = poi_branch_keys(
                                                        node,
                                                        branchCounts[Int(expand)],
                                                        query.x,
                                                        query.y,
                                                        query.z,
                                                        bound,
                                                        keys.baseAddress! + (level - 1) * m,
                                                        avx2
                                                    )
                                                    open[level] = expand
                                                    if level == 1 {
                                                        Self.prefetchNearestLeaves(
                                                            mask,
                                                            keys: keys.baseAddress!,
                                                            children: children.baseAddress! + Int(expand) * m,
                                                            vectors: vectors.baseAddress!,
                                                            ids: ids.baseAddress!
                                                        )
                                                    }
                                                    expand = -1
                                                }
                                                if leaf >= 0 {
                                                    let base = Int(leaf) * m
                                                    let node = vectors.baseAddress! + Int(leaf) * NodeLanes<Vec3>.nodeStride
                                                    Self.prefetch(node, count: NodeLanes<Vec3>.nodeStride)
                                                    Self.prefetch(ids.baseAddress! + base, count: m)
                                                    var mask = poi_leaf_keys(
                                                        node,
                                                        leafCounts[Int(leaf)],
                                                        query.x,
                                                        query.y,
                                                        query.z,
                                                        bound,
                                                        leafKeys,
                                                        avx2
                                                    )
                                                    while mask != 0 {
                                                        let slot = mask.trailingZeroBitCount
                                                        mask &= mask - 1
                                                        let key = leafKeys[slot]
                                                        if key > bound { continue }
                                                        let id = ids[base + slot]
                                                        if best.isFull, key == best.worstKey && id > best.worstID { continue }
                                                        if let after, key < after.key || (key == after.key && id <= after.id) { continue }
                                                        if let filter, !filter(id) { continue }
                                                        if best.insert(Neighbor(id: id, key: key)) { bound = min(maxKey, best.worstKey) }
                                                    }
                                                    leaf = -1
                                                    if rootLevel == 0 { break }
                                                }
                                                // The nearest child not yet opened at this level (its key is then set
                                                // to infinity), if its bound can still reach the k best; else back up.
                                                let pick = Int(poi_pick(keys.baseAddress! + (level - 1) * m, bound, avx2))
                                                if pick < 0 {
                                                    if level == rootLevel { break }
                                                    level += 1
                                                    continue
                                                }
                                                let child = children[Int(open[level]) * m + pick]
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
            return best.neighbors
        }
    }

    /// Whether the node kernels may use AVX2 (asked of the processor once).
    @usableFromInline static let nodeKernels: Int32 = poi_node_kernels_have_avx2()

    /// The k best (key, id) pairs found so far, in order: a buffer of k + 1 that insertion shifts, with no checks
    /// of uniqueness or bounds and no allocation of its own (an `Array` cost ~0.5 µs of a k = 10 walk's ~1.6 µs in
    /// cache, at ~28 insertions a walk: RESULTS.md, issue 59).
    struct BestList {
        let k: Int
        private(set) var count = 0
        /// Room for k + 1.
        private let buffer: UnsafeMutablePointer<Neighbor>

        init(k: Int, buffer: UnsafeMutablePointer<Neighbor>) {
            self.k = k
            self.buffer = buffer
        }

        var isFull: Bool { count == k }
        /// The k-th best key and its id (valid when full).
        var worstKey: Double { buffer[k - 1].key }
        var worstID: UInt32 { buffer[k - 1].id }

        /// Inserts in (key, id) order, dropping the (k + 1)-th; answers whether the list is full.
        @inline(__always)
        mutating func insert(_ n: Neighbor) -> Bool {
            var j = count
            while j > 0 {
                let p = buffer[j - 1]
                if p.key < n.key || (p.key == n.key && p.id < n.id) { break }
                buffer[j] = p
                j -= 1
            }
            buffer[j] = n
            if count < k { count += 1 }
            return count == k
        }

        var neighbors: [Neighbor] { Array(UnsafeBufferPointer(start: buffer, count: count)) }
    }

    /// Asks for the lines of the leaves nearest by bound among `mask`'s children (those the walk opens first, one
    /// after another), so that their misses overlap rather than follow one another.
    @inline(__always)
    static func prefetchNearestLeaves(
        _ mask: UInt32,
        keys: UnsafePointer<Double>,
        children: UnsafePointer<Int32>,
        vectors: UnsafePointer<Double>,
        ids: UnsafePointer<UInt32>
    ) {
        var first = (key: Double.infinity, slot: -1)
        var second = first
        var third = first
        var rest = mask
        while rest != 0 {
            let slot = rest.trailingZeroBitCount
            rest &= rest - 1
            let key = keys[slot]
            if key < third.key {
                if key < second.key {
                    third = second
                    if key < first.key {
                        second = first
                        first = (key, slot)
                    } else {
                        second = (key, slot)
                    }
                } else {
                    third = (key, slot)
                }
            }
        }
        @inline(__always) func fetch(_ pick: Int) {
            guard pick >= 0 else { return }
            let leaf = Int(children[pick])
            prefetch(vectors + leaf * NodeLanes<Vec3>.nodeStride, count: NodeLanes<Vec3>.nodeStride)
            prefetch(ids + leaf * m, count: m)
        }
        fetch(first.slot)
        fetch(second.slot)
        fetch(third.slot)
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
        let avx2 = RTree.nodeKernels
        withUnsafeTemporaryAllocation(of: Double.self, capacity: RTree.m) { leafKeys in
            func visit(_ node: Int, _ level: Int) {
                let base = node * RTree.m
                if level == 0 {
                    var mask = leafVectors.withUnsafeBufferPointer { vectors in
                        poi_leaf_keys(
                            vectors.baseAddress! + node * NodeLanes<Vec3>.nodeStride,
                            leafCounts[node],
                            query.x,
                            query.y,
                            query.z,
                            best.key,
                            leafKeys.baseAddress!,
                            avx2
                        )
                    }
                    while mask != 0 {
                        let slot = mask.trailingZeroBitCount
                        mask &= mask - 1
                        let key = leafKeys[slot]
                        guard key <= best.key else { continue }
                        let id = leafIDs[base + slot]
                        if key < best.key || !found || id < best.id {
                            best = Neighbor(id: id, key: key)
                            found = true
                        }
                    }
                    return
                }
                withUnsafeTemporaryAllocation(of: Double.self, capacity: RTree.m) { keys in
                    var mask = branchBoxes.withUnsafeBufferPointer { boxes in
                        poi_branch_keys(
                            boxes.baseAddress! + node * NodeLanes<Box3>.nodeStride,
                            branchCounts[node],
                            query.x,
                            query.y,
                            query.z,
                            best.key,
                            keys.baseAddress!,
                            avx2
                        )
                    }
                    // The kept children in order of their bounds, each opened while it can still hold the best.
                    while mask != 0 {
                        var pick = -1
                        var low = Double.infinity
                        var rest = mask
                        while rest != 0 {
                            let slot = rest.trailingZeroBitCount
                            rest &= rest - 1
                            if keys[slot] < low || pick < 0 {
                                low = keys[slot]
                                pick = slot
                            }
                        }
                        mask &= ~(1 << UInt32(pick))
                        if low > best.key { break }
                        visit(Int(branchChildren[base + pick]), level - 1)
                    }
                }
            }
            visit(Int(root), rootLevel)
        }
        return found ? best : nil
    }

    /// Every record within `radius` metres, nearest first (ties by record number).
    public func within(radius: Double, latitude: Double, longitude: Double, filter: ((UInt32) -> Bool)? = nil) -> [Neighbor] {
        guard root >= 0 else { return [] }
        let query = Vec3(latitude: latitude, longitude: longitude)
        let maxKey = ChordDistance.key(forMetres: radius)
        var results: [Neighbor] = []
        leafVectors.withUnsafeBufferPointer { vectors in
            _ = depthFirst(
                entering: { $0.distanceSquared(to: query) <= maxKey },
                slot: { i in
                    let (node, slot) = i.quotientAndRemainder(dividingBy: RTree.m)
                    let key = query.distanceSquared(to: Vec3(lanes: vectors.baseAddress! + node * NodeLanes<Vec3>.nodeStride, slot: slot))
                    if key <= maxKey, filter?(leafIDs[i]) ?? true { results.append(Neighbor(id: leafIDs[i], key: key)) }
                    return true
                }
            )
        }
        results.sort { $0.key != $1.key ? $0.key < $1.key : $0.id < $1.id }
        return results
    }
}
