import Foundation
import GeoCore
import TestSupport
import Testing

@testable import SpatialIndex

@Suite struct RTreeQueryTests {
    /// A bulk-loaded tree whose invariants hold.
    func checkedTree(_ points: [IndexedPoint]) throws -> RTree {
        let tree = RTree(bulkLoading: points)
        try tree.checkInvariants()
        return tree
    }

    @Test(arguments: Layout.allCases)
    func nearestMatchesBruteForce(_ layout: Layout) throws {
        try randomTrials(layout, points: 10_000, trials: 150, index: checkedTree) { _, random, points, tree in
            let origin = randomOrigin(&random, near: points)
            let k = [1, 10, 100][Int(random.next() % 3)]
            let expected = Array(bruteNearest(points, latitude: origin.latitude, longitude: origin.longitude).prefix(k))
            let got = tree.nearest(k: k, latitude: origin.latitude, longitude: origin.longitude)
            #expect(got == expected, "k=\(k) origin \(origin)")
            // Reported distances agree with the haversine formula.
            for n in got {
                let p = points[Int(n.id)]
                let haversine = GreatCircle.distance(
                    latitude1: origin.latitude,
                    longitude1: origin.longitude,
                    latitude2: p.latitude,
                    longitude2: p.longitude
                )
                #expect(abs(n.distance - haversine) < 1e-3, "distance of \(n.id)")
            }
        }
    }

    /// The one nearest, with and without a distance limit, is brute force's first (and nil beyond the limit).
    @Test(arguments: Layout.allCases)
    func nearestOneMatchesBruteForce(_ layout: Layout) throws {
        try randomTrials(layout, points: 5_000, trials: 200, index: checkedTree) { _, random, points, tree in
            let origin = randomOrigin(&random, near: points)
            let limit: Double? = random.next() % 2 == 0 ? nil : Double(random.next() % 200_000)
            var expected = bruteNearest(points, latitude: origin.latitude, longitude: origin.longitude).first
            if let limit, let nearest = expected, nearest.key > ChordDistance.key(forMetres: limit) { expected = nil }
            let got = tree.nearestOne(latitude: origin.latitude, longitude: origin.longitude, maxDistance: limit)
            #expect(got == expected, "origin \(origin), limit \(limit.map { "\($0) m" } ?? "none")")
            #expect(got == tree.nearest(k: 1, latitude: origin.latitude, longitude: origin.longitude, maxDistance: limit).first)
        }
    }

    @Test func nearestAcrossTheAntimeridianAndAtThePole() throws {
        let points = [
            IndexedPoint(id: 0, latitude: 0, longitude: 179.99),
            IndexedPoint(id: 1, latitude: 0, longitude: -179.99),
            IndexedPoint(id: 2, latitude: 0, longitude: 170),
            IndexedPoint(id: 3, latitude: 89.9, longitude: 0),
            IndexedPoint(id: 4, latitude: 89.9, longitude: 90),
            IndexedPoint(id: 5, latitude: 89.9, longitude: 180),
            IndexedPoint(id: 6, latitude: 89.9, longitude: -90),
        ]
        let tree = RTree(bulkLoading: points)
        let near = tree.nearest(k: 2, latitude: 0, longitude: -179.995)
        #expect(near.map(\.id) == [1, 0])
        #expect(abs(near[1].distance - 0.015 * .pi / 180 * GreatCircle.earthRadius) < 1e-3)
        let pole = tree.nearest(k: 4, latitude: 90, longitude: 0)
        #expect(Set(pole.map(\.id)) == [3, 4, 5, 6])
    }

    @Test(arguments: Layout.allCases)
    func filteredWalkResumesFromCursors(_ layout: Layout) throws {
        try randomTrials(layout, points: 5_000, trials: 50, index: RTree.init(bulkLoading:)) { _, random, points, tree in
            let origin = randomOrigin(&random, near: points)
            let modulus = UInt32(2 + random.next() % 5)
            let filter: (UInt32) -> Bool = { $0 % modulus == 0 }
            let expected = bruteNearest(points, latitude: origin.latitude, longitude: origin.longitude).filter { filter($0.id) }.prefix(60)
            var pages: [Neighbor] = []
            var cursor: NearestCursor?
            while pages.count < 60 {
                let page = tree.nearest(k: 7, latitude: origin.latitude, longitude: origin.longitude, after: cursor, filter: filter)
                if page.isEmpty { break }
                pages += page
                cursor = page.last!.cursor
            }
            #expect(Array(pages.prefix(60)) == Array(expected))
        }
    }

