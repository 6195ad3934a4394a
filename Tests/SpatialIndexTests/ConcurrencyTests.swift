import Foundation
import GeoCore
import Testing

@testable import SpatialIndex

@Suite struct ConcurrencyTests {
    /// Readers run while a writer moves records back and forth between two places. Every record is always at one
    /// of its two positions, so each reader's answer must be consistent with some whole state: the count of records
    /// never changes and every kNN result is sorted and complete. A half-applied move would break invariants or
    /// counts.
    @Test func readersNeverSeeAHalfUpdatedIndex() async throws {
        var random = testRandom("readersNeverSeeAHalfUpdatedIndex")
        let points = randomPoints(20_000, layout: .clustered, random: &random)
        let shared = SharedSpatialIndex(SpatialIndex(bulkLoading: points))
        let seed = random.next()
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                var random = SplitMix64(seed: seed)
                for _ in 0..<4_000 {
                    let p = points[Int(random.next() % UInt64(points.count))]
                    let moved = IndexedPoint(id: p.id, latitude: -p.latitude, longitude: p.longitude)
                    shared.write { $0.insert(random.nextUnit() < 0.5 ? moved : p) }
                }
                return 0
            }
            for reader in 0..<4 {
                group.addTask {
                    var random = SplitMix64(seed: seed &+ UInt64(reader) &+ 1)
                    var checks = 0
                    for _ in 0..<400 {
                        let p = points[Int(random.next() % UInt64(points.count))]
                        try shared.read { index in
                            #expect(index.count == points.count)
                            let near = index.tree.nearest(k: 20, latitude: p.latitude, longitude: p.longitude)
                            #expect(near.count == 20)
                            #expect(zip(near, near.dropFirst()).allSatisfy { $0.key < $1.key || ($0.key == $1.key && $0.id < $1.id) })
                            let clusters = try index.clusters(in: .world, precision: 1)
                            #expect(clusters.reduce(0) { $0 + $1.count } == points.count)
                        }
                        checks += 1
                    }
                    return checks
                }
            }
            var total = 0
            for try await checks in group { total += checks }
            #expect(total == 1_600)
        }
        try shared.read { try $0.checkInvariants() }
    }
}
