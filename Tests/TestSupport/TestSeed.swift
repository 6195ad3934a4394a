import Foundation
import GeoCore

/// The seed of a randomized test: `SEED` from the environment to replay a failure, otherwise a fresh one. Always
/// printed with the test's name, so a failing run says how to reproduce it (`SEED=<seed> swift test --filter …`).
public func testSeed(_ name: String) -> UInt64 {
    let seed = ProcessInfo.processInfo.environment["SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
    print("\(name): SEED=\(seed)")
    return seed
}

/// A generator seeded by `testSeed(name)`.
public func testRandom(_ name: String) -> SplitMix64 { SplitMix64(seed: testSeed(name)) }

extension SplitMix64 {
    /// A box with its south edge drawn from `south`, any west edge, and `height` and `width` degrees drawn from their
    /// ranges (clipped at the North Pole; it crosses the antimeridian when it runs past it).
    public mutating func box(south: ClosedRange<Double>, height: ClosedRange<Double>, width: ClosedRange<Double>) -> BoundingBox {
        let southEdge = uniform(south)
        let north = min(90, southEdge + uniform(height))
        let west = uniform(-180...180)
        let east = Coordinate.wrapLongitude(west + uniform(width))
        return BoundingBox(uncheckedWest: west, south: southEdge, east: east, north: north)
    }
}
