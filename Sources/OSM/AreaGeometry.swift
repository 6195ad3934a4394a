/// Geometry of OSM areas: rings assembled from way segments, and a point guaranteed inside an area.
public enum AreaGeometry {
    /// A point as (latitude, longitude) degrees.
    public typealias Point = (latitude: Double, longitude: Double)

    /// A point inside the area bounded by `outer` rings less `inner` rings (even-odd rule), or nil when the rings
    /// enclose nothing.
    ///
    /// A centroid can fall in a courtyard or outside an L-shaped building; instead this casts horizontal scan lines
    /// across the area's latitude span (at 1/2, 1/4, 3/4, … of it), intersects each with every ring edge, and takes
    /// the midpoint of the widest inside interval over all lines — inside by construction, and near the middle of
    /// the area's widest part, where a label goes. Longitudes are scaled by cos(latitude) so "widest" is in metres.
    /// - Complexity: O(lines × edges).
    public static func interiorPoint(outer: [[Point]], inner: [[Point]] = []) -> Point? {
        // Rings of fewer than three points are skipped; one buffer of crossings serves every scan line (half a
        // million buildings of an extract: an array a line was most of the cost).
        guard outer.contains(where: { $0.count >= 3 }) || inner.contains(where: { $0.count >= 3 }) else { return nil }
        var south = Double.infinity
        var north = -Double.infinity
        for ring in outer {
            for p in ring {
                south = min(south, p.latitude)
                north = max(north, p.latitude)
            }
        }
        guard south < north else {
            // A degenerate (zero-height) ring: its first point is the best there is.
            return outer.first?.first
        }
        let scale = cos((south + north) / 2 * .pi / 180)
        var best: (width: Double, point: Point)?
        var crossings: [Double] = []
        crossings.reserveCapacity(8)
        func cross(_ ring: [Point], at y: Double) {
            var previous = ring[ring.count - 1]
            for p in ring {
                if (p.latitude > y) != (previous.latitude > y) {
                    let t = (y - previous.latitude) / (p.latitude - previous.latitude)
                    crossings.append(previous.longitude + t * (p.longitude - previous.longitude))
                }
                previous = p
            }
        }
        for fraction in scanFractions {
            // Nudge off vertex latitudes so that a line never passes exactly through a vertex.
            let y = south + (north - south) * fraction + 1e-11
            crossings.removeAll(keepingCapacity: true)
            for ring in outer where ring.count >= 3 { cross(ring, at: y) }
            for ring in inner where ring.count >= 3 { cross(ring, at: y) }
            crossings.sort()
            var i = 0
            while i + 1 < crossings.count {
                let width = (crossings[i + 1] - crossings[i]) * scale
                if width > (best?.width ?? 0) { best = (width, (y, (crossings[i] + crossings[i + 1]) / 2)) }
                i += 2
            }
        }
        return best?.point ?? outer.first?.first
    }

    /// Where the scan lines cross the area's latitude span, in the order they are tried.
    static let scanFractions = [0.5, 0.25, 0.75, 0.375, 0.625, 0.125, 0.875]

    /// Joins way node lists into closed rings by matching end points (in either direction), as multipolygon
    /// relations need. Lists that cannot be closed are dropped and counted in `open`.
    public static func assembleRings(_ parts: [[Int64]]) -> (rings: [[Int64]], open: Int) {
        var rings: [[Int64]] = []
        var pending = parts.filter { $0.count >= 2 }
        var open = 0
        while var current = pending.popLast() {
            while current.first != current.last {
                guard let tail = current.last,
                    let k = pending.firstIndex(where: { $0.first == tail || $0.last == tail })
                else { break }
                var next = pending.remove(at: k)
                if next.first != tail { next.reverse() }
                current.append(contentsOf: next.dropFirst())
            }
            if current.count >= 4 && current.first == current.last { rings.append(current) } else { open += 1 }
        }
        return (rings, open)
    }

    /// Area of a ring in square degrees scaled by cos(latitude) (for choosing the largest ring; shoelace formula).
    public static func area(_ ring: [Point]) -> Double {
        guard ring.count >= 3 else { return 0 }
        let scale = cos(ring[0].latitude * .pi / 180)
        var sum = 0.0
        var previous = ring[ring.count - 1]
        for p in ring {
            sum += (previous.longitude * scale) * p.latitude - (p.longitude * scale) * previous.latitude
            previous = p
        }
        return abs(sum) / 2
    }
}

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
