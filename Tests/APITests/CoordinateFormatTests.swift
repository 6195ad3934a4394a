import Foundation
import GeoCore
import TestSupport
import Testing

@testable import API

/// AMap's coordinates with six decimals, written by hand, against Foundation's `%.6f` (which rounds the binary value
/// exactly, where the hand-made one rounds the scaled value half away from zero): equal on drawn values whose
/// seventh decimal is not a tie, and on the edges. Replay by the seed.
@Suite struct CoordinateFormatTests {
    @Test func sixDecimalsAsPrintfWritesThem() {
        let seed: UInt64 = 2026_1128
        print("sixDecimalsAsPrintfWritesThem seed \(seed)")
        var random = SplitMix64(seed: seed)
        var values: [Double] = [0, -0.0, 1, -1, 0.000001, -0.000001, 0.0000004, -0.0000004, 179.999999, -180, 90, 116.397128, 39.916527]
        for _ in 0..<20_000 { values.append(random.uniform(-180...180)) }
        for _ in 0..<2_000 { values.append(Double(Int64(random.next() % 360_000_000) - 180_000_000) / 1_000_000) }
        for value in values {
            let scaled = abs(value) * 1_000_000
            // A tie at the seventh decimal is where the two roundings may differ; drawn doubles almost never are one.
            guard abs(scaled - scaled.rounded(.down) - 0.5) > 1e-6 else { continue }
            // A negative value that rounds to zero is written without its sign (AMap writes no "-0.000000").
            let printf = String(format: "%.6f", value)
            #expect(AMapAdapter.fixed6(value) == (printf == "-0.000000" ? "0.000000" : printf), "\(value) (seed \(seed))")
        }
    }
}
