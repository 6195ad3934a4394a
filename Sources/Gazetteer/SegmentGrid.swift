import Foundation
import GeoCore
import SnapshotFile

/// Street segments in a uniform grid of cells (0.002° of latitude × 0.004° of longitude, about 220 m square in
/// Helsinki), for "the nearest street to this point" by distance to its segments, not its vertices: a long straight
/// street has vertices far apart, and the nearest vertex can belong to another street.
struct SegmentGrid: Sendable {
    static let cellLatitude = 0.002
    static let cellLongitude = 0.004

    struct Segment: BitwiseCopyable, Equatable {
        var line: Int32
        var index: Int32
    }

    /// The cells that segments pass through, ascending (`key`); `segments[starts[i]..<starts[i + 1]]` are cell
    /// `keys[i]`'s segments, in line order. Flat arrays, so that a snapshot serves them from its mapping.
    let keys: FlatArray<Int64>
    let starts: FlatArray<UInt32>
    let segments: FlatArray<Segment>
    let lines: [StreetLine]

    init(lines: [StreetLine], keys: FlatArray<Int64>, starts: FlatArray<UInt32>, segments: FlatArray<Segment>) {
        self.lines = lines
        self.keys = keys
        self.starts = starts
        self.segments = segments
    }

    init(lines: [StreetLine]) {
        var entries: [(key: Int64, segment: Segment)] = []
        for (l, line) in lines.enumerated() where line.kind == .street && line.points.count >= 2 {
            for i in 1..<line.points.count {
                let a = line.points[i - 1]
                let b = line.points[i]
                let segment = Segment(line: Int32(l), index: Int32(i))
                let (y0, x0) = Self.cell(min(a.latitude, b.latitude), min(a.longitude, b.longitude))
                let (y1, x1) = Self.cell(max(a.latitude, b.latitude), max(a.longitude, b.longitude))
                // A segment longer than ~50 cells a side (11 km) is indexed by its end cells only.
                if y1 - y0 > 50 || x1 - x0 > 50 {
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
        // By cell, and in the order met within a cell (the position breaks ties).
        let order = entries.indices.sorted { (entries[$0].key, $0) < (entries[$1].key, $1) }
        var keys: [Int64] = []
        var starts: [UInt32] = []
        var segments: [Segment] = []
        segments.reserveCapacity(entries.count)
        for i in order {
            if keys.last != entries[i].key {
                keys.append(entries[i].key)
                starts.append(UInt32(segments.count))
            }
            segments.append(entries[i].segment)
        }
        starts.append(UInt32(segments.count))
        self.init(lines: lines, keys: FlatArray(keys), starts: FlatArray(starts), segments: FlatArray(segments))
    }

    /// The segments of cell (y, x), as a range of `segments`.
    func cellSegments(_ y: Int, _ x: Int) -> Range<Int> {
        let key = Self.key(y, x)
        let i = keys.lowerBound(of: key)
        guard i < keys.count, keys[i] == key else { return 0..<0 }
        return Int(starts[i])..<Int(starts[i + 1])
    }

    /// The arrays agree with each other and with the lines.
    var isConsistent: Bool {
        guard starts.count == keys.count + 1, starts.first ?? 0 == 0, Int(starts.last ?? 0) == segments.count else { return false }
        for i in keys.indices.dropFirst() where keys[i - 1] >= keys[i] { return false }
        for i in starts.indices.dropFirst() where starts[i - 1] > starts[i] { return false }
        return segments.allSatisfy { s in
            s.line >= 0 && Int(s.line) < lines.count && s.index >= 1 && Int(s.index) < lines[Int(s.line)].points.count
        }
    }

    static func cell(_ latitude: Double, _ longitude: Double) -> (Int, Int) {
        (Int((latitude / cellLatitude).rounded(.down)), Int((longitude / cellLongitude).rounded(.down)))
    }

    static func key(_ y: Int, _ x: Int) -> Int64 { Int64(y) << 32 | Int64(UInt32(truncatingIfNeeded: x)) }

    /// The nearest street segment within `radius` metres: its line, the nearest point on it and the distance.
    func nearest(to point: Coordinate2, radius: Double) -> (line: Int, point: Coordinate2, distance: Double)? {
        let metresPerDegree = GreatCircle.earthRadius * .pi / 180
        let cosine = max(cos(point.latitude * .pi / 180), 0.01)
        let dy = Int((radius / metresPerDegree / Self.cellLatitude).rounded(.up))
        let dx = Int((radius / (metresPerDegree * cosine) / Self.cellLongitude).rounded(.up))
        let (cy, cx) = Self.cell(point.latitude, point.longitude)
        var best: (line: Int, point: Coordinate2, distance: Double)?
        for y in (cy - dy)...(cy + dy) {
            for x in (cx - dx)...(cx + dx) {
                for k in cellSegments(y, x) {
                    let s = segments[k]
                    let line = lines[Int(s.line)]
                    let (p, d) = Self.project(point, line.points[Int(s.index) - 1], line.points[Int(s.index)], cosine: cosine, scale: metresPerDegree)
                    if d <= radius && d < (best?.distance ?? .infinity) { best = (Int(s.line), p, d) }
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
