import Foundation
import GeoCore
import TestSupport
import Testing

@testable import SpatialIndex

@Suite struct RTreeMutationTests {
    /// Random inserts, deletes and moves, checking invariants as we go and queries against brute force.
    @Test(arguments: Layout.allCases)
    func randomOperationSequences(_ layout: Layout) throws {
        var random = testRandom("randomOperationSequences(\(layout))")
        let initial = randomPoints(3_000, layout: layout, random: &random)
        let pool = randomPoints(6_000, layout: layout, random: &random)
        var index = SpatialIndex(bulkLoading: Array(initial.prefix(random.nextUnit() < 0.3 ? 0 : 2_000)))
        var live: [UInt32: IndexedPoint] = [:]
        for p in initial.prefix(index.count) { live[p.id] = p }
        for step in 0..<6_000 {
            let op = random.next() % 10
            let id = UInt32(random.next() % 4_000)
            let p = pool[Int(random.next() % UInt64(pool.count))]
            if op < 5 {
                index.insert(IndexedPoint(id: id, latitude: p.latitude, longitude: p.longitude))
                live[id] = IndexedPoint(id: id, latitude: p.latitude, longitude: p.longitude)
            } else if op < 8 {
                #expect(index.remove(id) == (live.removeValue(forKey: id) != nil))
            } else if live[id] != nil {
                index.insert(IndexedPoint(id: id, latitude: p.latitude, longitude: p.longitude))
                live[id] = IndexedPoint(id: id, latitude: p.latitude, longitude: p.longitude)
            }
            if step % 500 == 0 || step == 5_999 {
                try index.checkInvariants()
                #expect(index.count == live.count)
                let points = Array(live.values)
                guard !points.isEmpty else { continue }
                for _ in 0..<20 {
                    let origin = randomOrigin(&random, near: points)
                    let expected = Array(bruteNearest(points, latitude: origin.latitude, longitude: origin.longitude).prefix(10))
                    #expect(index.tree.nearest(k: 10, latitude: origin.latitude, longitude: origin.longitude) == expected)
                    let box = BoundingBox.around(try Coordinate(latitude: origin.latitude, longitude: origin.longitude), radius: 500_000)
                    let inBox = Set(points.filter { box.contains(latitude: $0.latitude, longitude: $0.longitude) }.map(\.id))
                    #expect(Set(index.tree.search(box)) == inBox)
                }
            }
        }
        // Delete everything: the tree ends empty and consistent.
        for id in live.keys { index.remove(id) }
        try index.checkInvariants()
        #expect(index.count == 0)
    }

    @Test func insertIntoEmptyAndGrowManyLevels() throws {
        var random = testRandom("insertIntoEmptyAndGrowManyLevels")
        var tree = RTree()
        // More points than three levels of full nodes hold (32³ = 32 768), so the root must have split at least three
        // times whatever the seed (with 20 000, well-filled nodes sometimes fit in three levels).
        let count = RTree.maxEntries * RTree.maxEntries * RTree.maxEntries + 232
        let points = randomPoints(count, layout: .globe, random: &random)
        for p in points { tree.insert(p) }
        try tree.checkInvariants()
        #expect(tree.count == count)
        #expect(tree.height >= 4)
        for _ in 0..<50 {
            let o = randomOrigin(&random, near: points)
            #expect(
                tree.nearest(k: 10, latitude: o.latitude, longitude: o.longitude)
                    == Array(bruteNearest(points, latitude: o.latitude, longitude: o.longitude).prefix(10))
            )
        }
    }

    @Test func bulkLoadKeepsTheLastDuplicateID() throws {
        let tree = RTree(bulkLoading: [
            IndexedPoint(id: 1, latitude: 0, longitude: 0), IndexedPoint(id: 1, latitude: 10, longitude: 10),
        ])
        try tree.checkInvariants()
        #expect(tree.count == 1)
        #expect(tree.position(of: 1)! == (10, 10))
    }
}
