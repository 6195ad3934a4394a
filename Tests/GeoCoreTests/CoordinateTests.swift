import GeoCore
import Testing

@Suite struct CoordinateTests {
    @Test func acceptsTheWholeRange() throws {
        for (lat, lon) in [(-90.0, -180.0), (90, 180), (0, 0), (60.17, 24.94)] {
            let c = try Coordinate(latitude: lat, longitude: lon)
            #expect(c.latitude == lat && c.longitude == lon)
        }
    }

    @Test func rejectsOutOfRangeAndNonFinite() {
        #expect(throws: GeoError.latitudeOutOfRange(91)) { try Coordinate(latitude: 91, longitude: 0) }
        #expect(throws: GeoError.latitudeOutOfRange(-90.0001)) { try Coordinate(latitude: -90.0001, longitude: 0) }
        #expect(throws: GeoError.longitudeOutOfRange(180.5)) { try Coordinate(latitude: 0, longitude: 180.5) }
        #expect(throws: GeoError.notFinite(name: "lat")) { try Coordinate(latitude: .nan, longitude: 0) }
        #expect(throws: GeoError.notFinite(name: "lon")) { try Coordinate(latitude: 0, longitude: .infinity) }
    }

    @Test func errorMessagesNameTheParameterAndRule() {
        #expect(GeoError.latitudeOutOfRange(91).description.hasPrefix("lat must be a number between -90 and 90"))
        #expect(GeoError.longitudeOutOfRange(200).description.hasPrefix("lon must be a number between -180 and 180"))
    }

    @Test func wrapsLongitudes() {
        #expect(Coordinate.wrapLongitude(190) == -170)
        #expect(Coordinate.wrapLongitude(-190) == 170)
        #expect(Coordinate.wrapLongitude(540) == 180 || Coordinate.wrapLongitude(540) == -180)
        #expect(Coordinate.wrapLongitude(180) == 180)
    }
}
