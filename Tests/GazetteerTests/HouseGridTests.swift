import GeoCore
import SnapshotFile
import TestSupport
import Testing

@testable import Gazetteer

/// The house grid's nearest house within a radius, against brute force over every house: in a town, across the
/// antimeridian, and next to a pole, where a radius spans many columns.
@Suite struct HouseGridTests {
    @Test func theNearestHouseWithinARadiusIsTheBruteForceOne() {
        var random = testRandom("theNearestHouseWithinARadiusIsTheBruteForceOne")
        let centres = [(60.17, 24.94), (-16.5, 179.999), (-16.5, -179.999), (89.9995, 10.0), (-89.9993, -150.0), (0.0, 0.0)]
        var latitudes: [Double] = []
        var longitudes: [Double] = []
        for (latitude, longitude) in centres {
            for _ in 0..<400 {
                latitudes.append(max(-90, min(90, latitude + random.uniform(-0.002...0.002))))
                var lon = longitude + random.uniform(-0.004...0.004)
                if lon > 180 { lon -= 360 }
                if lon < -180 { lon += 360 }
                longitudes.append(lon)
            }
        }
        // Two houses at one spot: the lower index answers.
        latitudes.append(latitudes[7])
        longitudes.append(longitudes[7])
        let grid = HouseGrid(latitudes: FlatArray(latitudes), longitudes: FlatArray(longitudes))
        #expect(grid.isConsistent(houseCount: latitudes.count))
        var found = 0
        for round in 0..<3_000 {
            let (latitude, longitude) = centres[round % centres.count]
            var lon = longitude + random.uniform(-0.005...0.005)
            if lon > 180 { lon -= 360 }
            if lon < -180 { lon += 360 }
            let point = Coordinate2(max(-90, min(90, latitude + random.uniform(-0.0025...0.0025))), lon)
            let radius = round % 3 == 0 ? random.uniform(1...400) : 60
            var expected: (house: Int, distance: Double)?
            for i in latitudes.indices {
                let d = GreatCircle.distance(
                    latitude1: point.latitude,
                    longitude1: point.longitude,
                    latitude2: latitudes[i],
                    longitude2: longitudes[i]
                )
                if d <= radius && d < expected?.distance ?? .infinity { expected = (i, d) }
            }
            let answer = grid.nearest(to: point, within: radius, latitudes: FlatArray(latitudes), longitudes: FlatArray(longitudes))
            #expect(answer?.house == expected?.house && answer?.distance == expected?.distance, "\(point) within \(radius) m")
            found += answer == nil ? 0 : 1
        }
        #expect(found > 1_000, "the points reach houses (\(found)), not only empty circles")
        let twin = grid.nearest(
            to: Coordinate2(latitudes[7], longitudes[7]),
            within: 1,
            latitudes: FlatArray(latitudes),
            longitudes: FlatArray(longitudes)
        )
        #expect(twin?.house == 7)
    }
}
