import Foundation

/// A simple polygon with vertices in longitude/latitude, edges drawn as straight lines in the lon/lat plane
/// (as GeoJSON does).
///
/// A ring may cross the antimeridian: when two consecutive vertices are more than 180° of longitude apart the
/// edge is taken the short way round, by unwrapping longitudes past ±180. A ring may not enclose a pole.
/// Invariant: at least 3 distinct vertices, all valid coordinates, no two non-adjacent edges intersect.
public struct Polygon: Hashable, Sendable {
    /// The vertices as given (closing vertex dropped).
    public let vertices: [Coordinate]
    /// Unwrapped longitudes (may leave -180...180) paired with latitudes, closed implicitly.
    private let ring: [(x: Double, y: Double)]
    /// The box of the polygon, possibly crossing the antimeridian.
    public let boundingBox: BoundingBox

    public static let maximumVertices = 10_000

    public init(vertices input: [Coordinate]) throws(GeoError) {
        var vertices = input
        if vertices.count > 1, vertices.first == vertices.last { vertices.removeLast() }
        guard vertices.count >= 3 else { throw .invalidPolygon("must have at least 3 vertices") }
        guard vertices.count <= Polygon.maximumVertices else {
            throw .invalidPolygon("must have at most \(Polygon.maximumVertices) vertices")
        }
        var ring: [(x: Double, y: Double)] = []
        ring.reserveCapacity(vertices.count)
        var previous = vertices[0].longitude
        for vertex in vertices {
            var x = vertex.longitude
            while x - previous > 180 { x -= 360 }
            while previous - x > 180 { x += 360 }
            ring.append((x, vertex.latitude))
            previous = x
        }
        let closingGap = ring[ring.count - 1].x - ring[0].x
        guard abs(closingGap) <= 180 else { throw .invalidPolygon("must not enclose a pole") }
        if let (i, j) = Polygon.firstSelfIntersection(ring) {
            throw .invalidPolygon("must not intersect itself (edges \(i + 1) and \(j + 1) cross)")
        }
        guard Polygon.area2(ring) != 0 else { throw .invalidPolygon("must enclose an area (its vertices are collinear)") }
        let xs = ring.map(\.x)
        let ys = ring.map(\.y)
        let minX = xs.min()!
        let maxX = xs.max()!
        let box: BoundingBox
        if maxX - minX >= 360 {
            box = BoundingBox(uncheckedWest: -180, south: ys.min()!, east: 180, north: ys.max()!)
        } else {
            box = BoundingBox(
                uncheckedWest: Coordinate.wrapLongitude(minX),
                south: ys.min()!,
                east: Coordinate.wrapLongitude(maxX),
                north: ys.max()!
            )
        }
        self.vertices = vertices
        self.ring = ring
        self.boundingBox = box
    }

    /// Parses `"lon,lat;lon,lat;..."`.
    public init(parsing text: String) throws(GeoError) {
        var vertices: [Coordinate] = []
        for (index, pair) in text.split(separator: ";", omittingEmptySubsequences: true).enumerated() {
            let parts = pair.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2,
                let lon = DecimalNumber.parse(parts[0].trimmingCharacters(in: .whitespaces)),
                let lat = DecimalNumber.parse(parts[1].trimmingCharacters(in: .whitespaces))
            else {
                throw .invalidPolygon("vertex \(index + 1) must be two numbers lon,lat")
            }
            do {
                vertices.append(try Coordinate(latitude: lat, longitude: lon))
            } catch {
                throw .invalidPolygon("vertex \(index + 1): \(error.description)")
            }
            if vertices.count > Polygon.maximumVertices {
                throw .invalidPolygon("must have at most \(Polygon.maximumVertices) vertices")
            }
        }
        try self.init(vertices: vertices)
    }

    /// Even-odd ray casting (W. R. Franklin, PNPOLY). Points exactly on an edge may fall either way.
    public func contains(latitude: Double, longitude: Double) -> Bool {
        guard boundingBox.contains(latitude: latitude, longitude: longitude) else { return false }
        for shift in [0.0, 360, -360] where containsUnwrapped(x: longitude + shift, y: latitude) {
            return true
        }
        return false
    }

    public func contains(_ point: Coordinate) -> Bool { contains(latitude: point.latitude, longitude: point.longitude) }

    private func containsUnwrapped(x: Double, y: Double) -> Bool {
        var inside = false
        var j = ring.count - 1
        for i in 0..<ring.count {
            let (xi, yi) = ring[i]
            let (xj, yj) = ring[j]
            if (yi > y) != (yj > y), x < (xj - xi) * (y - yi) / (yj - yi) + xi {
                inside.toggle()
            }
            j = i
        }
        return inside
    }

    public static func == (lhs: Polygon, rhs: Polygon) -> Bool { lhs.vertices == rhs.vertices }
    public func hash(into hasher: inout Hasher) { hasher.combine(vertices) }

    private static func area2(_ ring: [(x: Double, y: Double)]) -> Double {
        var sum = 0.0
        var j = ring.count - 1
        for i in 0..<ring.count {
            sum += (ring[j].x * ring[i].y) - (ring[i].x * ring[j].y)
            j = i
        }
        return sum
    }

    /// The first pair of non-adjacent edges that touch or cross. O(n²), which is fine for hand-drawn polygons;
    /// large rings skip the check above 2 000 vertices.
    private static func firstSelfIntersection(_ ring: [(x: Double, y: Double)]) -> (Int, Int)? {
        let n = ring.count
        guard n > 3, n <= 2_000 else { return nil }
        for i in 0..<n {
            let a = ring[i]
            let b = ring[(i + 1) % n]
            for j in stride(from: i + 2, to: n, by: 1) {
                if i == 0 && j == n - 1 { continue }
                let c = ring[j]
                let d = ring[(j + 1) % n]
                if segmentsIntersect(a, b, c, d) { return (i, j) }
            }
        }
        return nil
    }

    private static func segmentsIntersect(
        _ p1: (x: Double, y: Double),
        _ p2: (x: Double, y: Double),
        _ p3: (x: Double, y: Double),
        _ p4: (x: Double, y: Double)
    ) -> Bool {
        func orient(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double), _ c: (x: Double, y: Double)) -> Double {
            (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
        }
        func onSegment(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double), _ c: (x: Double, y: Double)) -> Bool {
            min(a.x, b.x) <= c.x && c.x <= max(a.x, b.x) && min(a.y, b.y) <= c.y && c.y <= max(a.y, b.y)
        }
        let d1 = orient(p3, p4, p1)
        let d2 = orient(p3, p4, p2)
        let d3 = orient(p1, p2, p3)
        let d4 = orient(p1, p2, p4)
        if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) { return true }
        if d1 == 0 && onSegment(p3, p4, p1) { return true }
        if d2 == 0 && onSegment(p3, p4, p2) { return true }
        if d3 == 0 && onSegment(p1, p2, p3) { return true }
        if d4 == 0 && onSegment(p1, p2, p4) { return true }
        return false
    }
}
