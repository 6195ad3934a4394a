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

    public init(x: Double, y: Double) { (self.x, self.y) = (x, y) }
}

extension CRS {
    /// The shift from this system to WGS-84 when it is one of the datums of maps published in China; nil otherwise.
    var chinaDatumToWGS84: ChinaDatum.Shift? {
        switch self {
        case .gcj02: return ChinaDatum.gcj02ToWGS84
        case .bd09: return ChinaDatum.bd09ToWGS84
        case .wgs84, .epsg: return nil
        }
    }

    /// The shift from WGS-84 to this system when it is one of the datums of maps published in China; nil otherwise.
    var chinaDatumFromWGS84: ChinaDatum.Shift? {
        switch self {
        case .gcj02: return ChinaDatum.wgs84ToGCJ02
        case .bd09: return ChinaDatum.wgs84ToBD09
        case .wgs84, .epsg: return nil
        }
    }
}

extension CRS {
    /// The longitude/latitude systems in which a request may give and receive positions (the `coordsys` parameter
    /// of the HTTP API and `--coordsys` of the CLI): WGS-84, and the two datums of maps published in China. Unlike
    /// `epsg(_:)`, a conversion to or from WGS-84 is a closed formula and cannot fail.
    public enum Geographic: String, Sendable, CaseIterable, CustomStringConvertible {
        case wgs84, gcj02, bd09

        /// `wgs84`, `gcj02` or `bd09` in any case; nil otherwise.
        public init?(name: some StringProtocol) {
            self.init(rawValue: name.lowercased())
        }

        public var crs: CRS {
            switch self {
            case .wgs84: return .wgs84
            case .gcj02: return .gcj02
            case .bd09: return .bd09
            }
        }

        public var description: String { rawValue }

        /// A position given in this system, in WGS-84.
        public func toWGS84(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
            crs.chinaDatumToWGS84?(latitude, longitude) ?? (latitude, longitude)
        }

        /// A WGS-84 position in this system.
        public func fromWGS84(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
            crs.chinaDatumFromWGS84?(latitude, longitude) ?? (latitude, longitude)
        }

        public func toWGS84(_ c: Coordinate) -> Coordinate {
            let w = toWGS84(latitude: c.latitude, longitude: c.longitude)
            return Coordinate(uncheckedLatitude: w.latitude, longitude: w.longitude)
        }

        public func fromWGS84(_ c: Coordinate) -> Coordinate {
            let p = fromWGS84(latitude: c.latitude, longitude: c.longitude)
            return Coordinate(uncheckedLatitude: p.latitude, longitude: p.longitude)
        }

        /// A box given in this system, in WGS-84 (corners converted; exact away from the China boundary).
        public func toWGS84(_ box: BoundingBox) -> BoundingBox {
            guard self != .wgs84 else { return box }
            let sw = toWGS84(latitude: box.south, longitude: box.west)
            let ne = toWGS84(latitude: box.north, longitude: box.east)
            return BoundingBox(
                uncheckedWest: sw.longitude,
                south: min(sw.latitude, ne.latitude),
                east: ne.longitude,
                north: max(sw.latitude, ne.latitude)
            )
        }

        /// A WGS-84 box holding every position that lies in `box` when drawn in this system: the corners' image grown
        /// by 0.01°, more than the datums move positions relative to one another across any box (they shift a position
        /// by at most ~700 m, smoothly). Search it, then keep what falls in `box` once converted (vector tiles).
        public func wgs84SearchBox(_ box: BoundingBox) -> BoundingBox {
            guard self != .wgs84 else { return box }
            let image = toWGS84(box)
            return BoundingBox(
                uncheckedWest: max(-180, image.west - 0.01),
                south: max(-90, image.south - 0.01),
                east: min(180, image.east + 0.01),
                north: min(90, image.north + 0.01)
            )
        }

        /// A box holding a WGS-84 box's image in this system (TileJSON's `bounds` of a GCJ-02 map): the smallest one,
        /// but near the edges of the area where the datums' offsets apply.
        ///
        /// Inside that area (`ChinaDatum.isInChina`) and outside it the datums move positions smoothly and by at most
        /// ~700 m, so the image of the box is bounded by the image of its edges. They are sampled every 0.01° (36 000
        /// points at most an edge) and the result grown by 1e-4° (~11 m), more than such sampling can miss of a peak:
        /// BD-09's fastest term (3e-6·cos(3000x°), period 0.12°, ~4e-4° at Chinese longitudes) moves at most ~1.5e-5°
        /// between samples, GCJ-02's less. At the area's edges the conversions jump (BD-09 adds its offset only where
        /// the GCJ-02 image is inside too, a band up to ~0.012° wide that sampling could step over), so within 0.05° of
        /// an edge every conversion that may apply there is taken, and the box may be that much larger.
        public func fromWGS84(_ box: BoundingBox) -> BoundingBox {
            guard self != .wgs84 else { return box }
            var (west, south, east, north) = (Double.infinity, Double.infinity, -Double.infinity, -Double.infinity)
            func include(_ p: (latitude: Double, longitude: Double)) {
                (west, east) = (min(west, p.longitude), max(east, p.longitude))
                (south, north) = (min(south, p.latitude), max(north, p.latitude))
            }
            func add(_ latitude: Double, _ longitude: Double) {
                include(fromWGS84(latitude: latitude, longitude: longitude))
                guard ChinaDatum.isNearTheEdge(latitude: latitude, longitude: longitude, within: 0.05) else { return }
                include((latitude, longitude))
                let gcj = ChinaDatum.gcjOffset(latitude: latitude, longitude: longitude)
                include(gcj)
                if self == .bd09 { include(ChinaDatum.bdOffset(latitude: gcj.latitude, longitude: gcj.longitude)) }
            }
            func steps(_ degrees: Double) -> Int { max(1, Int((degrees / 0.01).rounded(.up))) }
            let columns = steps(box.east - box.west)
            for i in 0...columns {
                let longitude = i == columns ? box.east : box.west + (box.east - box.west) * Double(i) / Double(columns)
                add(box.south, longitude)
                add(box.north, longitude)
            }
            let rows = steps(box.north - box.south)
            for j in 0...rows {
                let latitude = j == rows ? box.north : box.south + (box.north - box.south) * Double(j) / Double(rows)
                add(latitude, box.west)
                add(latitude, box.east)
            }
            let pad = 1e-4
            return BoundingBox(
                uncheckedWest: max(-180, west - pad),
                south: max(-90, south - pad),
                east: min(180, east + pad),
                north: min(90, north + pad)
            )
        }

        public func toWGS84(_ polygon: Polygon) -> Polygon {
            guard self != .wgs84 else { return polygon }
            return (try? Polygon(vertices: polygon.vertices.map { toWGS84($0) })) ?? polygon
        }
    }

    /// This CRS as a request coordinate system, when it is one.
    public var geographic: Geographic? {
        switch self {
        case .wgs84: return .wgs84
        case .gcj02: return .gcj02
        case .bd09: return .bd09
        case .epsg: return nil
        }
    }
}
