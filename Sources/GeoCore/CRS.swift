import Foundation

/// A coordinate reference system the service converts between.
///
/// `wgs84`, `gcj02` and `bd09` are geographic (x = longitude, y = latitude, degrees). `epsg(code)` is any CRS in
/// PROJ's database; EPSG:4326 is the same thing as `wgs84`. At this API the axis order is always x = longitude or
/// easting, y = latitude or northing, whatever the authority's own order.
public enum CRS: Hashable, Sendable, CustomStringConvertible {
    case wgs84
    case gcj02
    case bd09
    case epsg(Int)

    /// Parses `wgs84`, `gcj02`, `bd09` (any case, with or without a dash) or `EPSG:<code>`. Whether the EPSG code
    /// exists is checked when a conversion is made.
    public init(parsing text: String) throws(GeoError) {
        // Exactly these spellings, in any case (the OpenAPI document's pattern says the same).
        let lowered = text.lowercased()
        switch lowered {
        case "wgs84":
            self = .wgs84
        case "gcj02":
            self = .gcj02
        case "bd09":
            self = .bd09
        default:
            let digits = lowered.dropFirst(5)
            guard lowered.hasPrefix("epsg:"), (1...6).contains(digits.count), digits.first != "0",
                digits.allSatisfy({ $0.isASCII && $0.isNumber }), let code = Int(digits)
            else {
                throw .unknownCRS(text)
            }
            self = code == 4326 ? .wgs84 : .epsg(code)
        }
    }

    /// Whether coordinates in this CRS are longitude/latitude degrees validated as such.
    public var isChinaDatum: Bool { self == .gcj02 || self == .bd09 }

    public var description: String {
        switch self {
        case .wgs84: return "wgs84"
        case .gcj02: return "gcj02"
        case .bd09: return "bd09"
        case .epsg(let code): return "EPSG:\(code)"
        }
    }
}

/// A point in a CRS: x is longitude or easting, y latitude or northing.
public struct XY: Hashable, Sendable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
}
