/// A broken structural invariant, with what was found.
public struct InvariantViolation: Error, CustomStringConvertible {
    public let description: String
}

extension RTree {
    /// Verifies every structural invariant (see the type's notes); throws the first violation found.
    /// - Complexity: O(n).
    public func checkInvariants() throws {
        func fail(_ message: String) throws -> Never { throw InvariantViolation(description: "RTree: " + message) }
        guard root >= 0 else {
            if count != 0 { try fail("empty root but count \(count)") }
            if leafOf.contains(where: { $0 >= 0 }) { try fail("empty tree but leafOf has entries") }
            return
        }
        if parent(of: root, level: rootLevel) != -1 { try fail("root has a parent") }
        if rootLevel > 0 && branchCounts[Int(root)] < 2 { try fail("root branch has fewer than 2 children") }
        var seen = 0
        var stack: [(node: Int32, level: Int)] = [(root, rootLevel)]
        while let (node, level) = stack.popLast() {
            let n = entryCount(node, level: level)
            if n > RTree.m { try fail("node \(node) holds \(n) entries") }
            if n == 0 && !isRoot(node, level: level) { try fail("node \(node) at level \(level) is empty") }
            let base = Int(node) * RTree.m
            if level == 0 {
                for i in base..<(base + n) {
                    let id = leafIDs[i]
                    guard Int(id) < leafOf.count, leafOf[Int(id)] == node else { try fail("leafOf[\(id)] is not leaf \(node)") }
                    let expected = Vec3(latitude: leafCoords[i].latitude, longitude: leafCoords[i].longitude)
                    if expected != leafVectors[i] { try fail("record \(id) has a stale unit vector") }
                    seen += 1
                }
            } else {
                for i in base..<(base + n) {
                    let child = branchChildren[i]
                    if parent(of: child, level: level - 1) != node { try fail("child \(child) of \(node) names another parent") }
                    if branchBoxes[i] != box(of: child, level: level - 1) {
                        try fail(
                            "box of child \(child) (level \(level - 1)) in \(node) is not its tight bounding box: \(branchBoxes[i]) vs \(box(of: child, level: level - 1)); root \(root) level \(rootLevel)"
                        )
                    }
                    stack.append((child, level - 1))
                }
            }
        }
        if seen != count { try fail("\(seen) records reachable but count is \(count)") }
        let mapped = leafOf.reduce(0) { $0 + ($1 >= 0 ? 1 : 0) }
        if mapped != count { try fail("\(mapped) records in leafOf but count is \(count)") }
    }
}
