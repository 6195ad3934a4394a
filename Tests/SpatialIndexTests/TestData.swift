import Foundation
import GeoCore
import TestSupport

@testable import SpatialIndex

enum Layout: String, CaseIterable, Sendable {
    /// Uniform over the sphere (area-uniform latitude), poles and antimeridian included.
    case globe
    /// A few dense clusters, some straddling the antimeridian and one at the North Pole.
    case clustered
    /// Many records sharing a handful of coordinates.
    case duplicates
}

func randomPoints(_ count: Int, layout: Layout, random: inout SplitMix64) -> [IndexedPoint] {
    let centers: [(Double, Double)] = [(60.17, 24.94), (0, 179.95), (-33.9, 151.2), (89.99, 0), (-89.5, -120), (39.9, 116.4)]
    let shared = (0..<7).map { _ in (random.uniform(-90...90), random.uniform(-180...180)) }
    return (0..<count).map { i in
        let lat: Double
        let lon: Double
        switch layout {
        case .globe:
            lat = asin(random.uniform(-1...1)) * 180 / .pi
            lon = random.uniform(-180...180)
        case .clustered:
            let c = centers[Int(random.next() % UInt64(centers.count))]
            let p = GreatCircle.destination(
                from: try! Coordinate(latitude: c.0, longitude: c.1),
                distance: random.uniform(0...30_000) * random.nextUnit(),
                bearing: random.uniform(0...360)
            )
            lat = p.latitude
            lon = p.longitude
        case .duplicates:
            let c = shared[Int(random.next() % UInt64(shared.count))]
            lat = c.0
            lon = c.1
        }
        return IndexedPoint(id: UInt32(i), latitude: lat, longitude: lon)
    }
}

/// A query origin: anywhere, or at the awkward places.
func randomOrigin(_ random: inout SplitMix64, near points: [IndexedPoint]) -> (latitude: Double, longitude: Double) {
    switch random.next() % 6 {
    case 0: return (90, random.uniform(-180...180))
    case 1: return (random.uniform(-60...60), random.nextUnit() < 0.5 ? 180 : -180)
    case 2, 3:
        let p = points[Int(random.next() % UInt64(points.count))]
        return (p.latitude, p.longitude)
    default: return (asin(random.uniform(-1...1)) * 180 / .pi, random.uniform(-180...180))
    }
}

/// Brute force: every live record ranked by (squared chord, id), the order the index promises.
func bruteNearest(_ points: [IndexedPoint], latitude: Double, longitude: Double) -> [Neighbor] {
    let q = Vec3(latitude: latitude, longitude: longitude)
    return points.map { Neighbor(id: $0.id, key: q.distanceSquared(to: Vec3(latitude: $0.latitude, longitude: $0.longitude))) }
        .sorted { $0.key != $1.key ? $0.key < $1.key : $0.id < $1.id }
}

/// Runs `trials` rounds of a layout-parameterized test on `count` points laid out so and the index `build` makes of
/// them, with one generator for the whole test (seeded, and its seed printed under the test's name and layout).
func randomTrials<Index>(
    _ layout: Layout,
    points count: Int,
    trials: Int,
    test: String = #function,
    index build: ([IndexedPoint]) throws -> Index,
    _ trial: (_ round: Int, _ random: inout SplitMix64, _ points: [IndexedPoint], _ index: Index) throws -> Void
) throws {
    var random = testRandom("\(test) \(layout)")
    let points = randomPoints(count, layout: layout, random: &random)
    let index = try build(points)
    for round in 0..<trials { try trial(round, &random, points, index) }
}

/// A box around an origin near the points, its sides up to `halves` degrees (one drawn) each way from it; it may
/// cross the antimeridian and reach a pole.
func randomBox(_ random: inout SplitMix64, near points: [IndexedPoint], halves: [Double]) -> BoundingBox {
    let origin = randomOrigin(&random, near: points)
    let half = halves[Int(random.next() % UInt64(halves.count))]
    return BoundingBox(
        uncheckedWest: Coordinate.wrapLongitude(origin.longitude - half * random.nextUnit()),
        south: max(-90, origin.latitude - half * random.nextUnit()),
        east: Coordinate.wrapLongitude(origin.longitude + half * random.nextUnit()),
        north: min(90, origin.latitude + half * random.nextUnit())
    )
}
