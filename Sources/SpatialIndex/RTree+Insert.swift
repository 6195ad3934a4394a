extension RTree {
    /// Adds a point, or moves it if the record is already in the tree.
    /// - Complexity: O(log n) amortised.
    public mutating func insert(_ point: IndexedPoint) {
        if contains(point.id) { remove(point.id) }
        let vector = Vec3(latitude: point.latitude, longitude: point.longitude)
        if Int(point.id) >= leafOf.count {
            leafOf.append(contentsOf: repeatElement(-1, count: Int(point.id) + 1 - leafOf.count))
        }
        if root < 0 {
            root = allocateLeaf()
            rootLevel = 0
        }
        // Descend, choosing the child whose box grows least (Guttman's ChooseLeaf), growing boxes on the way.
        var node = root
        var level = rootLevel
        while level > 0 {
            let slot = chooseSubtree(node, for: vector)
            branchBoxes[slot].expand(vector)
            node = branchChildren[slot]
            level -= 1
        }
        count += 1
        let leaf = node
        let used = Int(leafCounts[Int(leaf)])
        if used < RTree.m {
            let i = Int(leaf) * RTree.m + used
            leafVectors[i] = vector
            leafCoords[i] = LatLon(latitude: point.latitude, longitude: point.longitude)
            leafIDs[i] = point.id
            leafCounts[Int(leaf)] += 1
            leafOf[Int(point.id)] = leaf
            return
        }
        let sibling = splitLeaf(leaf, adding: point, vector: vector)
        propagateSplit(node: leaf, sibling: sibling, level: 0)
    }

    /// The entry slot of `branch` needing the least volume enlargement to take `vector`; ties go to the smaller
    /// volume, then the smaller margin.
    private func chooseSubtree(_ branch: Int32, for vector: Vec3) -> Int {
        let base = Int(branch) * RTree.m
        var best = base
        var bestEnlargement = Double.infinity
        var bestVolume = Double.infinity
        var bestMargin = Double.infinity
        for i in base..<(base + Int(branchCounts[Int(branch)])) {
            let box = branchBoxes[i]
            var grown = box
            grown.expand(vector)
            let volume = box.volume
            let enlargement = grown.volume - volume
            let margin = grown.margin
            if enlargement < bestEnlargement
                || (enlargement == bestEnlargement && (volume < bestVolume || (volume == bestVolume && margin < bestMargin)))
            {
                best = i
                bestEnlargement = enlargement
                bestVolume = volume
                bestMargin = margin
            }
        }
        return best
    }

    /// Splits a full leaf plus one new point into two halves along the longest axis of their box; returns the new
    /// leaf holding the upper half.
    private mutating func splitLeaf(_ leaf: Int32, adding point: IndexedPoint, vector: Vec3) -> Int32 {
        let m = RTree.m
        let base = Int(leaf) * m
        var entries: [(vector: Vec3, coord: LatLon, id: UInt32)] = (base..<(base + m)).map {
            (leafVectors[$0], leafCoords[$0], leafIDs[$0])
        }
        entries.append((vector, LatLon(latitude: point.latitude, longitude: point.longitude), point.id))
        RTree.sortForSplit(&entries) { Box3(point: $0.vector) }
        let sibling = allocateLeaf()
        let half = entries.count / 2
        for (slot, entry) in entries[..<half].enumerated() {
            leafVectors[base + slot] = entry.vector
            leafCoords[base + slot] = entry.coord
            leafIDs[base + slot] = entry.id
            leafOf[Int(entry.id)] = leaf
        }
        leafCounts[Int(leaf)] = Int32(half)
        let siblingBase = Int(sibling) * m
        for (slot, entry) in entries[half...].enumerated() {
            leafVectors[siblingBase + slot] = entry.vector
            leafCoords[siblingBase + slot] = entry.coord
            leafIDs[siblingBase + slot] = entry.id
            leafOf[Int(entry.id)] = sibling
        }
        leafCounts[Int(sibling)] = Int32(entries.count - half)
        return sibling
    }

    /// After `node` (at `level`) was split off `sibling`, fixes the parent's entry for `node` and adds `sibling`,
    /// splitting upwards as needed; grows a new root when the root splits.
    private mutating func propagateSplit(node: Int32, sibling: Int32, level: Int) {
        let m = RTree.m
        var node = node
        var sibling = sibling
        var level = level
        while true {
            let parent = self.parent(of: node, level: level)
            let nodeBox = box(of: node, level: level)
            let siblingBox = box(of: sibling, level: level)
            if parent < 0 {
                let newRoot = allocateBranch()
                let base = Int(newRoot) * m
                branchBoxes[base] = nodeBox
                branchChildren[base] = node
                branchBoxes[base + 1] = siblingBox
                branchChildren[base + 1] = sibling
                branchCounts[Int(newRoot)] = 2
                setParent(of: node, level: level, to: newRoot)
                setParent(of: sibling, level: level, to: newRoot)
                root = newRoot
                rootLevel = level + 1
                return
            }
            branchBoxes[slot(of: node, in: parent)] = nodeBox
            let used = Int(branchCounts[Int(parent)])
            if used < m {
                let i = Int(parent) * m + used
                branchBoxes[i] = siblingBox
                branchChildren[i] = sibling
                branchCounts[Int(parent)] += 1
                setParent(of: sibling, level: level, to: parent)
                return
            }
            // The parent is full: split it with the sibling as its extra entry.
            let base = Int(parent) * m
            var entries: [(box: Box3, child: Int32)] = (base..<(base + m)).map { (branchBoxes[$0], branchChildren[$0]) }
            entries.append((siblingBox, sibling))
            RTree.sortForSplit(&entries) { $0.box }
            let newBranch = allocateBranch()
            let half = entries.count / 2
            for (slot, entry) in entries[..<half].enumerated() {
                branchBoxes[base + slot] = entry.box
                branchChildren[base + slot] = entry.child
                setParent(of: entry.child, level: level, to: parent)
            }
            branchCounts[Int(parent)] = Int32(half)
            let newBase = Int(newBranch) * m
            for (slot, entry) in entries[half...].enumerated() {
                branchBoxes[newBase + slot] = entry.box
                branchChildren[newBase + slot] = entry.child
                setParent(of: entry.child, level: level, to: newBranch)
            }
            branchCounts[Int(newBranch)] = Int32(entries.count - half)
            node = parent
            sibling = newBranch
            level += 1
        }
    }

    static func longestAxis(_ box: Box3) -> Int {
        let dx = box.maxX - box.minX
        let dy = box.maxY - box.minY
        let dz = box.maxZ - box.minZ
        if dx >= dy && dx >= dz { return 0 }
        return dy >= dz ? 1 : 2
    }

    /// Sorts the entries of an overfull node along the longest axis of their bounding box, by their boxes' centres (a
    /// point's box is the point itself): a split keeps the first half and moves the rest to a new sibling.
    static func sortForSplit<Entry>(_ entries: inout [Entry], box: (Entry) -> Box3) {
        var union = Box3.empty
        for entry in entries { union.expand(box(entry)) }
        let axis = longestAxis(union)
        entries.sort { center(box($0), axis) < center(box($1), axis) }
    }

    static func center(_ b: Box3, _ axis: Int) -> Double {
        axis == 0 ? (b.minX + b.maxX) / 2 : (axis == 1 ? (b.minY + b.maxY) / 2 : (b.minZ + b.maxZ) / 2)
    }
}
