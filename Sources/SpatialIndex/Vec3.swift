import Foundation
import GeoCore

/// A point on the unit sphere in Earth-centred coordinates.
///
/// The R-tree indexes these rather than longitude/latitude: Euclidean (chord) distance between unit vectors is
/// a monotone function of great-circle distance, d = 2R·asin(c/2), so ranking by chord ranks by great-circle
/// distance, and the Euclidean distance from a query to a 3-D box is a true lower bound for every point inside.
/// Poles and the antimeridian need no special cases.
@usableFromInline
struct Vec3: Sendable, Equatable, BitwiseCopyable {
    @usableFromInline var x: Double
    @usableFromInline var y: Double
    @usableFromInline var z: Double

    @inlinable
    init(x: Double, y: Double, z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    @inlinable
    init(latitude: Double, longitude: Double) {
        let phi = latitude * .pi / 180
        let lambda = longitude * .pi / 180
        let cosPhi = cos(phi)
        self.init(x: cosPhi * cos(lambda), y: cosPhi * sin(lambda), z: sin(phi))
    }

    /// Squared chord length to another unit vector.
    @inlinable
    func distanceSquared(to other: Vec3) -> Double {
        let dx = x - other.x
        let dy = y - other.y
        let dz = z - other.z
        return dx * dx + dy * dy + dz * dz
    }
}

/// Conversions between metres on the sphere and squared chord lengths, the key the index ranks by.
public enum ChordDistance {
    /// Great-circle metres for a squared chord of unit vectors.
    @inlinable
    public static func metres(fromKey key: Double) -> Double {
        2 * GreatCircle.earthRadius * asin(min(1, sqrt(max(0, key)) / 2))
    }

    /// The ranking key between two positions, computed exactly as the R-tree computes it (bit for bit), so results
    /// found another way merge and page consistently with the tree's.
    public static func key(latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double) -> Double {
        Vec3(latitude: latitude1, longitude: longitude1).distanceSquared(to: Vec3(latitude: latitude2, longitude: longitude2))
    }

    /// The squared chord for a great-circle distance; 4 (antipodal) and beyond for half the circumference or more.
    @inlinable
    public static func key(forMetres metres: Double) -> Double {
        let angle = metres / GreatCircle.earthRadius
        if angle >= .pi { return 4 }
        let chord = 2 * sin(angle / 2)
        return chord * chord
    }
}

/// An axis-aligned 3-D box. An empty box has min > max.
@usableFromInline
struct Box3: Sendable, Equatable, BitwiseCopyable {
    @usableFromInline var minX, minY, minZ, maxX, maxY, maxZ: Double

    @usableFromInline
    static let empty = Box3(minX: .infinity, minY: .infinity, minZ: .infinity, maxX: -.infinity, maxY: -.infinity, maxZ: -.infinity)

    @inlinable
    init(minX: Double, minY: Double, minZ: Double, maxX: Double, maxY: Double, maxZ: Double) {
        self.minX = minX
        self.minY = minY
        self.minZ = minZ
        self.maxX = maxX
        self.maxY = maxY
        self.maxZ = maxZ
    }

    @inlinable
    init(point p: Vec3) { self.init(minX: p.x, minY: p.y, minZ: p.z, maxX: p.x, maxY: p.y, maxZ: p.z) }

    @inlinable
    var isEmpty: Bool { minX > maxX }

    @inlinable
    mutating func expand(_ p: Vec3) { expand(Box3(point: p)) }

    @inlinable
    mutating func expand(_ b: Box3) {
        minX = Swift.min(minX, b.minX)
        minY = Swift.min(minY, b.minY)
        minZ = Swift.min(minZ, b.minZ)
        maxX = Swift.max(maxX, b.maxX)
        maxY = Swift.max(maxY, b.maxY)
        maxZ = Swift.max(maxZ, b.maxZ)
    }

    @inlinable
    func contains(_ p: Vec3) -> Bool {
        p.x >= minX && p.x <= maxX && p.y >= minY && p.y <= maxY && p.z >= minZ && p.z <= maxZ
    }

    @inlinable
    func contains(_ b: Box3) -> Bool {
        b.minX >= minX && b.maxX <= maxX && b.minY >= minY && b.maxY <= maxY && b.minZ >= minZ && b.maxZ <= maxZ
    }

