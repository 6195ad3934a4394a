import Foundation
import GeoCore

/// The seed of a randomized test: `SEED` from the environment to replay a failure, otherwise a fresh one.
/// Always printed, so a failing run says how to reproduce it.
func testRandom(_ name: String) -> SplitMix64 {
    let seed = ProcessInfo.processInfo.environment["SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
    print("\(name): SEED=\(seed)")
    return SplitMix64(seed: seed)
}
