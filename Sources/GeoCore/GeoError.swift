/// Errors raised by GeoCore. Each case names the value and the rule it broke, so that the HTTP layer and the CLI
/// can show `description` to a user as it is.
public enum GeoError: Error, Equatable, Sendable, CustomStringConvertible {
    case notFinite(name: String)
    case latitudeOutOfRange(Double)
    case longitudeOutOfRange(Double)
    case invalidGeohashPrecision(Int)
    case invalidGeohash(String)
    case tooManyCells(limit: Int)
    case invalidRadius(Double)
    case invalidBoundingBox(String)
    case invalidPolygon(String)
    case unknownCRS(String)
    case conversionFailed(String)
    /// A point of a batch (0-based `index`) that is invalid or cannot be converted.
    case invalidPoint(index: Int, reason: String)

    /// The parameter the error is about (`lat`, `bbox`, …), nil when it is about no one parameter.
    public var parameter: String? {
        switch self {
        case .notFinite(let name): return name
        case .latitudeOutOfRange: return "lat"
        case .longitudeOutOfRange: return "lon"
        case .invalidGeohashPrecision: return "precision"
        case .invalidGeohash: return "geohash"
        case .invalidRadius: return "radius"
        case .invalidBoundingBox: return "bbox"
        case .invalidPolygon: return "polygon"
        case .tooManyCells, .unknownCRS, .conversionFailed, .invalidPoint: return nil
        }
    }

    /// The rule broken, without the parameter's name.
    public var rule: String {
        switch self {
        case .notFinite: return "must be a finite number"
        case .latitudeOutOfRange(let value): return "must be a number between -90 and 90 (got \(value))"
        case .longitudeOutOfRange(let value): return "must be a number between -180 and 180 (got \(value))"
        case .invalidGeohashPrecision(let value): return "must be an integer between 1 and 12 (got \(value))"
        case .invalidGeohash(let value):
            return "must be 1 to 12 characters of the geohash alphabet 0-9, b-h, j, k, m, n, p-z (got \"\(value)\")"
        case .tooManyCells(let limit):
            return "the area covers more than \(limit) geohash cells at this precision; use a lower precision or a smaller area"
        case .invalidRadius(let value): return "must be a positive number of metres (got \(value))"
        case .invalidBoundingBox(let reason), .invalidPolygon(let reason): return reason
        case .unknownCRS(let name):
            return "unknown coordinate system \"\(name)\": use wgs84, gcj02, bd09 or EPSG:<code> of a CRS known to PROJ"
        case .conversionFailed(let reason): return "conversion failed: \(reason)"
        case .invalidPoint(let index, let reason): return "point \(index + 1): \(reason)"
        }
    }

    public var description: String { parameter.map { "\($0) \(rule)" } ?? rule }
}
