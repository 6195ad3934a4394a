import CProj
import Foundation

/// The Chinese map datums: GCJ-02 ("Mars coordinates", required on maps published in China and used by AMap
/// and Tencent) and BD-09 (Baidu's further offset of GCJ-02).
///
/// GCJ-02 is WGS-84 plus an obfuscating offset of a few hundred metres given by the widely published formula
/// (Krasovsky ellipsoid a = 6378245.0 m, e² = 0.00669342162296594323). The offset is applied only inside the
/// rectangle longitude 72.004…137.8347, latitude 0.8293…55.8271 — the boundary used by the published reference
/// implementations (eviltransform, coordtransform) and so by the data those produce. Outside it every datum here
/// equals WGS-84; that includes BD-09, so the three datums agree everywhere outside China.
///
/// The inverses have no closed form: the popular one-step inverse `g - (f(g) - g)` is off by 1–2 m. Here they
/// iterate the forward map to a fixed point, w ← w − (f(w) − g), which converges because the offset's
/// derivative is tiny (|∂offset/∂w| < 10⁻³): each step cuts the error by three orders of magnitude, so three to
/// five steps reach the 10⁻⁹° (~0.1 mm) stopping tolerance.
public enum ChinaDatum {
    /// A conversion between WGS-84 and one of the datums: (latitude, longitude) to (latitude, longitude).
    public typealias Shift = (_ latitude: Double, _ longitude: Double) -> (latitude: Double, longitude: Double)

    static let krasovskyA = 6_378_245.0
    static let krasovskyEE = 0.00669342162296594323
    static let bdFactor = Double.pi * 3000.0 / 180.0
    /// Stop iterating an inverse once the forward image is this close to the target, in degrees.
    public static let inverseTolerance = 1e-10
    static let maximumIterations = 30

    /// Whether the GCJ-02 offset applies at a WGS-84 (or GCJ-02) position.
    @inlinable
    public static func isInChina(latitude: Double, longitude: Double) -> Bool {
        longitude >= area.west && longitude <= area.east && latitude >= area.south && latitude <= area.north
    }

    /// The area where the offsets apply (`isInChina`).
    @usableFromInline static let area = (west: 72.004, south: 0.8293, east: 137.8347, north: 55.8271)

    /// Whether a position lies within `degrees` of an edge of the area where the offsets apply, where the
    /// conversions jump.
    static func isNearTheEdge(latitude: Double, longitude: Double, within degrees: Double) -> Bool {
        let nearLongitude =
            min(abs(longitude - area.west), abs(longitude - area.east)) <= degrees && latitude >= area.south - degrees
            && latitude <= area.north + degrees
        let nearLatitude =
            min(abs(latitude - area.south), abs(latitude - area.north)) <= degrees && longitude >= area.west - degrees
            && longitude <= area.east + degrees
        return nearLongitude || nearLatitude
    }

    // MARK: GCJ-02

    /// WGS-84 → GCJ-02.
    public static func wgs84ToGCJ02(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        guard isInChina(latitude: latitude, longitude: longitude) else { return (latitude, longitude) }
        return gcjOffset(latitude: latitude, longitude: longitude)
    }

    /// GCJ-02 → WGS-84, exact to `inverseTolerance` (see the type's notes).
    public static func gcj02ToWGS84(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        guard isInChina(latitude: latitude, longitude: longitude) else { return (latitude, longitude) }
        return invert(gcjOffset, latitude: latitude, longitude: longitude, from: (latitude, longitude))
    }

    /// The point that `forward` maps to (`latitude`, `longitude`), by fixed-point iteration from `start`: each step
    /// moves the guess by how far its image misses, until that is under `inverseTolerance` in both coordinates.
    static func invert(
        _ forward: (_ latitude: Double, _ longitude: Double) -> (latitude: Double, longitude: Double),
        latitude: Double,
        longitude: Double,
        from start: (latitude: Double, longitude: Double)
    ) -> (latitude: Double, longitude: Double) {
        var (lat, lon) = start
        for _ in 0..<maximumIterations {
            let image = forward(lat, lon)
            let dLat = image.latitude - latitude
            let dLon = image.longitude - longitude
            lat -= dLat
            lon -= dLon
            if abs(dLat) < inverseTolerance && abs(dLon) < inverseTolerance { break }
        }
        return (lat, lon)
    }

