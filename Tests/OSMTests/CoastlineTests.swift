import Foundation
import GeoCore
import OSM
import TestSupport
import Testing

/// The sea made from coastline stretches, against the coastline itself: OpenStreetMap draws it with the land on its
/// left, so a point is sea exactly when the nearest coastline segment has it on its right. Judged at random points
/// where that segment is nearer than the box's edge and its nearest point is inside it (at a vertex the side is the
/// corner's, not a segment's).
@Suite struct CoastlineTests {
    typealias Point = Coastline.Point

    /// Sea (true) or land by the nearest segment of `pieces`, when that segment is nearer than the box's edge and its
    /// nearest point is inside it; nil (not judged) otherwise.
    static func oracle(_ p: Point, _ pieces: [Coastline.Piece], _ box: Coastline.Box) -> Bool? {
        let scale = cos((box.south + box.north) / 2 * .pi / 180)
        let edge = min(box.north - p.latitude, p.latitude - box.south, (box.east - p.longitude) * scale, (p.longitude - box.west) * scale)
        guard let side = side(p, pieces, scale: scale), side.distance < edge, side.distance > 1e-7 else { return nil }
        return side.sea
    }

    /// The side of the nearest segment (longitudes scaled by `scale` to metres' shape): sea when the point is on its
    /// right. Nil when the nearest point is a vertex (at a corner the nearest segment's side is not the shore's).
    static func side(_ p: Point, _ pieces: [Coastline.Piece], scale: Double) -> (distance: Double, sea: Bool)? {
        var best: (distance: Double, sea: Bool, inside: Bool)?
        for piece in pieces {
            for (a, b) in zip(piece.points, piece.points.dropFirst()) {
                let (ax, ay, bx, by) = (a.longitude * scale, a.latitude, b.longitude * scale, b.latitude)
                let (px, py) = (p.longitude * scale, p.latitude)
                let (dx, dy) = (bx - ax, by - ay)
                let u = ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)
                let t = min(1, max(0, u))
                let distance = hypot(px - (ax + t * dx), py - (ay + t * dy))
                if best == nil || distance < best!.distance { best = (distance, dx * (py - ay) - dy * (px - ax) < 0, u > 0 && u < 1) }
            }
        }
        guard let best, best.inside else { return nil }
        return (best.distance, best.sea)
    }

    static func inside(_ polygons: [Coastline.Polygon], _ p: Point) -> Bool {
        polygons.contains { polygon in polygon.filter { Coastline.contains($0, p) }.count % 2 == 1 }
    }

    /// A wavy shore across the box from one edge to another (ends a little inside it, as an extract cuts a way),
    /// in pieces that share their end nodes, drawn either way round; sometimes a second shore (the other way round,
    /// or the land between them would be sea by one and land by the other), and islands in the sea.
    static func shores(_ random: inout SplitMix64, _ box: Coastline.Box) -> [Coastline.Piece] {
        var pieces: [Coastline.Piece] = []
        var nextID: Int64 = 1
        let (width, height) = (box.east - box.west, box.north - box.south)
        let eastward = random.uniform(0...1) < 0.5
        for shore in 0..<(random.uniform(0...1) < 0.3 ? 2 : 1) {
            // From the west edge to the east one, at a band of its own so that two shores never cross.
            let band = shore == 0 ? (0.15...0.45) : (0.55...0.85)
            var points: [Point] = []
            let steps = Int(random.uniform(8...40))
            var y = box.south + height * random.uniform(band)
            for k in 0...steps {
                let x = box.west + width * (0.002 + 0.996 * Double(k) / Double(steps))
                y = min(box.south + height * band.upperBound, max(box.south + height * band.lowerBound, y + height * random.uniform(-0.04...0.04)))
                points.append((y, x))
            }
            if eastward == (shore == 1) { points.reverse() }
            var ids = (0..<points.count).map { nextID + Int64($0) }
            nextID += Int64(points.count)
            // Cut into pieces that share their end nodes, handed over shuffled.
            var start = 0
            while start < points.count - 1 {
                let end = min(points.count - 1, start + Int(random.uniform(1...8)))
                pieces.append(Coastline.Piece(ids: Array(ids[start...end]), points: Array(points[start...end])))
                start = end
            }
            ids.removeAll()
        }
        // Islands: small counter-clockwise rings (land on the left) in the sea, clear of the shores and the edge.
        let scale = cos((box.south + box.north) / 2 * .pi / 180)
        for _ in 0..<Int(random.uniform(0...3.99)) {
            let (cy, cx) = (box.south + height * random.uniform(0.1...0.9), box.west + width * random.uniform(0.1...0.9))
            let r = min(width * scale, height) * random.uniform(0.02...0.06)
            let shores = pieces
            let edge = min(box.north - cy, cy - box.south, (box.east - cx) * scale, (cx - box.west) * scale)
            guard edge > 2 * r, let side = Self.side((cy, cx), shores, scale: scale), side.sea, side.distance > 2 * r else { continue }
            var ids: [Int64] = []
            var points: [Point] = []
            for k in 0..<12 {
                let angle = Double(k) / 12 * 2 * .pi
                ids.append(nextID + Int64(k))
                points.append((cy + r * sin(angle), cx + r * cos(angle) / scale))
            }
            ids.append(ids[0])
            points.append(points[0])
            nextID += 12
            pieces.append(Coastline.Piece(ids: ids, points: points))
        }
        var shuffled: [Coastline.Piece] = []
        while !pieces.isEmpty { shuffled.append(pieces.remove(at: Int(random.uniform(0...0.999_999) * Double(pieces.count)))) }
        return shuffled
    }

    @Test func theSeaIsWhatLiesRightOfTheCoastline() {
        var random = testRandom("theSeaIsWhatLiesRightOfTheCoastline")
        var judged = 0
        var sea = 0
        for round in 0..<60 {
            let box = Coastline.Box(west: 24.90, south: 60.10, east: 24.90 + random.uniform(0.02...0.2), north: 60.10 + random.uniform(0.01...0.1))
            let pieces = Self.shores(&random, box)
            let (polygons, problems) = Coastline.sea(pieces, box: box)
            #expect(problems.isEmpty, "round \(round): \(problems)")
            for _ in 0..<200 {
                let p: Point = (random.uniform(box.south...box.north), random.uniform(box.west...box.east))
                guard let expected = Self.oracle(p, pieces, box) else { continue }
                let got = Self.inside(polygons, p)
                judged += 1
                if expected { sea += 1 }
                if got != expected {
                    Issue.record("round \(round): \(p) is \(expected ? "sea" : "land") by the coastline, \(got ? "sea" : "land") by the polygons")
                    return
                }
            }
        }
        #expect(judged > 1_500 && sea > 400 && judged - sea > 400, "judged \(judged) points, \(sea) of them sea")
    }

    @Test func onlyIslandsMakeTheBoxTheSea() {
        let box = Coastline.Box(west: 0, south: 0, east: 1, north: 1)
        let island = Coastline.Piece(
            ids: [1, 2, 3, 4, 1],
            points: [(0.4, 0.4), (0.4, 0.6), (0.6, 0.6), (0.6, 0.4), (0.4, 0.4)]  // counter-clockwise: land inside
        )
        let (polygons, _) = Coastline.sea([island], box: box)
        #expect(polygons.count == 1 && polygons[0].count == 2)
        #expect(Self.inside(polygons, (0.1, 0.1)) && !Self.inside(polygons, (0.5, 0.5)))
        // A clockwise ring is a sea enclosed by land.
        let lagoon = Coastline.Piece(ids: [1, 4, 3, 2, 1], points: [(0.4, 0.4), (0.6, 0.4), (0.6, 0.6), (0.4, 0.6), (0.4, 0.4)])
        let enclosed = Coastline.sea([lagoon], box: box).polygons
        #expect(Self.inside(enclosed, (0.5, 0.5)) && !Self.inside(enclosed, (0.1, 0.1)))
        #expect(Coastline.sea([], box: box).polygons.isEmpty)
    }
}
