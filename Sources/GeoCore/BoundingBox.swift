import Foundation

/// A longitude/latitude rectangle, `west,south,east,north` in degrees (RFC 7946 order).
///
/// `west > east` means the box crosses the antimeridian: it covers `west...180` and `-180...east`.
/// Invariant: all four values are finite and in range, and `south <= north`.
public struct BoundingBox: Hashable, Sendable, CustomStringConvertible {
    public let west: Double
    public let south: Double
    public let east: Double
    public let north: Double

    /// The whole globe.
    public static let world = BoundingBox(uncheckedWest: -180, south: -90, east: 180, north: 90)

    /// Validates and creates a box.
    /// - Throws: `GeoError.invalidBoundingBox` naming the rule that failed.
    public init(west: Double, south: Double, east: Double, north: Double) throws(GeoError) {
        for (name, value) in [("west", west), ("south", south), ("east", east), ("north", north)] where !value.isFinite {
            throw .invalidBoundingBox("\(name) must be a finite number")
        }
        guard (-180.0...180.0).contains(west), (-180.0...180.0).contains(east) else {
            throw .invalidBoundingBox("west and east must be between -180 and 180")
        }
        guard (-90.0...90.0).contains(south), (-90.0...90.0).contains(north) else {
            throw .invalidBoundingBox("south and north must be between -90 and 90")
        }
        guard south <= north else { throw .invalidBoundingBox("south must not be greater than north") }
        self.init(uncheckedWest: west, south: south, east: east, north: north)
    }

    /// Parses `"west,south,east,north"`.
    public init(parsing text: String) throws(GeoError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 4 else { throw .invalidBoundingBox("must be four numbers west,south,east,north") }
        var values: [Double] = []
        for (part, name) in zip(parts, ["west", "south", "east", "north"]) {
            guard let value = DecimalNumber.parse(part.trimmingCharacters(in: .whitespaces)) else {
                throw .invalidBoundingBox("\(name) must be a decimal number (got \"\(part.prefix(40))\")")
            }
            values.append(value)
        }
        try self.init(west: values[0], south: values[1], east: values[2], north: values[3])
    }

    /// Creates a box from values known to be valid.
    public init(uncheckedWest west: Double, south: Double, east: Double, north: Double) {
        self.west = west
        self.south = south
        self.east = east
        self.north = north
    }

    public var crossesAntimeridian: Bool { west > east }

    /// Width in degrees of longitude, 0...360.
    public var longitudeSpan: Double { crossesAntimeridian ? 360 - (west - east) : east - west }

    /// The one or two boxes, none crossing the antimeridian, whose union is this box.
    public var antimeridianParts: [BoundingBox] {
        guard crossesAntimeridian else { return [self] }
        return [
            BoundingBox(uncheckedWest: west, south: south, east: 180, north: north),
            BoundingBox(uncheckedWest: -180, south: south, east: east, north: north),
        ]
    }

    public func containsLongitude(_ longitude: Double) -> Bool {
        crossesAntimeridian ? (longitude >= west || longitude <= east) : (longitude >= west && longitude <= east)
    }

    /// Whether the point lies inside or on the edge of the box.
    public func contains(latitude: Double, longitude: Double) -> Bool {
        latitude >= south && latitude <= north && containsLongitude(longitude)
    }

    public func contains(_ point: Coordinate) -> Bool { contains(latitude: point.latitude, longitude: point.longitude) }

    /// Whether the two boxes share at least one point.
    public func intersects(_ other: BoundingBox) -> Bool {
        guard south <= other.north, other.south <= north else { return false }
        for a in antimeridianParts {
            for b in other.antimeridianParts where a.west <= b.east && b.west <= a.east {
                return true
            }
        }
        return false
    }

    /// The smallest box containing every point within `radius` metres of `center`.
    ///
    /// Follows J. P. Matuschek, "Finding Points Within a Distance of a Latitude/Longitude Using Bounding
    /// Coordinates": when the circle reaches a pole the box spans all longitudes; otherwise the longitude
    /// half-width is asin(sin δ / cos φ), and the box may cross the antimeridian.
    public static func around(_ center: Coordinate, radius: Double) -> BoundingBox {
        let delta = GreatCircle.angle(forDistance: max(0, radius))
        if delta >= .pi { return .world }
        let phi = center.latitude * .pi / 180
        let south = phi - delta
        let north = phi + delta
        if south <= -.pi / 2 || north >= .pi / 2 {
            return BoundingBox(
                uncheckedWest: -180,
                south: max(-90, south * 180 / .pi),
                east: 180,
                north: min(90, north * 180 / .pi)
            )
        }
        let ratio = sin(delta) / cos(phi)
        if ratio >= 1 {
            return BoundingBox(uncheckedWest: -180, south: south * 180 / .pi, east: 180, north: north * 180 / .pi)
        }
        let dLambda = asin(ratio) * 180 / .pi
        var west = center.longitude - dLambda
        var east = center.longitude + dLambda
        if west < -180 { west += 360 }
        if east > 180 { east -= 360 }
        return BoundingBox(uncheckedWest: west, south: south * 180 / .pi, east: east, north: north * 180 / .pi)
    }

    /// The shortest great-circle distance in metres from `point` to any point of the box (0 inside).
    ///
    /// When the point's longitude lies within the box, the nearest point is straight north or south of it.
    /// Otherwise it lies on one of the two bounding meridians: the distance to points on a parallel grows with
    /// the longitude difference, so no point of the top or bottom edge is nearer than that edge's end.
    /// Along a meridian at longitude difference Δλ, cos d = A sin φ' + B cos φ' with A = sin φ,
    /// B = cos φ cos Δλ, that is R cos(φ' − α) with α = atan2(A, B): for B > 0 it peaks inside -90°...90° and is
    /// unimodal there, so the nearest point of the edge is α clamped to the edge; for B ≤ 0 it is U-shaped there
    /// and the nearest point is an end of the edge.
    public func minimumDistance(from point: Coordinate) -> Double {
        let lat = point.latitude
        if containsLongitude(point.longitude) {
            if lat > north { return (lat - north) * .pi / 180 * GreatCircle.earthRadius }
            if lat < south { return (south - lat) * .pi / 180 * GreatCircle.earthRadius }
            return 0
        }
        return min(meridianDistance(point, longitude: west), meridianDistance(point, longitude: east))
    }

    private func meridianDistance(_ point: Coordinate, longitude: Double) -> Double {
        func distance(toLatitude latitude: Double) -> Double {
            GreatCircle.distance(latitude1: point.latitude, longitude1: point.longitude, latitude2: latitude, longitude2: longitude)
        }
        // The edge's ends are always candidates; the interior maximiser of cos d only exists when B > 0 (for
        // B <= 0, f is U-shaped on -90°...90° and peaks at an end).
        var best = min(distance(toLatitude: south), distance(toLatitude: north))
        let phi = point.latitude * .pi / 180
        let b = cos(phi) * cos((longitude - point.longitude) * .pi / 180)
        if b > 0 {
            let peak = atan2(sin(phi), b) * 180 / .pi
            if peak > south && peak < north { best = min(best, distance(toLatitude: peak)) }
        }
        return best
    }

    public var description: String { "\(west),\(south),\(east),\(north)" }
}
