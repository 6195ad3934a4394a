import Foundation
import GeoCore
import Records
import SnapshotFile

/// Street segments in a uniform grid of cells (0.002° of latitude × 0.004° of longitude, about 220 m square in
/// Helsinki), for "the nearest street to this point" by distance to its segments, not its vertices: a long straight
/// street has vertices far apart, and the nearest vertex can belong to another street.
struct SegmentGrid: Sendable {
    static let cellLatitude = 0.002
    static let cellLongitude = 0.004
    /// Cells a side past which a segment is indexed by its end cells only.
    static let longSegmentCells = 50

    struct Segment: BitwiseCopyable, Equatable {
        var line: Int32
        var index: Int32
    }

    /// The segments of each cell they pass through, in line order.
    let cells: CellTable<Segment>
    let lines: [StreetLine]

    init(lines: [StreetLine], cells: CellTable<Segment>) {
        self.lines = lines
        self.cells = cells
    }

    init(lines: [StreetLine]) {
        var entries: [(key: Int64, item: Segment)] = []
        // Most segments lie in one or two cells: room for two each, not a doubling array's copies of fresh memory.
        entries.reserveCapacity(2 * lines.reduce(0) { $0 + max(0, $1.points.count - 1) })
        for (l, line) in lines.enumerated() where line.kind == .street && line.points.count >= 2 {
            for i in 1..<line.points.count {
                let a = line.points[i - 1]
                let b = line.points[i]
                let segment = Segment(line: Int32(l), index: Int32(i))
                let (y0, x0) = Self.cell(min(a.latitude, b.latitude), min(a.longitude, b.longitude))
                let (y1, x1) = Self.cell(max(a.latitude, b.latitude), max(a.longitude, b.longitude))
                // A segment longer than ~50 cells a side (11 km) is indexed by its end cells only.
                if y1 - y0 > Self.longSegmentCells || x1 - x0 > Self.longSegmentCells {
                    for (y, x) in [Self.cell(a.latitude, a.longitude), Self.cell(b.latitude, b.longitude)] {
                        entries.append((Self.key(y, x), segment))
                    }
                    continue
                }
                for y in y0...y1 {
                    for x in x0...x1 { entries.append((Self.key(y, x), segment)) }
                }
            }
        }
        self.init(lines: lines, cells: CellTable(entries))
    }

    /// The cells agree with each other and with the lines.
    var isConsistent: Bool {
        cells.isConsistent
            && cells.items.allSatisfy { s in
                s.line >= 0 && Int(s.line) < lines.count && s.index >= 1 && Int(s.index) < lines[Int(s.line)].points.count
            }
    }

    static func cell(_ latitude: Double, _ longitude: Double) -> (Int, Int) {
        (Int((latitude / cellLatitude).rounded(.down)), Int((longitude / cellLongitude).rounded(.down)))
    }

    static func key(_ y: Int, _ x: Int) -> Int64 { Int64(y) << 32 | Int64(UInt32(truncatingIfNeeded: x)) }

    /// The nearest street segment within `radius` metres: its line, the nearest point on it and the distance.
    func nearest(
        to point: Coordinate2,
        radius: Double,
        hidden: (Int32) -> Bool = { _ in false }
    ) -> (line: Int, point: Coordinate2, distance: Double)? {
        let metresPerDegree = GreatCircle.earthRadius * .pi / 180
        let cosine = max(cos(point.latitude * .pi / 180), 0.01)
        let dy = Int((radius / metresPerDegree / Self.cellLatitude).rounded(.up))
        let dx = Int((radius / (metresPerDegree * cosine) / Self.cellLongitude).rounded(.up))
        let (cy, cx) = Self.cell(point.latitude, point.longitude)
        var best: (line: Int, point: Coordinate2, distance: Double)?
        for y in (cy - dy)...(cy + dy) {
            for x in (cx - dx)...(cx + dx) {
                for k in cells.items(of: Self.key(y, x)) {
                    let s = cells.items[k]
                    guard !hidden(s.line) else { continue }
                    let line = lines[Int(s.line)]
                    let (p, d) = Self.project(point, line.points[Int(s.index) - 1], line.points[Int(s.index)], cosine: cosine, scale: metresPerDegree)
                    // Equal distances (streets meeting at a node) go to the first line: in object order, as imports keep them.
                    if d <= radius, d < best?.distance ?? .infinity || (d == best!.distance && Int(s.line) < best!.line) {
                        best = (Int(s.line), p, d)
                    }
                }
            }
        }
        return best
    }

    /// The point of segment a–b nearest to `p` and its distance in metres, in a local equirectangular plane around
    /// `p` (exact enough over the few hundred metres this is asked for).
    static func project(_ p: Coordinate2, _ a: Coordinate2, _ b: Coordinate2, cosine: Double, scale: Double) -> (Coordinate2, Double) {
        let ax = (a.longitude - p.longitude) * cosine * scale
        let ay = (a.latitude - p.latitude) * scale
        let bx = (b.longitude - p.longitude) * cosine * scale
        let by = (b.latitude - p.latitude) * scale
        let ex = bx - ax
        let ey = by - ay
        let lengthSquared = ex * ex + ey * ey
        var t = lengthSquared > 0 ? -(ax * ex + ay * ey) / lengthSquared : 0
        t = min(max(t, 0), 1)
        let x = ax + t * ex
        let y = ay + t * ey
        let nearest = Coordinate2(a.latitude + t * (b.latitude - a.latitude), a.longitude + t * (b.longitude - a.longitude))
        return (nearest, (x * x + y * y).squareRoot())
    }
}
