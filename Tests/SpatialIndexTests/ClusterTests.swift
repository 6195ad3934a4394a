import Foundation
import GeoCore
import TestSupport
import Testing

@testable import SpatialIndex

@Suite struct ClusterTests {
    func bruteClusters(_ points: [IndexedPoint], _ box: BoundingBox, _ precision: Int) -> [UInt64: (count: Int, lat: Double, lon: Double)] {
        var cells: [UInt64: (count: Int, lat: Double, lon: Double)] = [:]
        for p in points where box.contains(latitude: p.latitude, longitude: p.longitude) {
            let cell = try! Geohash(latitude: p.latitude, longitude: p.longitude, precision: precision).bits
            cells[cell, default: (0, 0, 0)].count += 1
            cells[cell]!.lat += p.latitude
            cells[cell]!.lon += p.longitude
        }
        return cells
    }

    func compare(_ index: SpatialIndex, _ points: [IndexedPoint], _ box: BoundingBox, _ precision: Int) throws {
        let got = try index.clusters(in: box, precision: precision)
        let expected = bruteClusters(points, box, precision)
        #expect(got.count == expected.count, "cells for \(box) p\(precision)")
        let estimate = try index.estimatedCount(in: box, precision: precision)
        #expect(estimate >= 0 && estimate <= Double(index.count), "estimate \(estimate) for \(box) p\(precision)")
        #expect(got.map(\.geohash.bits) == got.map(\.geohash.bits).sorted())
        for cluster in got {
            guard let e = expected[cluster.geohash.bits] else {
                Issue.record("unexpected cell \(cluster.geohash)")
                continue
            }
            #expect(cluster.count == e.count, "count of \(cluster.geohash)")
            #expect(abs(cluster.latitude - e.lat / Double(e.count)) < 1e-6 && abs(cluster.longitude - e.lon / Double(e.count)) < 1e-6)
            #expect(
                cluster.geohash.bounds.contains(latitude: cluster.latitude, longitude: cluster.longitude)
                    || cluster.geohash.bounds.minimumDistance(from: Coordinate(uncheckedLatitude: cluster.latitude, longitude: cluster.longitude))
                        < 0.05
            )
        }
    }

    @Test(arguments: Layout.allCases)
    func clustersMatchBruteForceGrouping(_ layout: Layout) throws {
        try randomTrials(layout, points: 10_000, trials: 121, index: SpatialIndex.init(bulkLoading:)) { round, random, points, index in
            // The last round asks for the whole world.
            let box = round == 120 ? .world : randomBox(&random, near: points, halves: [0.05, 1, 10, 60])
            try compare(index, points, box, round == 120 ? 2 : 1 + Int(random.next() % 7))
        }
    }

    /// The planner's estimate is exact for a box that is one geohash cell: every record of the cell, none of its
    /// neighbours (brute force by each point's own geohash).
    @Test(arguments: Layout.allCases)
    func estimatedCountIsExactForWholeCells(_ layout: Layout) throws {
        var random = testRandom("estimatedCountIsExactForWholeCells(\(layout))")
        var points = randomPoints(10_000, layout: layout, random: &random)
        var index = SpatialIndex(bulkLoading: points)
        for round in 0..<200 {
            if round == 100 {  // live inserts go to the grid's delta, which the estimate counts too
                for k in 0..<500 {
                    let other = points[Int(random.next() % UInt64(points.count))]
                    let point = IndexedPoint(id: UInt32(20_000 + k), latitude: other.latitude, longitude: other.longitude)
                    points.append(point)
                    index.insert(point)
                }
            }
            let precision = 2 + Int(random.next() % 6)
            let origin = points[Int(random.next() % UInt64(points.count))]
            let cell = try Geohash(latitude: origin.latitude, longitude: origin.longitude, precision: precision)
            let expected = try points.filter { try Geohash(latitude: $0.latitude, longitude: $0.longitude, precision: precision).bits == cell.bits }
                .count
            #expect(try index.estimatedCount(in: cell.bounds, precision: precision) == Double(expected), "cell \(cell)")
        }
    }

    @Test func clustersFollowLiveWrites() throws {
        var random = testRandom("clustersFollowLiveWrites")
        var points = randomPoints(6_000, layout: .clustered, random: &random)
        var index = SpatialIndex(bulkLoading: points)
        // Enough writes to cross a compaction, with checks before and after.
        for round in 0..<10_000 {
            let i = Int(random.next() % UInt64(points.count))
            let other = points[Int(random.next() % UInt64(points.count))]
            points[i] = IndexedPoint(id: points[i].id, latitude: other.latitude + random.uniform(-0.01...0.01) / 2, longitude: other.longitude)
            points[i].latitude = max(-90, min(90, points[i].latitude))
            index.insert(points[i])
            if round % 2_500 == 0 {
                try index.checkInvariants()
                for _ in 0..<20 {
                    try compare(index, points, randomBox(&random, near: points, halves: [0.05, 1, 10, 60]), 1 + Int(random.next() % 6))
                }
            }
        }
        let removedIDs = Set(points.prefix(1_000).map(\.id))
        for id in removedIDs { index.remove(id) }
        let remaining = points.filter { !removedIDs.contains($0.id) }
        try index.checkInvariants()
        for _ in 0..<30 { try compare(index, remaining, randomBox(&random, near: remaining, halves: [0.05, 1, 10, 60]), 1 + Int(random.next() % 6)) }
    }

    @Test func rejectsBadPrecision() {
        let index = SpatialIndex()
        #expect(throws: GeoError.invalidGeohashPrecision(0)) { try index.clusters(in: .world, precision: 0) }
        #expect(throws: GeoError.invalidGeohashPrecision(13)) { try index.clusters(in: .world, precision: 13) }
    }
}
