import Foundation
import GeoCore
import TestSupport
import Testing

@Suite struct PolygonTests {
    @Test func squareContainsItsInside() throws {
        let square = try Polygon(parsing: "0,0;10,0;10,10;0,10")
        #expect(square.contains(latitude: 5, longitude: 5))
        #expect(!square.contains(latitude: 15, longitude: 5))
        #expect(!square.contains(latitude: -1, longitude: 5))
        #expect(square.boundingBox == BoundingBox(uncheckedWest: 0, south: 0, east: 10, north: 10))
    }

    @Test func concavePolygon() throws {
        // A "C" shape open to the east.
        let c = try Polygon(parsing: "0,0;10,0;10,2;2,2;2,8;10,8;10,10;0,10;0,0")
        #expect(c.contains(latitude: 5, longitude: 1))
        #expect(!c.contains(latitude: 5, longitude: 6))
        #expect(c.contains(latitude: 9, longitude: 6))
    }

    @Test func crossingTheAntimeridian() throws {
        let p = try Polygon(parsing: "170,-10;-170,-10;-170,10;170,10")
        #expect(p.boundingBox.crossesAntimeridian)
        #expect(p.contains(latitude: 0, longitude: 179.5))
        #expect(p.contains(latitude: 0, longitude: -179.5))
        #expect(p.contains(latitude: 0, longitude: 180))
        #expect(!p.contains(latitude: 0, longitude: 0))
        #expect(!p.contains(latitude: 0, longitude: 160))
    }

    @Test(arguments: [
        ("0,0;1,1", "must have at least 3 vertices"),
        ("0,0;1;2,2", "vertex 2 must be two numbers lon,lat"),
        ("0,0;1,1;2,2", "must enclose an area (its vertices are collinear)"),
        ("0,0;10,10;10,0;0,4", "must not intersect itself (edges 1 and 3 cross)"),
        ("0,0;10,10;10,0;0,10", "must not intersect itself (edges 1 and 3 cross)"),
        ("0,95;1,1;2,0", "vertex 1: lat must be a number between -90 and 90 (got 95.0)"),
    ])
    func rejectsBadPolygons(_ text: String, _ rule: String) {
        #expect(throws: GeoError.invalidPolygon(rule)) { try Polygon(parsing: text) }
    }

    /// Against an independent oracle: a random convex polygon (points sorted by angle around a centre) contains
    /// a point iff the point is left of every edge.
    @Test func convexPolygonsAgainstHalfPlanes() throws {
        var random = testRandom("convexPolygonsAgainstHalfPlanes")
        for _ in 0..<200 {
            let cx = random.uniform(-170...170)
            let cy = random.uniform(-80...80)
            let n = 3 + Int(random.next() % 10)
            let angles = (0..<n).map { _ in random.uniform(0...(2 * .pi)) }.sorted()
            let radius = random.uniform(0.1...5)
            let vertices = try angles.map { try Coordinate(latitude: cy + radius * sin($0), longitude: cx + radius * cos($0)) }
            guard let polygon = try? Polygon(vertices: vertices) else { continue }
            for _ in 0..<100 {
                let x = cx + random.uniform(-6...6)
                let y = cy + random.uniform(-6...6)
                var inside = true
                for i in 0..<n {
                    let a = vertices[i]
                    let b = vertices[(i + 1) % n]
                    let cross = (b.longitude - a.longitude) * (y - a.latitude) - (b.latitude - a.latitude) * (x - a.longitude)
                    if cross <= 0 { inside = false }
                }
                let onEdge = (0..<n).contains { i in
                    let a = vertices[i]
                    let b = vertices[(i + 1) % n]
                    return abs((b.longitude - a.longitude) * (y - a.latitude) - (b.latitude - a.latitude) * (x - a.longitude)) < 1e-9
                }
                if !onEdge { #expect(polygon.contains(latitude: y, longitude: x) == inside) }
            }
        }
    }
}
