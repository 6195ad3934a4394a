import Foundation

/// Great-circle geometry on the mean Earth sphere.
///
/// All distances are metres on a sphere of radius `GreatCircle.earthRadius` (the IUGG mean radius R1), which
/// is within 0.5 % of the ellipsoidal geodesic everywhere; angles are degrees.
public enum GreatCircle {
    /// IUGG mean Earth radius R1 = (2a + b) / 3 of WGS-84, in metres.
    public static let earthRadius = 6_371_008.8

    /// Half the circumference: no two points are further apart than this.
    public static let maximumDistance = Double.pi * earthRadius

    /// Haversine distance in metres; accurate for small and antipodal separations alike.
    public static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        distance(latitude1: a.latitude, longitude1: a.longitude, latitude2: b.latitude, longitude2: b.longitude)
    }

    /// Haversine distance in metres between two positions given in degrees.
    @inlinable
    public static func distance(latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double) -> Double {
        let phi1 = latitude1 * .pi / 180
        let phi2 = latitude2 * .pi / 180
        let sinDPhi = sin((phi2 - phi1) / 2)
        let sinDLambda = sin((longitude2 - longitude1) * .pi / 360)
        let h = sinDPhi * sinDPhi + cos(phi1) * cos(phi2) * sinDLambda * sinDLambda
        return 2 * earthRadius * asin(min(1, sqrt(h)))
    }

    /// Initial bearing from `a` towards `b`, degrees clockwise from true north in 0..<360.
    /// At a pole, where every direction is south (or north), the bearing follows `b`'s meridian convention.
    public static func initialBearing(from a: Coordinate, to b: Coordinate) -> Double {
        let phi1 = a.latitude * .pi / 180
        let phi2 = b.latitude * .pi / 180
        let dLambda = (b.longitude - a.longitude) * .pi / 180
        let y = sin(dLambda) * cos(phi2)
        let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLambda)
        let theta = atan2(y, x) * 180 / .pi
        let bearing = (theta + 360).truncatingRemainder(dividingBy: 360)
        return bearing == 360 ? 0 : bearing
    }

    /// The point reached by travelling `distance` metres from `start` along the great circle with initial `bearing`.
    public static func destination(from start: Coordinate, distance: Double, bearing: Double) -> Coordinate {
        let delta = distance / earthRadius
        let theta = bearing * .pi / 180
        let phi1 = start.latitude * .pi / 180
        let lambda1 = start.longitude * .pi / 180
        let sinPhi2 = sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(theta)
        let phi2 = asin(max(-1, min(1, sinPhi2)))
        let y = sin(theta) * sin(delta) * cos(phi1)
        let x = cos(delta) - sin(phi1) * sinPhi2
        let lambda2 = lambda1 + atan2(y, x)
        return Coordinate(uncheckedLatitude: phi2 * 180 / .pi, longitude: lambda2 * 180 / .pi)
    }

    /// Central angle (radians) for a surface distance in metres.
    @inlinable
    public static func angle(forDistance metres: Double) -> Double { metres / earthRadius }
}
