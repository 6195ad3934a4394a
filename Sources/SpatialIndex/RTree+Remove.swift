extension RTree {
    /// Removes a record; returns whether it was there.
    ///
    /// The entry is swapped out of its leaf; a leaf or branch left empty is freed and removed from its parent, and
    /// every box on the way to the root is recomputed so boxes stay tight. A root branch with one child is
    /// replaced by that child. Under-full nodes are kept (as in tidwall's rtree): re-inserting their entries would
    /// cost more than the slightly looser packing.
    /// - Complexity: O(log n).
    @discardableResult
    public mutating func remove(_ id: UInt32) -> Bool {
        guard contains(id) else { return false }
        let leaf = leafOf[Int(id)]
        let base = Int(leaf) * RTree.m
        let last = base + Int(leafCounts[Int(leaf)]) - 1
        guard let i = (base...last).first(where: { leafIDs[$0] == id }) else {
            preconditionFailure("R-tree corrupt: record \(id) is not in its leaf \(leaf)")
        }
        leafVectors[i] = leafVectors[last]
        leafCoords[i] = leafCoords[last]
        leafIDs[i] = leafIDs[last]
        leafCounts[Int(leaf)] -= 1
        leafOf[Int(id)] = -1
        count -= 1
        removeIfEmptyElseTighten(node: leaf, level: 0)
        collapseRoot()
        return true
    }

    /// Moves a record to a new position (removes and re-inserts it).
    public mutating func move(_ id: UInt32, latitude: Double, longitude: Double) {
        insert(IndexedPoint(id: id, latitude: latitude, longitude: longitude))
    }

    private mutating func removeIfEmptyElseTighten(node: Int32, level: Int) {
        var node = node
        var level = level
        // Free empty nodes bottom-up.
        while !isRoot(node, level: level) && entryCount(node, level: level) == 0 {
            let parent = self.parent(of: node, level: level)
            let i = slot(of: node, in: parent)
            let last = Int(parent) * RTree.m + Int(branchCounts[Int(parent)]) - 1
            branchBoxes[i] = branchBoxes[last]
            branchChildren[i] = branchChildren[last]
            branchCounts[Int(parent)] -= 1
            if level == 0 { freeLeaves.append(node) } else { freeBranches.append(node) }
            node = parent
            level += 1
        }
        if isRoot(node, level: level) && entryCount(node, level: level) == 0 {
            if level == 0 { freeLeaves.append(node) } else { freeBranches.append(node) }
            root = -1
            rootLevel = 0
            return
        }
        // Tighten boxes up to the root, stopping once a box is unchanged.
        while !isRoot(node, level: level) {
            let parent = self.parent(of: node, level: level)
            let i = slot(of: node, in: parent)
            let tight = box(of: node, level: level)
            if branchBoxes[i] == tight { return }
            branchBoxes[i] = tight
            node = parent
            level += 1
        }
    }

    private mutating func collapseRoot() {
        while root >= 0 && rootLevel > 0 && branchCounts[Int(root)] == 1 {
            let child = branchChildren[Int(root) * RTree.m]
            freeBranches.append(root)
            root = child
            rootLevel -= 1
            setParent(of: child, level: rootLevel, to: -1)
        }
    }

    func entryCount(_ node: Int32, level: Int) -> Int {
        level == 0 ? Int(leafCounts[Int(node)]) : Int(branchCounts[Int(node)])
    }
}

extension RTree {
    /// Leaves and branches are numbered in separate pools, so a node is the root only at the root's level.
    func isRoot(_ node: Int32, level: Int) -> Bool { node == root && level == rootLevel }
}
