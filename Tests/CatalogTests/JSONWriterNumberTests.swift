import BundledData
import Foundation
import GeoCore
import TestSupport
import Testing

/// JSON numbers are Swift's shortest round-trip form (`description`); the writer's fixed-point path for decimals of
/// up to 7 fractional digits must print exactly what `description` prints. Oracle: `description` itself, on
/// coordinates, rounded distances and scores, and on random doubles of every magnitude.
@Suite struct JSONWriterNumberTests {
    static func written(_ value: Double) -> String {
        var json = JSONWriter()
        json.number(value)
        return String(decoding: json.buffer, as: UTF8.self)
    }

    /// What the writer must print: `description`, except integers below 1e15 without ".0" and non-finite values as
    /// null.
    static func expected(_ value: Double) -> String {
        if !value.isFinite { return "null" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }

    @Test func decimalsOfUpToSevenPlacesPrintAsDescriptionDoes() {
        let seed = testSeed("decimalsOfUpToSevenPlacesPrintAsDescriptionDoes")
        var random = SplitMix64(seed: seed)
        for _ in 0..<200_000 {
            // A decimal with 1 to 7 fractional digits and up to 9 integer digits, as its nearest double.
            let places = Int(random.next() % 7) + 1
            let integerDigits = Int(random.next() % 10)
            var scale = 1.0
            for _ in 0..<places { scale *= 10 }
            var range: UInt64 = 1
            for _ in 0..<integerDigits { range *= 10 }
            let units = Int64(random.next() % (range * UInt64(scale)))
            let value = (random.next() & 1 == 0 ? 1.0 : -1.0) * Double(units) / scale
            #expect(Self.written(value) == Self.expected(value), "SEED=\(seed) value \(value)")
        }
    }

    @Test func arbitraryDoublesPrintAsDescriptionDoes() {
        let seed = testSeed("arbitraryDoublesPrintAsDescriptionDoes")
        var random = SplitMix64(seed: seed)
        for _ in 0..<200_000 {
            let value = Double(bitPattern: random.next())
            #expect(Self.written(value) == Self.expected(value), "SEED=\(seed) bits \(value.bitPattern)")
            // Near the fast path's bounds and of its shape: a coordinate's neighbours one ulp away.
            let coordinate = Double(Int64(random.next() % 3_600_000_000)) / 1e7 - 180
            for near in [coordinate, coordinate.nextUp, coordinate.nextDown] {
                #expect(Self.written(near) == Self.expected(near), "SEED=\(seed) value \(near)")
            }
        }
    }

    @Test func boundsAndRounding() {
        let cases: [Double] = [
            1e-4, -1e-4, 1e-4.nextDown, 0.00012, 0.001, 0.1, 0.5, 896.2, 143.5, 34.124121, -118.347943, 99_999_999.999_999_9,
            1e8 - 0.5, 1e8 + 0.5, 1e8.nextDown, 0.1 + 0.2, 1.0 / 3, 2.675, 1e15 + 0.5, 4.35, 0.000_100_1, 12.345_678_9,
        ]
        for value in cases { #expect(Self.written(value) == Self.expected(value), "value \(value)") }
    }
}