    @Test(arguments: Layout.allCases)
    func radiusMatchesBruteForce(_ layout: Layout) throws {
        try randomTrials(layout, points: 10_000, trials: 150, index: RTree.init(bulkLoading:)) { _, random, points, tree in
            let origin = randomOrigin(&random, near: points)
            let radius = [100.0, 1_000, 20_000, 500_000, 3_000_000, 25_000_000][Int(random.next() % 6)]
            let key = ChordDistance.key(forMetres: radius)
            let expected = bruteNearest(points, latitude: origin.latitude, longitude: origin.longitude).filter { $0.key <= key }
            let got = tree.within(radius: radius, latitude: origin.latitude, longitude: origin.longitude)
            #expect(got == expected, "radius \(radius) origin \(origin)")
            // And by the haversine formula, away from the rim.
            let gotIDs = Set(got.map(\.id))
            for p in points {
                let d = GreatCircle.distance(latitude1: origin.latitude, longitude1: origin.longitude, latitude2: p.latitude, longitude2: p.longitude)
                if d < radius * (1 - 1e-9) - 1e-6 { #expect(gotIDs.contains(p.id)) }
                if d > radius * (1 + 1e-9) + 1e-6 { #expect(!gotIDs.contains(p.id)) }
            }
        }
    }

    @Test(arguments: Layout.allCases)
    func boxSearchMatchesBruteForce(_ layout: Layout) throws {
        try randomTrials(layout, points: 10_000, trials: 200, index: RTree.init(bulkLoading:)) { round, random, points, tree in
            let box: BoundingBox
            if round % 10 == 0 {
                // Reaching a pole, or crossing the antimeridian, or both.
                box = BoundingBox(
                    uncheckedWest: random.uniform(90...180),
                    south: random.uniform(60...89),
                    east: random.uniform(-180 ... -90),
                    north: 90
                )
            } else {
                box = randomBox(&random, near: points, halves: [0.01, 0.5, 5, 40])
            }
            let expected = Set(points.filter { box.contains(latitude: $0.latitude, longitude: $0.longitude) }.map(\.id))
            let got = tree.search(box)
            #expect(got.count == Set(got).count, "duplicates for \(box)")
            #expect(Set(got) == expected, "box \(box)")
        }
    }

    @Test func boxEdgesAreInclusive() throws {
        let points = (0..<100).map { IndexedPoint(id: UInt32($0), latitude: Double($0 / 10), longitude: Double($0 % 10)) }
        let tree = RTree(bulkLoading: points)
        let got = Set(tree.search(try BoundingBox(west: 2, south: 3, east: 5, north: 6)))
        let expected = Set(points.filter { $0.latitude >= 3 && $0.latitude <= 6 && $0.longitude >= 2 && $0.longitude <= 5 }.map(\.id))
        #expect(got == expected && got.count == 16)
    }

    @Test(arguments: Layout.allCases)
    func polygonSearchMatchesBruteForce(_ layout: Layout) throws {
        var random = testRandom("polygonSearchMatchesBruteForce(\(layout))")
        let points = randomPoints(10_000, layout: layout, random: &random)
        let tree = RTree(bulkLoading: points)
        var tested = 0
        while tested < 100 {
            let origin = randomOrigin(&random, near: points)
            guard abs(origin.latitude) < 80 else { continue }
            let n = 3 + Int(random.next() % 8)
            let scale = [0.05, 1, 10][Int(random.next() % 3)]
            let angles = (0..<n).map { _ in random.uniform(0...(2 * .pi)) }.sorted()
            let vertices = angles.map { a in
                Coordinate(
                    uncheckedLatitude: origin.latitude + scale * random.uniform(0.2...1) * sin(a),
                    longitude: origin.longitude + scale * random.uniform(0.2...1) * cos(a)
                )
            }
            guard let polygon = try? Polygon(vertices: vertices) else { continue }
            tested += 1
            let expected = Set(points.filter { polygon.contains(latitude: $0.latitude, longitude: $0.longitude) }.map(\.id))
            var got: [UInt32] = []
            tree.search(polygon) { id, _, _ in
                got.append(id)
                return true
            }
            #expect(got.count == Set(got).count)
            #expect(Set(got) == expected, "polygon \(polygon.vertices)")
        }
    }

    @Test func emptyTreeAnswersNothing() throws {
        let tree = RTree()
        #expect(tree.nearest(k: 5, latitude: 0, longitude: 0).isEmpty)
        #expect(tree.search(.world).isEmpty)
        try tree.checkInvariants()
    }
}