    /// The GCJ-02 position of a WGS-84 one, without the China test.
    ///
    /// The published formula makes fourteen trigonometric calls; the same values come from six here
    /// through exact identities (sin 2a = 2 sin a cos a, sin 3a = 3 sin a − 4 sin³ a, sin 4a = 2 sin 2a cos 2a),
    /// which changes results only in the last bits (checked against the published vectors to 1e-12°).
    static func gcjOffset(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        let x = longitude - 105.0
        let y = latitude - 35.0
        let sqrtAbsX = sqrt(abs(x))
        // x terms: sin(xπ), sin(2xπ), sin(6xπ), sin(xπ/3), sin(xπ/12), sin(xπ/30).
        let (sinX, cosX) = sinCos(x * .pi)
        let sin2X = 2 * sinX * cosX
        let sin6X = sin2X * (3 - 4 * sin2X * sin2X)
        let (sinX12, cosX12) = sinCos(x * .pi / 12)
        let sinX6 = 2 * sinX12 * cosX12
        let cosX6 = 1 - 2 * sinX12 * sinX12
        let sinX3 = 2 * sinX6 * cosX6
        let sinX30 = sin(x * .pi / 30)
        // y terms: sin(yπ), sin(yπ/3), sin(yπ/12), sin(yπ/30).
        let (sinY12, cosY12) = sinCos(y / 12.0 * .pi)
        let sinY6 = 2 * sinY12 * cosY12
        let cosY6 = 1 - 2 * sinY12 * sinY12
        let sinY3 = 2 * sinY6 * cosY6
        let sinY = sinY3 * (3 - 4 * sinY3 * sinY3)
        let sinY30 = sin(y * .pi / 30.0)
        let common = (20.0 * sin6X + 20.0 * sin2X) * 2.0 / 3.0
        var dLat = -100.0 + 2.0 * x + 3.0 * y + 0.2 * y * y + 0.1 * x * y + 0.2 * sqrtAbsX
        dLat += common
        dLat += (20.0 * sinY + 40.0 * sinY3) * 2.0 / 3.0
        dLat += (160.0 * sinY12 + 320 * sinY30) * 2.0 / 3.0
        var dLon = 300.0 + x + 2.0 * y + 0.1 * x * x + 0.1 * x * y + 0.1 * sqrtAbsX
        dLon += common
        dLon += (20.0 * sinX + 40.0 * sinX3) * 2.0 / 3.0
        dLon += (150.0 * sinX12 + 300.0 * sinX30) * 2.0 / 3.0
        let (sinLat, cosLat) = sinCos(latitude / 180.0 * .pi)
        let magic = 1 - krasovskyEE * sinLat * sinLat
        let sqrtMagic = sqrt(magic)
        dLat = (dLat * 180.0) / ((krasovskyA * (1 - krasovskyEE)) / (magic * sqrtMagic) * .pi)
        dLon = (dLon * 180.0) / (krasovskyA / sqrtMagic * cosLat * .pi)
        return (latitude + dLat, longitude + dLon)
    }

    /// The published formula term by term (eviltransform's transformLat/transformLon), kept as the reference the
    /// tests compare the fast form with.
    static func referenceOffset(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        let x = longitude - 105.0
        let y = latitude - 35.0
        var dLat = transformLatitude(x: x, y: y)
        var dLon = transformLongitude(x: x, y: y)
        let radLat = latitude / 180.0 * .pi
        var magic = sin(radLat)
        magic = 1 - krasovskyEE * magic * magic
        let sqrtMagic = sqrt(magic)
        dLat = (dLat * 180.0) / ((krasovskyA * (1 - krasovskyEE)) / (magic * sqrtMagic) * .pi)
        dLon = (dLon * 180.0) / (krasovskyA / sqrtMagic * cos(radLat) * .pi)
        return (latitude + dLat, longitude + dLon)
    }

    static func transformLatitude(x: Double, y: Double) -> Double {
        var ret = -100.0 + 2.0 * x + 3.0 * y + 0.2 * y * y + 0.1 * x * y + 0.2 * sqrt(abs(x))
        ret += (20.0 * sin(6.0 * x * .pi) + 20.0 * sin(2.0 * x * .pi)) * 2.0 / 3.0
        ret += (20.0 * sin(y * .pi) + 40.0 * sin(y / 3.0 * .pi)) * 2.0 / 3.0
        ret += (160.0 * sin(y / 12.0 * .pi) + 320 * sin(y * .pi / 30.0)) * 2.0 / 3.0
        return ret
    }

    static func transformLongitude(x: Double, y: Double) -> Double {
        var ret = 300.0 + x + 2.0 * y + 0.1 * x * x + 0.1 * x * y + 0.1 * sqrt(abs(x))
        ret += (20.0 * sin(6.0 * x * .pi) + 20.0 * sin(2.0 * x * .pi)) * 2.0 / 3.0
        ret += (20.0 * sin(x * .pi) + 40.0 * sin(x / 3.0 * .pi)) * 2.0 / 3.0
        ret += (150.0 * sin(x / 12.0 * .pi) + 300.0 * sin(x / 30.0 * .pi)) * 2.0 / 3.0
        return ret
    }

    @inline(__always)
    static func sinCos(_ angle: Double) -> (Double, Double) {
        var s = 0.0
        var c = 0.0
        geocore_sincos(angle, &s, &c)
        return (s, c)
    }

    // MARK: BD-09

    /// GCJ-02 → BD-09 (Baidu's published formula). Identity outside China, like GCJ-02.
    public static func gcj02ToBD09(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        guard isInChina(latitude: latitude, longitude: longitude) else { return (latitude, longitude) }
        return bdOffset(latitude: latitude, longitude: longitude)
    }

    /// BD-09 → GCJ-02: the published approximate inverse refined by fixed-point iteration of the forward map.
    public static func bd09ToGCJ02(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        guard isInChina(latitude: latitude, longitude: longitude) else { return (latitude, longitude) }
        let x = longitude - 0.0065
        let y = latitude - 0.006
        let z = sqrt(x * x + y * y) - 0.00002 * sin(y * bdFactor)
        let theta = atan2(y, x) - 0.000003 * cos(x * bdFactor)
        return invert(bdOffset, latitude: latitude, longitude: longitude, from: (z * sin(theta), z * cos(theta)))
    }

    static func bdOffset(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        let x = longitude
        let y = latitude
        let z = sqrt(x * x + y * y) + 0.00002 * sin(y * bdFactor)
        let theta = atan2(y, x) + 0.000003 * cos(x * bdFactor)
        return (z * sin(theta) + 0.006, z * cos(theta) + 0.0065)
    }

    /// WGS-84 → BD-09.
    public static func wgs84ToBD09(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        let gcj = wgs84ToGCJ02(latitude: latitude, longitude: longitude)
        return gcj02ToBD09(latitude: gcj.latitude, longitude: gcj.longitude)
    }

    /// BD-09 → WGS-84.
    public static func bd09ToWGS84(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        let gcj = bd09ToGCJ02(latitude: latitude, longitude: longitude)
        return gcj02ToWGS84(latitude: gcj.latitude, longitude: gcj.longitude)
    }
}
