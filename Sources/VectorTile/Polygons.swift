/// Polygon rings made ready for a tile: clipped to the tile and its buffer, snapped to whole units, and oriented as
/// the Mapbox Vector Tile spec asks (4.3.4.4).
public enum Polygons {
    /// `ring` (tile units, unrounded, first vertex not repeated) clipped to the square `-buffer...extent + buffer`
    /// (Sutherland–Hodgman: a concave ring cut by the edge may keep a sliver along it, which draws as nothing),
    /// rounded to whole units with repeated vertices dropped, and turned to positive area by the surveyor's formula
    /// when `exterior`, negative when not. Nil when less than `minimumArea` square units are left.
    public static func ring(
        _ ring: [(x: Double, y: Double)],
        exterior: Bool,
        extent: Int,
        buffer: Int,
        minimumArea: Double = 1
    ) -> [(
        x: Int, y: Int
    )]? {
        let low = Double(-buffer)
        let high = Double(extent + buffer)
        var points = ring
        // One edge of the square at a time: keep what lies inside, add where the ring crosses.
        for edge in 0..<4 {
            guard !points.isEmpty else { return nil }
            func inside(_ p: (x: Double, y: Double)) -> Bool {
                switch edge {
                case 0: return p.x >= low
                case 1: return p.x <= high
                case 2: return p.y >= low
                default: return p.y <= high
                }
            }
            func crossing(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> (x: Double, y: Double) {
                switch edge {
                case 0, 1:
                    let x = edge == 0 ? low : high
                    return (x, a.y + (b.y - a.y) * (x - a.x) / (b.x - a.x))
                default:
                    let y = edge == 2 ? low : high
                    return (a.x + (b.x - a.x) * (y - a.y) / (b.y - a.y), y)
                }
            }
            var out: [(x: Double, y: Double)] = []
            out.reserveCapacity(points.count + 4)
            var previous = points[points.count - 1]
            for p in points {
                let (pin, previousIn) = (inside(p), inside(previous))
                if pin {
                    if !previousIn { out.append(crossing(previous, p)) }
                    out.append(p)
                } else if previousIn {
                    out.append(crossing(previous, p))
                }
                previous = p
            }
            points = out
        }
        var snapped: [(x: Int, y: Int)] = []
        snapped.reserveCapacity(points.count)
        for p in points {
            let q = (x: Int(p.x.rounded()), y: Int(p.y.rounded()))
            if let last = snapped.last, last == q { continue }
            snapped.append(q)
        }
        while snapped.count > 1, snapped[0] == snapped[snapped.count - 1] { snapped.removeLast() }
        guard snapped.count >= 3 else { return nil }
        let area = surveyorArea(snapped)
        guard abs(area) >= minimumArea else { return nil }
        if (area > 0) != exterior { snapped.reverse() }
        return snapped
    }

    /// The ring's area by the surveyor's formula in tile units: positive when clockwise on screen (y down).
    public static func surveyorArea(_ ring: [(x: Int, y: Int)]) -> Double {
        var sum = 0
        var previous = ring[ring.count - 1]
        for p in ring {
            sum += previous.x * p.y - p.x * previous.y
            previous = p
        }
        return Double(sum) / 2
    }
}
