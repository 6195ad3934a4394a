import TestSupport
import Testing

@testable import GeoCore

@Suite struct ChinaDatumTests {
    /// Vectors published with the reference implementation wandergis/coordTransform (Tiananmen area).
    @Test func publishedForwardVectors() {
        let gcj = ChinaDatum.wgs84ToGCJ02(latitude: 39.915, longitude: 116.404)
        #expect(abs(gcj.longitude - 116.41024449916938) < 1e-12)
        #expect(abs(gcj.latitude - 39.91640428150164) < 1e-12)
        let bd = ChinaDatum.gcj02ToBD09(latitude: 39.915, longitude: 116.404)
        #expect(abs(bd.longitude - 116.41036949371029) < 1e-12)
        #expect(abs(bd.latitude - 39.92133699351021) < 1e-12)
        // The reference's one-step inverses, which ours refines: within the 1–2 m error they are known for.
        let wgs = ChinaDatum.gcj02ToWGS84(latitude: 39.915, longitude: 116.404)
        #expect(abs(wgs.longitude - 116.39775550083061) < 3e-5 && abs(wgs.latitude - 39.91359571849836) < 3e-5)
        let gcjFromBD = ChinaDatum.bd09ToGCJ02(latitude: 39.915, longitude: 116.404)
        #expect(abs(gcjFromBD.longitude - 116.39762729119315) < 3e-5 && abs(gcjFromBD.latitude - 39.90865673957631) < 3e-5)
    }

    /// The worst round-trip error over random points of China, for a forward and an inverse conversion.
    static func worstRoundTrip(
        _ name: String,
        _ forward: ChinaDatum.Shift,
        _ inverse: ChinaDatum.Shift
    ) -> Double {
        var random = testRandom(name)
        var worst = 0.0
        for _ in 0..<20_000 {
            let lat = random.uniform(18...53)
            let lon = random.uniform(74...134)
            let there = forward(lat, lon)
            let back = inverse(there.latitude, there.longitude)
            worst = max(worst, abs(back.latitude - lat), abs(back.longitude - lon))
        }
        print("worst \(name) round-trip error: \(worst)°")
        return worst
    }

    @Test func roundTripsAreExactToANanodegree() {
        #expect(Self.worstRoundTrip("GCJ-02", ChinaDatum.wgs84ToGCJ02, ChinaDatum.gcj02ToWGS84) < 1e-9)
        #expect(Self.worstRoundTrip("BD-09", ChinaDatum.wgs84ToBD09, ChinaDatum.bd09ToWGS84) < 1e-9)
        #expect(Self.worstRoundTrip("GCJ-02 to BD-09", ChinaDatum.gcj02ToBD09, ChinaDatum.bd09ToGCJ02) < 1e-9)
    }

    @Test func offsetIsAFewHundredMetresInsideChina() {
        let gcj = ChinaDatum.wgs84ToGCJ02(latitude: 31.2304, longitude: 121.4737)
        let shift = GreatCircle.distance(latitude1: 31.2304, longitude1: 121.4737, latitude2: gcj.latitude, longitude2: gcj.longitude)
        #expect(shift > 100 && shift < 1_000)
    }

    @Test func boundaryOfTheOffsetArea() {
        // Inside the rectangle, near each edge: shifted.
        for (lat, lon) in [(0.9, 110.0), (55.7, 110.0), (30.0, 72.1), (30.0, 137.7)] {
            #expect(ChinaDatum.isInChina(latitude: lat, longitude: lon))
            let g = ChinaDatum.wgs84ToGCJ02(latitude: lat, longitude: lon)
            #expect(g.latitude != lat || g.longitude != lon)
        }
        // Outside it: unchanged by every conversion.
        for (lat, lon) in [(0.8, 110.0), (55.9, 110.0), (30.0, 71.9), (30.0, 137.9), (60.17, 24.94), (40.71, -74.0)] {
            #expect(!ChinaDatum.isInChina(latitude: lat, longitude: lon))
            #expect(ChinaDatum.wgs84ToGCJ02(latitude: lat, longitude: lon) == (lat, lon))
            #expect(ChinaDatum.gcj02ToWGS84(latitude: lat, longitude: lon) == (lat, lon))
            #expect(ChinaDatum.wgs84ToBD09(latitude: lat, longitude: lon) == (lat, lon))
            #expect(ChinaDatum.bd09ToWGS84(latitude: lat, longitude: lon) == (lat, lon))
        }
    }
}

extension ChinaDatumTests {
    /// The trigonometric identities of the fast forward formula change nothing that matters.
    @Test func fastForwardMatchesTheReferenceFormula() {
        var random = testRandom("fastForwardMatchesTheReferenceFormula")
        var worst = 0.0
        for _ in 0..<50_000 {
            let lat = random.uniform(0.83...55.8)
            let lon = random.uniform(72.01...137.8)
            let fast = ChinaDatum.gcjOffset(latitude: lat, longitude: lon)
            let reference = ChinaDatum.referenceOffset(latitude: lat, longitude: lon)
            worst = max(worst, abs(fast.latitude - reference.latitude), abs(fast.longitude - reference.longitude))
        }
        print("worst fast/reference difference: \(worst)°")
        #expect(worst < 1e-12)
    }
}
