import Foundation

/// A lower bound of the great-circle distance from one point to every point of a latitude/longitude box, cheap
/// enough to take for each block of a posting list: a few multiplications and one square root, no trigonometry.
///
/// The haversine h = sin²(Δφ/2) + cos φ₁ cos φ₂ sin²(Δλ/2) is bounded below term by term: Δφ by the latitude gap
/// to the box, Δλ by the longitude gap (both 0 inside the box's range), cos φ₂ by its least over the box (the
/// latitude furthest from the equator, from a table at whole degrees, rounded outwards), and sin x by x − x³/6 (true
/// for every x ≥ 0). Then d = 2R·asin √h ≥ 2R·√h. Each term's least is no more than its value at the nearest point,
/// so the sum, and the distance, are never above the true least distance (`BoundingBox.minimumDistance`).
public struct DistanceFloor: Sendable {
    @usableFromInline let latitude: Double
    @usableFromInline let longitude: Double
    @usableFromInline let cosLatitude: Double

    public init(from origin: Coordinate) {
        latitude = origin.latitude
        longitude = origin.longitude
        cosLatitude = cos(origin.latitude * .pi / 180)
    }

    /// cos of each whole degree from 0 to 90.
    private static let cosines: [Double] = (0...90).map { cos(Double($0) * .pi / 180) }

    /// At most the distance in metres from the origin to any point of the box (south ≤ north, west ≤ east, in
    /// degrees; a box across the antimeridian is given as the whole range of longitudes it spans).
    @inlinable
    public func metres(south: Double, north: Double, west: Double, east: Double) -> Double {
        let latitudeGap = latitude < south ? south - latitude : (latitude > north ? latitude - north : 0)
        var longitudeGap = 0.0
        if longitude < west || longitude > east {
            func around(_ edge: Double) -> Double {
                let d = abs(longitude - edge).truncatingRemainder(dividingBy: 360)
                return min(d, 360 - d)
            }
            longitudeGap = min(around(west), around(east))
        }
        if latitudeGap == 0 && longitudeGap == 0 { return 0 }
        let farthest = min(90, max(abs(south), abs(north)))
        let cosBox = DistanceFloor.cosine(atLeast: farthest)
        let a = DistanceFloor.sineFloor(latitudeGap * .pi / 360)
        let b = DistanceFloor.sineFloor(longitudeGap * .pi / 360)
        let h = a * a + cosLatitude * cosBox * b * b
        return 2 * GreatCircle.earthRadius * h.squareRoot()
    }

    /// x − x³/6, at most sin x for x ≥ 0 (and positive up to √6, past the π/2 any half gap can reach).
    @inlinable
    static func sineFloor(_ x: Double) -> Double { max(0, x - x * x * x / 6) }

    /// A value at most cos of every latitude from `degrees` up to 90 (`degrees` in 0...90).
    @usableFromInline
    static func cosine(atLeast degrees: Double) -> Double {
        let whole = Int(degrees.rounded(.up))
        return whole >= 90 ? 0 : max(0, cosines[whole] - 1e-12)
    }
}
