import GeoCore
import Testing
@testable import Gazetteer

@Suite struct ReverseGeocodingTests {
    @Test func helsinkiCentre() throws {
        let result = GazetteerFixture.shared.reverse(try Coordinate(latitude: 60.1699, longitude: 24.9384))
        #expect(result.place?.id == "geonames:658225")
        #expect(result.country == "FI")
        #expect(result.countryName == "Finland")
        #expect(result.division == nil)
        #expect((result.place?.distance ?? .infinity) < 2_000)
    }

    @Test func zhongguancunIsInHaidian() throws {
        // Zhongguancun, WGS-84.
        let result = GazetteerFixture.shared.reverse(try Coordinate(latitude: 39.9836, longitude: 116.3164))
        #expect(result.country == "CN")
        let division = try #require(result.division)
        #expect(division.adcode == "110108")
        #expect(division.province == "北京市")
        #expect(division.district == "海淀区")
    }

    @Test func knownPlacesReverseToThemselves() throws {
        for (lat, lon, id) in [(40.71427, -74.00597, "geonames:5128581"), (-33.86785, 151.20732, "geonames:2147714"), (35.6895, 139.69171, "geonames:1850147")] {
            let result = GazetteerFixture.shared.reverse(try Coordinate(latitude: lat, longitude: lon))
            #expect(result.place?.id == id)
            #expect((result.place?.distance ?? .infinity) < 1)
        }
    }

    @Test func middleOfTheOceanStillAnswersWithDistance() throws {
        let result = GazetteerFixture.shared.reverse(try Coordinate(latitude: -48.8767, longitude: -123.3933))  // Point Nemo
        let place = try #require(result.place)
        #expect((place.distance ?? 0) > 1_000_000)
    }

    /// Reverse geocoding is exact nearest-neighbour: compare with brute force over every place.
    @Test func nearestPlaceMatchesBruteForce() throws {
        let gazetteer = GazetteerFixture.shared
        var random = SplitMix64(seed: 11)
        for _ in 0..<20 {
            let point = try Coordinate(latitude: random.uniform(-60...70), longitude: random.uniform(-180...180))
            let best = gazetteer.places.indices.min {
                GreatCircle.distance(point, Coordinate(uncheckedLatitude: gazetteer.places[$0].latitude, longitude: gazetteer.places[$0].longitude))
                    < GreatCircle.distance(point, Coordinate(uncheckedLatitude: gazetteer.places[$1].latitude, longitude: gazetteer.places[$1].longitude))
            }!
            #expect(gazetteer.reverse(point).place?.id == "geonames:\(gazetteer.places[best].id)")
        }
    }
}
