import CNodeKernels
import Foundation
import GeoCore
import TestSupport
import Testing

@testable import SpatialIndex

/// The node kernels of the nearest-neighbour walk: the AVX2 versions give the same bits as the portable loops, point
/// keys are `ChordDistance`'s bit for bit, box keys are `Box3`'s lower bound, and a pick is the nearest not yet opened.
@Suite struct NodeKernelTests {
    let m = RTree.maxEntries
    /// Whether this machine runs the AVX2 versions (otherwise they are the portable ones, and agree trivially).
    let avx2 = poi_node_kernels_have_avx2()

    /// Random unit vectors near each other (as a leaf's are), and a query near them or anywhere.
    func leaf(_ random: inout SplitMix64) -> (lanes: [Double], points: [Vec3], query: Vec3) {
        let centre = (latitude: random.uniform(-90...90), longitude: random.uniform(-180...180))
        let spread = [1e-6, 1e-3, 1, 90][Int(random.next() % 4)]
        let points = (0..<m).map { _ in
            Vec3(
                latitude: max(-90, min(90, centre.latitude + random.uniform(-spread...spread))),
                longitude: centre.longitude + random.uniform(-spread...spread)
            )
        }
        var lanes = [Double](repeating: 0, count: 3 * m)
        for (i, p) in points.enumerated() {
            lanes[i] = p.x
            lanes[m + i] = p.y
            lanes[2 * m + i] = p.z
        }
        let query =
            random.nextUnit() < 0.5
            ? points[Int(random.next() % UInt64(m))]
            : Vec3(latitude: random.uniform(-90...90), longitude: random.uniform(-180...180))
        return (lanes, points, query)
    }

    @Test func leafKeysAreChordKeysBitForBit() {
        var random = testRandom("leafKeysAreChordKeysBitForBit")
        for _ in 0..<2_000 {
            let (lanes, points, query) = leaf(&random)
            let count = Int32(random.next() % UInt64(m + 1))
            // Infinite, drawn, or exactly one record's key (a record at the bound is within it).
            let draw = random.next() % 3
            let bound =
                draw == 0 ? Double.infinity : draw == 1 ? random.uniform(0...0.5) : query.distanceSquared(to: points[Int(random.next() % UInt64(m))])
            var portable = [Double](repeating: .nan, count: m)
            var vector = [Double](repeating: .nan, count: m)
            let maskPortable = poi_leaf_keys_portable(lanes, count, query.x, query.y, query.z, bound, &portable)
            let maskVector = poi_leaf_keys(lanes, count, query.x, query.y, query.z, bound, &vector, avx2)
            #expect(maskPortable == maskVector)
            #expect(portable.map(\.bitPattern) == vector.map(\.bitPattern))
            for i in 0..<m {
                let expected = query.distanceSquared(to: points[i])
                #expect(vector[i].bitPattern == expected.bitPattern, "slot \(i)")
                #expect((maskVector >> UInt32(i)) & 1 == (i < count && expected <= bound ? 1 : 0), "mask of slot \(i)")
            }
        }
    }

    @Test func branchKeysAreLowerBoundsAndPicksTheNearest() {
        var random = testRandom("branchKeysAreLowerBoundsAndPicksTheNearest")
        for _ in 0..<1_000 {
            // Each slot a box of a few of one leaf's points.
            let (_, points, query) = leaf(&random)
            let count = Int32(random.next() % UInt64(m + 1))
            var lanes = [Double](repeating: 0, count: 6 * m)
            var boxes: [Box3] = []
            for i in 0..<m {
                var box = Box3(point: points[i])
                for _ in 0..<3 { box.expand(points[Int(random.next() % UInt64(m))]) }
                boxes.append(box)
                for k in 0..<6 { lanes[k * m + i] = box.lane(k) }
            }
            let draw = random.next() % 3
            let bound =
                draw == 0 ? Double.infinity : draw == 1 ? random.uniform(0...0.5) : boxes[Int(random.next() % UInt64(m))].distanceSquared(to: query)
            var portable = [Double](repeating: .nan, count: m)
            var vector = [Double](repeating: .nan, count: m)
            let maskPortable = poi_branch_keys_portable(lanes, count, query.x, query.y, query.z, bound, &portable)
            let maskVector = poi_branch_keys(lanes, count, query.x, query.y, query.z, bound, &vector, avx2)
            #expect(maskPortable == maskVector)
            #expect(portable.map(\.bitPattern) == vector.map(\.bitPattern))
            for i in 0..<m {
                if i < count {
                    #expect(vector[i] == boxes[i].distanceSquared(to: query), "slot \(i)")
                    #expect(vector[i] <= query.distanceSquared(to: points[i]), "slot \(i) bounds its own point")
                } else {
                    #expect(vector[i] == .infinity, "slot \(i) past the count")
                }
            }
            // Picks: nearest first (the first slot of equal keys), each once, until none is within the bound.
            var picked: [Int] = []
            var vectorPicks: [Int] = []
            while true {
                let a = Int(poi_pick_portable(&portable, bound))
                let b = Int(poi_pick(&vector, bound, avx2))
                #expect(a == b)
                if a < 0 { break }
                picked.append(a)
                vectorPicks.append(b)
            }
            let expected = (0..<Int(count)).filter { boxes[$0].distanceSquared(to: query) <= bound }
                .sorted { (boxes[$0].distanceSquared(to: query), $0) < (boxes[$1].distanceSquared(to: query), $1) }
            #expect(picked == expected)
        }
    }
}
