import GeoCore
import TestSupport
import Testing

@Suite struct BoundingBoxTests {
    @Test func parses() throws {
        let box = try BoundingBox(parsing: "24.8,60.1,25.1,60.3")
        #expect(box == BoundingBox(uncheckedWest: 24.8, south: 60.1, east: 25.1, north: 60.3))
    }

    @Test(arguments: [
        ("1,2,3", "must be four numbers west,south,east,north"),
        ("1,2,x,4", "east must be a decimal number (got \"x\")"),
        ("1,2,4", "must be four numbers west,south,east,north"),
        ("1,0x10,4,20", "south must be a decimal number (got \"0x10\")"),
        ("0,10,1,5", "south must not be greater than north"),
        ("-181,0,1,5", "west and east must be between -180 and 180"),
        ("nan,0,1,5", "west must be a decimal number (got \"nan\")"),
    ])
    func refusesWithTheRule(_ text: String, _ rule: String) {
        #expect(throws: GeoError.invalidBoundingBox(rule)) { try BoundingBox(parsing: text) }
    }

    @Test func antimeridianBoxContainsBothSides() throws {
        let box = try BoundingBox(west: 170, south: -10, east: -170, north: 10)
        #expect(box.crossesAntimeridian)
        #expect(box.contains(latitude: 0, longitude: 179))
        #expect(box.contains(latitude: 0, longitude: -179))
        #expect(!box.contains(latitude: 0, longitude: 0))
        #expect(box.antimeridianParts.count == 2)
        #expect(abs(box.longitudeSpan - 20) < 1e-12)
        #expect(box.intersects(try BoundingBox(west: -175, south: 0, east: -160, north: 5)))
        #expect(!box.intersects(try BoundingBox(west: -160, south: 0, east: 160, north: 5)))
    }

    /// Every point within the radius (sampled on the circle's rim and inside) lies in the circle's box.
    @Test func circleBoxContainsTheCircle() throws {
        var random = testRandom("circleBoxContainsTheCircle")
        for _ in 0..<500 {
            let center = try Coordinate(latitude: random.uniform(-90...90), longitude: random.uniform(-180...180))
            let radius = random.nextUnit() < 0.5 ? random.uniform(1...50_000) : random.uniform(1...3_000_000)
            let box = BoundingBox.around(center, radius: radius)
            for _ in 0..<40 {
                let p = GreatCircle.destination(from: center, distance: radius * random.nextUnit(), bearing: random.uniform(0...360))
                #expect(box.contains(p), "center \(center) radius \(radius) box \(box) misses \(p)")
            }
        }
    }

    @Test func circleAroundAPoleSpansAllLongitudes() throws {
        let box = BoundingBox.around(try Coordinate(latitude: 89.9, longitude: 10), radius: 50_000)
        #expect(box.west == -180 && box.east == 180 && box.north == 90)
    }

    /// minimumDistance is a true lower bound that is attained: compare with dense sampling of the box.
    @Test func minimumDistanceAgainstSampling() throws {
        var random = testRandom("minimumDistanceAgainstSampling")
        for _ in 0..<300 {
            let box = random.box(south: -90...89, height: 0.01...30, width: 0.01...90)
            let point = try Coordinate(latitude: random.uniform(-90...90), longitude: random.uniform(-180...180))
            let bound = box.minimumDistance(from: point)
            var sampled = Double.infinity
            let steps = 60
            for i in 0...steps {
                for j in 0...steps {
                    let lat = box.south + (box.north - box.south) * Double(i) / Double(steps)
                    let lon = Coordinate.wrapLongitude(box.west + box.longitudeSpan * Double(j) / Double(steps))
                    sampled = min(
                        sampled,
                        GreatCircle.distance(latitude1: point.latitude, longitude1: point.longitude, latitude2: lat, longitude2: lon)
                    )
                }
            }
            #expect(bound <= sampled + 1e-6, "box \(box) point \(point): bound \(bound) > sampled \(sampled)")
            // Sampling is coarse: the exact minimum is never far below the best sample.
            let cell = max((box.north - box.south), box.longitudeSpan) / Double(steps) * .pi / 180 * GreatCircle.earthRadius
            #expect(sampled - bound <= cell + 1e-6)
        }
    }
}
