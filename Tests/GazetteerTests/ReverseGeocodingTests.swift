import GeoCore
import TestSupport
import Testing

@testable import Gazetteer

@Suite struct ReverseGeocodingTests {
    @Test func helsinkiCentre() throws {
        let result = BundledGazetteer.shared.reverse(try Coordinate(latitude: 60.1699, longitude: 24.9384))
        #expect(result.place?.id == "geonames:658225")
        #expect(result.country == "FI")
        #expect(result.countryName == "Finland")
        #expect(result.division == nil)
        #expect((result.place?.distance ?? .infinity) < 2_000)
    }

    @Test func zhongguancunIsInHaidian() throws {
        // Zhongguancun, WGS-84.
        let result = BundledGazetteer.shared.reverse(try Coordinate(latitude: 39.9836, longitude: 116.3164))
        #expect(result.country == "CN")
        let division = try #require(result.division)
        #expect(division.adcode == "110108")
        #expect(division.province == "北京市")
        #expect(division.district == "海淀区")
    }

    @Test func knownPlacesReverseToThemselves() throws {
        for (lat, lon, id) in [
            (40.71427, -74.00597, "geonames:5128581"), (-33.86785, 151.20732, "geonames:2147714"), (35.6895, 139.69171, "geonames:1850147"),
        ] {
            let result = BundledGazetteer.shared.reverse(try Coordinate(latitude: lat, longitude: lon))
            #expect(result.place?.id == id)
            #expect((result.place?.distance ?? .infinity) < 1)
        }
    }

    @Test func middleOfTheOceanStillAnswersWithDistance() throws {
        let result = BundledGazetteer.shared.reverse(try Coordinate(latitude: -48.8767, longitude: -123.3933))  // Point Nemo
        let place = try #require(result.place)
        #expect((place.distance ?? 0) > 1_000_000)
        #expect(result.country == nil && result.countryName == nil && result.admin1 == nil && result.city == nil)
    }

    /// The Gulf of Guinea at 0,0 is 578 km from Takoradi (Ghana): the nearest place with its distance, no country.
    @Test func openSeaClaimsNoCountry() throws {
        let result = BundledGazetteer.shared.reverse(try Coordinate(latitude: 0, longitude: 0))
        #expect(result.place?.name == "Takoradi")
        #expect((result.place?.distance ?? 0) > 500_000)
        #expect(result.country == nil)
        #expect(result.admin1 == nil && result.admin2 == nil)
    }

    /// Far from any place but on land, the outline names the country: the Algerian Sahara, the Australian outback.
    @Test(arguments: [(23.4, 5.5, "DZ"), (-25.0, 131.0, "AU"), (64.0, -42.0, "GL")])
    func farFromPlacesTheOutlineNamesTheCountry(_ lat: Double, _ lon: Double, _ country: String) throws {
        let result = BundledGazetteer.shared.reverse(try Coordinate(latitude: lat, longitude: lon))
        #expect((result.place?.distance ?? 0) > Gazetteer.placeRadius)
        #expect(result.country == country)
    }

    /// A suburb answers the city it belongs to: the Sydney Opera House is nearest to The Rocks, in Sydney.
    @Test func suburbsNameTheirCity() throws {
        let opera = BundledGazetteer.shared.reverse(try Coordinate(latitude: -33.8568, longitude: 151.2153))
        #expect(opera.place?.name == "The Rocks")
        #expect(opera.city == "Sydney")
        #expect(opera.country == "AU")
        let helsinki = BundledGazetteer.shared.reverse(try Coordinate(latitude: 60.1699, longitude: 24.9384))
        #expect(helsinki.city == "Helsinki")
        // A village far from any large city has none.
        let lapland = BundledGazetteer.shared.reverse(try Coordinate(latitude: 68.66, longitude: 27.54))
        #expect(lapland.country == "FI")
        #expect(lapland.city == nil)
    }

    /// The outline test is the even-odd rule: a point is inside a country's polygon exactly when a brute-force
    /// winding count over its rings says so.
    @Test func outlineContainmentMatchesWindingNumbers() throws {
        let outlines = try #require(BundledGazetteer.shared.outlines)
        var random = SplitMix64(seed: 5)
        for _ in 0..<300 {
            let x = random.uniform(-180...180)
            let y = random.uniform(-60...80)
            var expected: String?
            for outline in outlines.outlines {
                for polygon in outline.polygons where polygon.reduce(0, { $0 + Self.winding($1, x, y) }) % 2 != 0 {
                    expected = expected ?? outline.country
                }
            }
            #expect(outlines.country(at: Coordinate(uncheckedLatitude: y, longitude: x)) == expected, "\(y),\(x)")
        }
    }

    /// The grid answers as the polygons do: random points everywhere, and points within a cell of China's border
    /// (where most cells are mixed and a wrong centre answer would show). Replay with the seed printed.
    @Test func outlineGridMatchesPolygonTest() throws {
        let outlines = try #require(BundledGazetteer.shared.outlines)
        let seed = UInt64(20_261_128)
        print("outlineGridMatchesPolygonTest seed \(seed)")
        var random = SplitMix64(seed: seed)
        let china = try #require(outlines.outlines.first { $0.country == "CN" })
        var gridAnswered = 0
        for i in 0..<60_000 {
            let (x, y) =
                i % 2 == 0
                ? (random.uniform(-180...180), random.uniform(-90...90))
                : (random.uniform(china.west...china.east), random.uniform(china.south...china.north))
            let point = Coordinate(uncheckedLatitude: y, longitude: x)
            if let cell = CountryOutlines.cell(x: x, y: y), outlines.cells[cell.row * CountryOutlines.columns + cell.column] != CountryOutlines.mixed
            {
                gridAnswered += 1
            }
            #expect(outlines.country(at: point) == outlines.scan(x: x, y: y), "\(y),\(x) (seed \(seed))")
        }
        // Most points are answered by the grid alone, or it does nothing.
        #expect(gridAnswered > 45_000, "\(gridAnswered) of 60 000 points answered by the grid")
    }

    /// The winding number of a closed ring around (x, y), summed signed crossings (Sunday's algorithm).
    static func winding(_ ring: [Double], _ x: Double, _ y: Double) -> Int {
        var w = 0
        let n = ring.count / 2
        for i in 0..<n {
            let j = (i + 1) % n
            let (x0, y0, x1, y1) = (ring[2 * i], ring[2 * i + 1], ring[2 * j], ring[2 * j + 1])
            let side = (x1 - x0) * (y - y0) - (x - x0) * (y1 - y0)
            if y0 <= y { if y1 > y && side > 0 { w += 1 } } else if y1 <= y && side < 0 { w -= 1 }
        }
        return abs(w)
    }

    /// Reverse geocoding is exact nearest-neighbour: compare with brute force over every place.
    @Test func nearestPlaceMatchesBruteForce() throws {
        let gazetteer = BundledGazetteer.shared
        var random = SplitMix64(seed: 11)
        for _ in 0..<20 {
            let point = try Coordinate(latitude: random.uniform(-60...70), longitude: random.uniform(-180...180))
            // The places' columns, not `places[i]` (which decodes every string of a place): 20 scans of every place.
            let places = gazetteer.places
            var best = 0
            var bestDistance = Double.infinity
            for i in places.indices {
                let distance = GreatCircle.distance(point, Coordinate(uncheckedLatitude: places.latitude(i), longitude: places.longitude(i)))
                if distance < bestDistance { (best, bestDistance) = (i, distance) }
            }
            #expect(gazetteer.reverse(point).place?.id == "geonames:\(gazetteer.places[best].id)")
        }
    }
}
