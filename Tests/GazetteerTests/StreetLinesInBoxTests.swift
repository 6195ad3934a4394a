import Gazetteer
import GeoCore
import Records
import TestSupport
import Testing

/// `AddressIndex.lines(in:limit:)` (what `/v1/streets` and the base tiles draw) against brute force: every street line
/// with a segment whose box meets the box, in import order, whether the box is small enough for the segment grid
/// or looked at line by line; long segments (past the grid's 50 cells) and interpolation lines included.
@Suite struct StreetLinesInBoxTests {
    @Test func linesInABoxAreThoseWithASegmentMeetingIt() {
        var random = testRandom("linesInABoxAreThoseWithASegmentMeetingIt")
        var lines: [StreetLine] = []
        for i in 0..<1_500 {
            var points: [Coordinate2] = []
            var p = Coordinate2(random.uniform(60.0...60.5), random.uniform(24.5...25.5))
            // Mostly short streets; a few with one segment of up to 0.4° (past 50 grid cells).
            let long = i % 40 == 0
            for _ in 0..<Int(random.uniform(1...7.99)) {
                points.append(p)
                let step = long ? 0.4 : 0.004
                p = Coordinate2(p.latitude + random.uniform(-step...step), p.longitude + random.uniform(-step...step))
            }
            let kind: StreetLine.Kind = i % 17 == 0 ? .all : .street
            lines.append(StreetLine(id: "osm-w\(i)", kind: kind, names: ["Katu \(i)"], points: points))
        }
        let index = AddressIndex(AddressData(streets: lines))
        func expected(_ box: BoundingBox) -> [String] {
            lines.filter { line in
                guard line.kind == .street else { return false }
                if line.points.count == 1 { return box.contains(latitude: line.points[0].latitude, longitude: line.points[0].longitude) }
                return zip(line.points, line.points.dropFirst()).contains { a, b in
                    box.intersects(
                        BoundingBox(
                            uncheckedWest: min(a.longitude, b.longitude),
                            south: min(a.latitude, b.latitude),
                            east: max(a.longitude, b.longitude),
                            north: max(a.latitude, b.latitude)
                        )
                    )
                }
            }.map(\.id)
        }
        for round in 0..<150 {
            // From a few metres to most of the data (past the grid's cells per query).
            let size = [0.001, 0.01, 0.05, 0.3, 2.0][round % 5]
            let (south, west) = (random.uniform(59.9...60.5), random.uniform(24.4...25.5))
            let box = BoundingBox(
                uncheckedWest: west,
                south: south,
                east: west + size * random.uniform(0.5...2),
                north: south + size * random.uniform(0.5...1)
            )
            let want = expected(box)
            let got = index.lines(in: box, limit: 100_000)
            #expect(got.lines.map(\.id) == want, "round \(round), box \(box)")
            #expect(!got.truncated)
            if want.count > 3 {
                let limited = index.lines(in: box, limit: 3)
                #expect(limited.lines.map(\.id) == Array(want.prefix(3)) && limited.truncated, "round \(round): the limit")
            }
        }
    }
}
