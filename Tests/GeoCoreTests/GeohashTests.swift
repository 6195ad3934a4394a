import GeoCore
import TestSupport
import Testing

@Suite struct GeohashTests {
    /// Published vectors: Wikipedia's "ezs42" and G. Niemeyer's geohash.org example "u4pruydqqvj".
    @Test func publishedVectors() throws {
        #expect(try Geohash(latitude: 42.605, longitude: -5.603, precision: 5).string == "ezs42")
        #expect(try Geohash(latitude: 57.64911, longitude: 10.40744, precision: 11).string == "u4pruydqqvj")
        let ezs42 = try Geohash("ezs42")
        #expect(abs(ezs42.center.latitude - 42.605) < 0.03 && abs(ezs42.center.longitude - -5.603) < 0.03)
        let box = ezs42.bounds
        #expect(abs(box.south - 42.583_007_812_5) < 1e-12 && abs(box.north - 42.626_953_125) < 1e-12)
        #expect(abs(box.west - -5.625) < 1e-12 && abs(box.east - -5.581_054_687_5) < 1e-12)
        let u4 = try Geohash("u4pruydqqvj")
        #expect(u4.bounds.contains(latitude: 57.64911, longitude: 10.40744))
        #expect(try Geohash(latitude: 0, longitude: 0, precision: 1).string == "s")
        #expect(try Geohash(latitude: -90, longitude: -180, precision: 12).string == "000000000000")
        #expect(try Geohash(latitude: 90, longitude: 180, precision: 12).string == "zzzzzzzzzzzz")
    }

    @Test func roundTripsAtEveryPrecision() throws {
        var random = testRandom("geohashRoundTrips")
        for _ in 0..<5_000 {
            let lat = random.uniform(-90...90)
            let lon = random.uniform(-180...180)
            for precision in 1...12 {
                let hash = try Geohash(latitude: lat, longitude: lon, precision: precision)
                #expect(hash.bounds.contains(latitude: lat, longitude: lon))
                let parsed = try Geohash(hash.string)
                #expect(parsed == hash)
                #expect(parsed.string == hash.string)
            }
        }
    }

    @Test func integerFormSortsLikeTheString() throws {
        var random = testRandom("geohashSorting")
        let hashes = try (0..<2_000).map { _ in
            try Geohash(latitude: random.uniform(-90...90), longitude: random.uniform(-180...180), precision: 12)
        }
        #expect(hashes.sorted().map(\.string) == hashes.map(\.string).sorted())
        #expect(hashes.sorted { $0.bits < $1.bits }.map(\.string) == hashes.map(\.string).sorted())
    }

    @Test func rejectsBadInput() {
        #expect(throws: GeoError.invalidGeohashPrecision(13)) { try Geohash(latitude: 0, longitude: 0, precision: 13) }
        #expect(throws: GeoError.invalidGeohashPrecision(0)) { try Geohash(latitude: 0, longitude: 0, precision: 0) }
        #expect(throws: GeoError.invalidGeohash("abc")) { try Geohash("abc") }  // 'a' is not in the alphabet
        #expect(throws: GeoError.invalidGeohash("")) { try Geohash("") }
        #expect(throws: GeoError.invalidGeohash("0123456789bcd")) { try Geohash("0123456789bcd") }
    }

    @Test func neighboursAreAdjacentAndWrap() throws {
        let hash = try Geohash("u4pru")
        let n = try #require(hash.neighbor(dx: 0, dy: 1))
        #expect(abs(n.bounds.south - hash.bounds.north) < 1e-12 && n.bounds.west == hash.bounds.west)
        let e = try #require(hash.neighbor(dx: 1, dy: 0))
        #expect(abs(e.bounds.west - hash.bounds.east) < 1e-12)
        #expect(hash.neighbors.compactMap { $0 }.count == 8)
        #expect(try Geohash("ezs42").neighbor(dx: 1, dy: 0)?.string == "ezs43")
        // Across the antimeridian and beyond the pole.
        let eastEdge = try Geohash(latitude: 0, longitude: 179.99, precision: 4)
        #expect(try #require(eastEdge.neighbor(dx: 1, dy: 0)).bounds.west == -180)
        let top = try Geohash(latitude: 89.99, longitude: 0, precision: 3)
        #expect(top.neighbor(dx: 0, dy: 1) == nil)
    }

    @Test func coverOfABoxContainsEveryPointAndOnlyIntersectingCells() throws {
        var random = testRandom("geohashCoverBox")
        for _ in 0..<200 {
            let box = random.box(south: -90...85, height: 0...5, width: 0...8)
            let precision = 1 + Int(random.next() % 4)
            let cells = try Geohash.cover(box, precision: precision)
            let set = Set(cells.map(\.bits))
            #expect(set.count == cells.count)
            for cell in cells { #expect(cell.bounds.intersects(box)) }
            for _ in 0..<100 {
                let lat = random.uniform(box.south...box.north)
                let lon = Coordinate.wrapLongitude(box.west + random.nextUnit() * box.longitudeSpan)
                #expect(set.contains(try Geohash(latitude: lat, longitude: lon, precision: precision).bits))
            }
        }
    }

    @Test func coverOfACircle() throws {
        var random = testRandom("geohashCoverCircle")
        for _ in 0..<100 {
            let center = try Coordinate(latitude: random.uniform(-90...90), longitude: random.uniform(-180...180))
            let radius = random.uniform(100...200_000)
            let cells = try Geohash.cover(center: center, radius: radius, precision: 4)
            let set = Set(cells.map(\.bits))
            for _ in 0..<100 {
                let p = GreatCircle.destination(from: center, distance: radius * random.nextUnit(), bearing: random.uniform(0...360))
                #expect(set.contains(try Geohash(p, precision: 4).bits))
            }
        }
        #expect(throws: GeoError.tooManyCells(limit: 100)) { try Geohash.cover(.world, precision: 3, limit: 100) }
    }
}
