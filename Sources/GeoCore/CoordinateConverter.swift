import Synchronization

/// Converts points between WGS-84, GCJ-02, BD-09 and any CRS PROJ knows.
///
/// GCJ-02 and BD-09 are not modelled by PROJ (OSGeo/PROJ#982), so conversions involving them chain through
/// WGS-84 with `ChinaDatum`; everything else goes to PROJ in one batch call. PROJ transformations are expensive
/// to create and not thread-safe, so they are kept in a pool keyed by (source, target): a batch checks one out,
/// uses it alone and puts it back. Any number of threads may convert at once.
public final class CoordinateConverter: Sendable {
    public static let shared = CoordinateConverter()

    private let pool = Mutex<[String: [ProjTransformation]]>([:])
    /// How many idle transformations to keep per CRS pair.
    private let idleLimit = 8

    public init() {}

    /// Converts one point.
    public func convert(_ point: XY, from source: CRS, to target: CRS) throws(GeoError) -> XY {
        var points = [point]
        try convert(&points, from: source, to: target)
        return points[0]
    }

    /// Converts points in place. Geographic input is validated (finite, longitude -180…180, latitude -90…90);
    /// the error names the first bad point (1-based).
    /// - Throws: `GeoError.unknownCRS` for a CRS PROJ does not know, `.conversionFailed` for a point outside the
    ///   target's domain, or a coordinate error for invalid input.
    public func convert(_ points: inout [XY], from source: CRS, to target: CRS) throws(GeoError) {
        // Resolve the PROJ legs first, so an unknown CRS is reported even for an empty batch.
        let projLeg = try projLeg(from: source, to: target)
        defer { if let projLeg { checkIn(projLeg) } }
        try validate(points, source: source, geographic: source.isGeographicDegrees || projLeg?.sourceIsGeographic == true)
        if source == target {
            return
        }
        Self.chinaDatum(&points, source.chinaDatumToWGS84)
        if let projLeg {
            let input = points
            projLeg.transform(&points)
            if let bad = points.firstIndex(where: { !$0.x.isFinite || !$0.y.isFinite }) {
                throw .invalidPoint(index: bad, reason: "cannot be converted from \(source) to \(target) (outside the area of use)")
            }
            try checkRoundTrip(input: input, output: points, leg: projLeg, source: source, target: target)
        }
        Self.chinaDatum(&points, target.chinaDatumFromWGS84)
    }

    /// Applies a China-datum shift (nil: none) to every point.
    private static func chinaDatum(_ points: inout [XY], _ shift: ChinaDatum.Shift?) {
        guard let shift else { return }
        for i in points.indices {
            let moved = shift(points[i].y, points[i].x)
            points[i] = XY(x: moved.longitude, y: moved.latitude)
        }
    }

    /// The PROJ transformation needed between the two CRSs, checked out of the pool, or nil when none is needed.
    private func projLeg(from source: CRS, to target: CRS) throws(GeoError) -> ProjTransformation? {
        let sourceName: String
        let targetName: String
        switch (source, target) {
        case (.epsg(let a), .epsg(let b)):
            if a == b {
                // Still check that the code exists.
                sourceName = "EPSG:\(a)"
                targetName = "EPSG:\(a)"
            } else {
                sourceName = "EPSG:\(a)"
                targetName = "EPSG:\(b)"
            }
        case (.epsg(let a), _):
            sourceName = "EPSG:\(a)"
            targetName = "EPSG:4326"
        case (_, .epsg(let b)):
            sourceName = "EPSG:4326"
            targetName = "EPSG:\(b)"
        default:
            return nil
        }
        let key = sourceName + ">" + targetName
        if let idle = pool.withLock({ $0[key]?.popLast() }) {
            return idle
        }
        return try ProjTransformation(source: sourceName, target: targetName)
    }

    private func checkIn(_ transformation: ProjTransformation) {
        let key = transformation.source + ">" + transformation.target
        pool.withLock { idle in
            if idle[key, default: []].count < idleLimit {
                idle[key, default: []].append(transformation)
            }
        }
    }

    /// PROJ clamps or wraps some input outside a projection's domain instead of failing (EPSG:3857 at x = y = 1e300
    /// answers longitude -180, latitude 90). A point whose answer does not convert back to it was outside the
    /// domain: it is refused, not answered with a clamped value.
    private func checkRoundTrip(input: [XY], output: [XY], leg: ProjTransformation, source: CRS, target: CRS) throws(GeoError) {
        var back = output
        leg.transform(&back, inverse: true)
        let degrees = leg.sourceIsGeographic || source.isGeographicDegrees
        for index in input.indices {
            let a = input[index]
            let b = back[index]
            var dx = abs(a.x - b.x)
            let dy = abs(a.y - b.y)
            if degrees {
                dx = min(dx, abs(360 - dx))
                // At a pole every longitude is the same point.
                if abs(a.y) > 89.999_999 { dx = 0 }
                if dx <= 1e-6 && dy <= 1e-6 { continue }
            } else if dx <= 1e-2 + 1e-9 * abs(a.x) && dy <= 1e-2 + 1e-9 * abs(a.y) {
                continue
            }
            throw .invalidPoint(index: index, reason: "(\(a.x), \(a.y)) is outside the domain of \(source) for conversion to \(target)")
        }
    }

    private func validate(_ points: [XY], source: CRS, geographic: Bool) throws(GeoError) {
        for (index, point) in points.enumerated() {
            guard point.x.isFinite, point.y.isFinite else {
                throw .invalidPoint(index: index, reason: "x and y must be finite numbers")
            }
            if geographic {
                guard (-90.0...90.0).contains(point.y) else {
                    throw .invalidPoint(index: index, reason: "latitude (y) must be between -90 and 90 in \(source) (got \(point.y))")
                }
                guard (-180.0...180.0).contains(point.x) else {
                    throw .invalidPoint(index: index, reason: "longitude (x) must be between -180 and 180 in \(source) (got \(point.x))")
                }
            }
        }
    }
}

extension CRS {
    /// Whether x, y are longitude, latitude degrees without asking PROJ.
    var isGeographicDegrees: Bool {
        switch self {
        case .wgs84, .gcj02, .bd09: return true
        case .epsg: return false
        }
    }
}
