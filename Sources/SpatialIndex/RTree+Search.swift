import GeoCore

extension RTree {
    /// Calls `body` with every record inside the box (edges included), in tree order, until it returns false.
    /// Boxes crossing the antimeridian and boxes reaching a pole are handled; each record is visited once.
    public func search(_ box: BoundingBox, _ body: (UInt32, Double, Double) -> Bool) {
        guard root >= 0 else { return }
        for part in box.antimeridianParts {
            let enclosing = Box3.enclosing(part)
            if !walk(enclosing, test: { part.contains(latitude: $0, longitude: $1) }, body) { return }
        }
    }

    /// Calls `body` with every record inside the polygon, in tree order, until it returns false.
    public func search(_ polygon: Polygon, _ body: (UInt32, Double, Double) -> Bool) {
        guard root >= 0 else { return }
        for part in polygon.boundingBox.antimeridianParts {
            let enclosing = Box3.enclosing(part)
            let keepGoing = walk(
                enclosing,
                test: { part.contains(latitude: $0, longitude: $1) && polygon.contains(latitude: $0, longitude: $1) },
                body
            )
            if !keepGoing { return }
        }
    }

    /// The records inside the box.
    public func search(_ box: BoundingBox) -> [UInt32] {
        var ids: [UInt32] = []
        search(box) { id, _, _ in
            ids.append(id)
            return true
        }
        return ids
    }

    /// Depth-first walk of nodes meeting `enclosing`, testing each record's latitude/longitude exactly.
    private func walk(_ enclosing: Box3, test: (Double, Double) -> Bool, _ body: (UInt32, Double, Double) -> Bool) -> Bool {
        depthFirst(
            entering: { $0.intersects(enclosing) },
            slot: { i in
                let coord = leafCoords[i]
                return !test(coord.latitude, coord.longitude) || body(leafIDs[i], coord.latitude, coord.longitude)
            }
        )
    }

    /// Depth-first over the nodes whose boxes `entering` admits, calling `slot` with each leaf slot of a node reached
    /// until it returns false; returns false when it did.
    @inline(__always)
    func depthFirst(entering: (Box3) -> Bool, slot: (Int) -> Bool) -> Bool {
        let m = RTree.m
        var stack: [(node: Int32, level: Int)] = [(root, rootLevel)]
        stack.reserveCapacity(64)
        return branchBoxes.withUnsafeBufferPointer { lanes in
            while let (node, level) = stack.popLast() {
                let base = Int(node) * m
                if level == 0 {
                    for i in base..<(base + Int(leafCounts[Int(node)])) where !slot(i) { return false }
                } else {
                    let boxes = lanes.baseAddress! + Int(node) * NodeLanes<Box3>.nodeStride
                    for s in 0..<Int(branchCounts[Int(node)]) where entering(Box3(lanes: boxes, slot: s)) {
                        stack.append((branchChildren[base + s], level - 1))
                    }
                }
            }
            return true
        }
    }
}
