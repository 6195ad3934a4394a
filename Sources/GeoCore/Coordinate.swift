/// A validated WGS-84 (or GCJ-02/BD-09, by context) position in decimal degrees.
///
/// Invariant: `latitude` is finite and in -90...90, `longitude` is finite and in -180...180.
public struct Coordinate: Hashable, Sendable, CustomStringConvertible {
    public let latitude: Double
    public let longitude: Double

    /// Validates and creates a coordinate.
    /// - Throws: `GeoError.notFinite`, `.latitudeOutOfRange` or `.longitudeOutOfRange`.
    public init(latitude: Double, longitude: Double) throws(GeoError) {
        guard latitude.isFinite else { throw .notFinite(name: "lat") }
        guard longitude.isFinite else { throw .notFinite(name: "lon") }
        guard (-90.0...90.0).contains(latitude) else { throw .latitudeOutOfRange(latitude) }
        guard (-180.0...180.0).contains(longitude) else { throw .longitudeOutOfRange(longitude) }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Creates a coordinate from values the caller has already validated (or computed from valid ones).
    /// Longitude is wrapped into -180...180 and latitude clamped, so the invariant holds whatever the input.
    public init(uncheckedLatitude latitude: Double, longitude: Double) {
        self.latitude = min(90, max(-90, latitude))
        self.longitude = Coordinate.wrapLongitude(longitude)
    }

    /// Wraps any finite longitude into -180...180 (180 stays 180).
    public static func wrapLongitude(_ longitude: Double) -> Double {
        if (-180.0...180.0).contains(longitude) { return longitude }
        var wrapped = (longitude + 180).truncatingRemainder(dividingBy: 360)
        if wrapped < 0 { wrapped += 360 }
        return wrapped - 180
    }

    public var description: String { "\(latitude),\(longitude)" }
}
