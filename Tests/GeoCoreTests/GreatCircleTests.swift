import GeoCore
import TestSupport
import Testing

@Suite struct GreatCircleTests {
    @Test(arguments: GeodFixtures.pairs.map { $0 })
    func distanceMatchesGeodOnTheSphere(
        _ pair: (String, Double, Double, String, Double, Double, ellipsoid: Double, sphere: Double)
    ) throws {
        let a = try Coordinate(latitude: pair.1, longitude: pair.2)
        let b = try Coordinate(latitude: pair.4, longitude: pair.5)
        let d = GreatCircle.distance(a, b)
        // Same model as geod +R=6371008.8: agreement to a millimetre (the fixture's rounding).
        #expect(abs(d - pair.sphere) < 0.002, "\(pair.0)–\(pair.3): \(d) vs \(pair.sphere)")
        // Against the WGS-84 ellipsoid the mean sphere is off by at most ~0.5 % (flattening is 0.34 %).
        #expect(abs(d - pair.ellipsoid) / pair.ellipsoid < 0.005, "\(pair.0)–\(pair.3) vs ellipsoid")
        #expect(GreatCircle.distance(b, a) == d)
    }

    @Test func distanceAcrossTheAntimeridianIsShort() throws {
        let a = try Coordinate(latitude: 0, longitude: 179.99)
        let b = try Coordinate(latitude: 0, longitude: -179.99)
        #expect(abs(GreatCircle.distance(a, b) - 0.02 * .pi / 180 * GreatCircle.earthRadius) < 1e-6)
    }

    @Test func allPointsAtAPoleCoincide() throws {
        let a = try Coordinate(latitude: 90, longitude: 0)
        let b = try Coordinate(latitude: 90, longitude: 123)
        #expect(GreatCircle.distance(a, b) < 1e-6)
    }

    @Test func bearingOfCardinalDirections() throws {
        let origin = try Coordinate(latitude: 0, longitude: 0)
        #expect(abs(GreatCircle.initialBearing(from: origin, to: try Coordinate(latitude: 10, longitude: 0)) - 0) < 1e-9)
        #expect(abs(GreatCircle.initialBearing(from: origin, to: try Coordinate(latitude: 0, longitude: 10)) - 90) < 1e-9)
        #expect(abs(GreatCircle.initialBearing(from: origin, to: try Coordinate(latitude: -10, longitude: 0)) - 180) < 1e-9)
        #expect(abs(GreatCircle.initialBearing(from: origin, to: try Coordinate(latitude: 0, longitude: -10)) - 270) < 1e-9)
    }

    @Test func destinationRoundTripsWithDistanceAndBearing() throws {
        var random = testRandom("destinationRoundTrips")
        for _ in 0..<2_000 {
            let start = try Coordinate(latitude: random.uniform(-89...89), longitude: random.uniform(-180...180))
            let distance = random.uniform(1...5_000_000)
            let bearing = random.uniform(0...359.999)
            let end = GreatCircle.destination(from: start, distance: distance, bearing: bearing)
            #expect(abs(GreatCircle.distance(start, end) - distance) < 1e-3)
            #expect((-180.0...180.0).contains(end.longitude))
        }
    }

    @Test func destinationAcrossThePoleAndTheAntimeridian() throws {
        let nearPole = try Coordinate(latitude: 89, longitude: 10)
        let over = GreatCircle.destination(from: nearPole, distance: 2 * .pi / 180 * GreatCircle.earthRadius, bearing: 0)
        #expect(abs(over.latitude - 89) < 1e-6)
        #expect(abs(over.longitude - (-170)) < 1e-6)
        let east = GreatCircle.destination(from: try Coordinate(latitude: 0, longitude: 179.5), distance: 111_195, bearing: 90)
        #expect(abs(east.longitude - (-179.5)) < 1e-3)
    }
}