    @inlinable
    func intersects(_ b: Box3) -> Bool {
        b.minX <= maxX && b.maxX >= minX && b.minY <= maxY && b.maxY >= minY && b.minZ <= maxZ && b.maxZ >= minZ
    }

    /// Squared Euclidean distance from `p` to the nearest point of the box.
    ///
    /// Exactly a lower bound in floating point for any point inside: per axis |q − clamp(q)| ≤ |q − p|, and
    /// rounded squares and sums are monotone, so no safety margin is needed.
    @inlinable
    func distanceSquared(to p: Vec3) -> Double {
        // Branch-free: at most one of (min − q, q − max) is positive.
        let dx = Swift.max(Swift.max(minX - p.x, p.x - maxX), 0)
        let dy = Swift.max(Swift.max(minY - p.y, p.y - maxY), 0)
        let dz = Swift.max(Swift.max(minZ - p.z, p.z - maxZ), 0)
        return dx * dx + dy * dy + dz * dz
    }

    @inlinable
    var volume: Double { isEmpty ? 0 : (maxX - minX) * (maxY - minY) * (maxZ - minZ) }

    @inlinable
    var margin: Double { isEmpty ? 0 : (maxX - minX) + (maxY - minY) + (maxZ - minZ) }

    @inlinable
    func union(_ b: Box3) -> Box3 {
        var u = self
        u.expand(b)
        return u
    }

    /// A 3-D box containing every unit vector whose latitude/longitude lies in the (non-antimeridian-crossing)
    /// box. Conservative: exact membership is tested on latitude/longitude afterwards.
    static func enclosing(_ box: BoundingBox) -> Box3 {
        let phi0 = box.south * .pi / 180
        let phi1 = box.north * .pi / 180
        let lambda0 = box.west * .pi / 180
        let lambda1 = box.east * .pi / 180
        // cos φ over [φ0, φ1] (φ in -π/2...π/2, so cos φ ≥ 0).
        let cosPhiMin = Swift.min(cos(phi0), cos(phi1))
        let cosPhiMax = (phi0 <= 0 && phi1 >= 0) ? 1 : Swift.max(cos(phi0), cos(phi1))
        // cos λ and sin λ over [λ0, λ1] ⊂ [-π, π]: extremes at the ends or at the axis crossings inside.
        var cosMin = Swift.min(cos(lambda0), cos(lambda1))
        var cosMax = Swift.max(cos(lambda0), cos(lambda1))
        if lambda0 <= 0 && lambda1 >= 0 { cosMax = 1 }
        if lambda0 <= -.pi || lambda1 >= .pi { cosMin = -1 }
        var sinMin = Swift.min(sin(lambda0), sin(lambda1))
        var sinMax = Swift.max(sin(lambda0), sin(lambda1))
        if lambda0 <= .pi / 2 && lambda1 >= .pi / 2 { sinMax = 1 }
        if lambda0 <= -.pi / 2 && lambda1 >= -.pi / 2 { sinMin = -1 }
        func productRange(_ lo: Double, _ hi: Double) -> (Double, Double) {
            // (cos φ) · t with cos φ in [cosPhiMin, cosPhiMax] ≥ 0 and t in [lo, hi].
            let low = lo < 0 ? lo * cosPhiMax : lo * cosPhiMin
            let high = hi > 0 ? hi * cosPhiMax : hi * cosPhiMin
            return (low, high)
        }
        let (xMin, xMax) = productRange(cosMin, cosMax)
        let (yMin, yMax) = productRange(sinMin, sinMax)
        // Widen by a few ulps: trigonometric rounding must not exclude a boundary point.
        let pad = 1e-12
        return Box3(
            minX: xMin - pad,
            minY: yMin - pad,
            minZ: sin(phi0) - pad,
            maxX: xMax + pad,
            maxY: yMax + pad,
            maxZ: sin(phi1) + pad
        )
    }
}

/// A record's position as given, kept beside its unit vector for exact lon/lat tests.
@usableFromInline
struct LatLon: Sendable, Equatable, BitwiseCopyable {
    @usableFromInline var latitude: Double
    @usableFromInline var longitude: Double

    @inlinable
    init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}
