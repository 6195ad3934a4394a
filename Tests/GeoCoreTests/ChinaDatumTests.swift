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

    /// A box's image in GCJ-02 and BD-09, against brute force: every point of the box (drawn inside and on its
    /// edges, and a walk round its boundary ten times finer than the function's) lands in the converted box; away from
    /// the edges of the area the offsets apply to, each side lies within its 1e-4° margin (and 1e-6° more) of where
    /// that walk reaches. Boxes drawn over China and across its edges, from a city block to the whole country, and
    /// boxes across its eastern edge, where BD-09's offset stops in a band ~0.005° wide (a seed found it).
    @Test func aBoxImageHoldsEveryConvertedPointAndNoMore() {
        var random = testRandom("aBoxImageHoldsEveryConvertedPointAndNoMore")
        for round in 0..<80 {
            let datum: CRS.Geographic = round % 2 == 0 ? .gcj02 : .bd09
            let width = [0.01, 0.3, 2.0, 40.0][round % 4]
            let west = round >= 60 ? 137.8347 - random.uniform(0...width) : random.uniform(60...(140 - width))
            let south = random.uniform(10...(55 - width / 2))
            let box = BoundingBox(uncheckedWest: west, south: south, east: west + width, north: south + width / 2)
            let nearAnEdge =
                [72.004, 137.8347].contains { (box.west - 0.05...box.east + 0.05).contains($0) }
                || [0.8293, 55.8271].contains { (box.south - 0.05...box.north + 0.05).contains($0) }
            let image = datum.fromWGS84(box)
            for _ in 0..<2_000 {
                let edge = random.next() % 3
                let lat = edge == 1 ? (random.next() % 2 == 0 ? box.south : box.north) : random.uniform(box.south...box.north)
                let lon = edge == 2 ? (random.next() % 2 == 0 ? box.west : box.east) : random.uniform(box.west...box.east)
                let p = datum.fromWGS84(latitude: lat, longitude: lon)
                let inside =
                    p.longitude >= image.west - 1e-9 && p.longitude <= image.east + 1e-9 && p.latitude >= image.south - 1e-9
                    && p.latitude <= image.north + 1e-9
                #expect(inside, "round \(round) \(datum): (\(lat), \(lon)) → \(p) outside \(image)")
            }
            // The extremes of a finer walk round the boundary.
            var (w, s, e, n) = (Double.infinity, Double.infinity, -Double.infinity, -Double.infinity)
            let steps = min(40_000, max(100, Int(width / 0.001)))
            for i in 0...steps {
                let t = Double(i) / Double(steps)
                for (lat, lon) in [
                    (box.south, box.west + t * width), (box.north, box.west + t * width),
                    (box.south + t * width / 2, box.west), (box.south + t * width / 2, box.east),
                ] {
                    let p = datum.fromWGS84(latitude: lat, longitude: lon)
                    (w, e, s, n) = (min(w, p.longitude), max(e, p.longitude), min(s, p.latitude), max(n, p.latitude))
                }
            }
            let margins = [w - image.west, image.east - e, s - image.south, image.north - n]
            #expect(margins.allSatisfy { $0 >= 0 }, "round \(round) \(datum): \(image) does not hold the finer walk's (\(w), \(s), \(e), \(n))")
            if !nearAnEdge {
                #expect(
                    margins.allSatisfy { $0 <= 1e-4 + 1e-6 },
                    "round \(round) \(datum): \(image) against the finer walk's (\(w), \(s), \(e), \(n))"
                )
            }
            #expect(CRS.Geographic.wgs84.fromWGS84(box) == box)
        }
    }
}
