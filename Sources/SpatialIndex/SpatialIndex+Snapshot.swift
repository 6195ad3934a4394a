import SnapshotFile

extension SpatialIndex {
    /// Writes both indexes as they are, for `init(snapshot:)` to restore without rebuilding.
    public func write(to snapshot: SnapshotWriter) throws(SnapshotError) {
        try tree.write(to: snapshot)
        try grid.write(to: snapshot)
    }

    /// Restores indexes written by `write(to:)`.
    public init(snapshot: SnapshotReader) throws(SnapshotError) {
        tree = try RTree(snapshot: snapshot)
        grid = try GeohashGrid(snapshot: snapshot)
        guard tree.count == grid.count else { throw .corrupt(path: snapshot.path, reason: "R-tree and geohash grid counts differ") }
    }
}

extension RTree {
    public func write(to snapshot: SnapshotWriter) throws(SnapshotError) {
        snapshot.mark()
        try snapshot.write(leafVectors.values)
        try snapshot.write(leafCoords)
        try snapshot.write(leafIDs)
        try snapshot.write(leafCounts)
        try snapshot.write(leafParents)
        try snapshot.write(freeLeaves)
        try snapshot.write(branchBoxes.values)
        try snapshot.write(branchChildren)
        try snapshot.write(branchCounts)
        try snapshot.write(branchParents)
        try snapshot.write(freeBranches)
        try snapshot.write(leafOf)
        try snapshot.write(Int(root))
        try snapshot.write(rootLevel)
        try snapshot.write(count)
    }

    public init(snapshot: SnapshotReader) throws(SnapshotError) {
        self.init()
        leafVectors = NodeLanes(values: try snapshot.readFlat())
        leafCoords = try snapshot.readFlat()
        leafIDs = try snapshot.readFlat()
        leafCounts = try snapshot.readFlat()
        leafParents = try snapshot.readFlat()
        freeLeaves = try snapshot.read()
        branchBoxes = NodeLanes(values: try snapshot.readFlat())
        branchChildren = try snapshot.readFlat()
        branchCounts = try snapshot.readFlat()
        branchParents = try snapshot.readFlat()
        freeBranches = try snapshot.read()
        leafOf = try snapshot.readFlat()
        root = Int32(truncatingIfNeeded: try snapshot.readInt())
        rootLevel = try snapshot.readInt()
        count = try snapshot.readInt()
        let m = RTree.maxEntries
        let leaves = leafCounts.count
        let branches = branchCounts.count
        guard leafVectors.values.count == leaves * NodeLanes<Vec3>.nodeStride, leafCoords.count == leaves * m, leafIDs.count == leaves * m,
            leafParents.count == leaves,
            branchBoxes.values.count == branches * NodeLanes<Box3>.nodeStride, branchChildren.count == branches * m, branchParents.count == branches,
            root < 0 || (rootLevel == 0 ? Int(root) < leaves : Int(root) < branches)
        else { throw .corrupt(path: snapshot.path, reason: "R-tree pools of inconsistent sizes") }
    }
}

extension GeohashGrid {
    func write(to snapshot: SnapshotWriter) throws(SnapshotError) {
        snapshot.mark()
        try snapshot.write(baseHashes)
        try snapshot.write(baseIDs)
        try snapshot.write(prefixLatitude)
        try snapshot.write(prefixLongitude)
        let removedIDs = removed.keys.sorted()
        try snapshot.write(removedIDs)
        try snapshot.write(removedIDs.map { removed[$0]! })
        try snapshot.write(removedSorted)
        try snapshot.write(added)
    }

    init(snapshot: SnapshotReader) throws(SnapshotError) {
        self.init()
        baseHashes = try snapshot.readFlat()
        baseIDs = try snapshot.readFlat()
        prefixLatitude = try snapshot.readFlat()
        prefixLongitude = try snapshot.readFlat()
        let removedIDs: [UInt32] = try snapshot.read()
        let removedHashes: [UInt64] = try snapshot.read()
        removedSorted = try snapshot.read()
        added = try snapshot.read()
        guard baseIDs.count == baseHashes.count, removedIDs.count == removedHashes.count, removedSorted.count == removedIDs.count,
            prefixLatitude.count == prefixLongitude.count, prefixLatitude.count == baseHashes.count / GeohashGrid.blockSize + 1
        else { throw .corrupt(path: snapshot.path, reason: "geohash grid arrays of inconsistent sizes") }
        removed.reserveCapacity(removedIDs.count)
        for (id, hash) in zip(removedIDs, removedHashes) { removed[id] = hash }
    }
}
