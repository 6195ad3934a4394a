import Foundation

/// One tile of the Web Mercator (EPSG:3857) pyramid, as slippy maps and vector tiles number them: at zoom `z` the
/// world is 2^z × 2^z tiles, column `x` counted east from the antimeridian and row `y` south from 85.0511° N.
///
/// Positions inside a tile are in tile units, 0 at its west (x) and north (y) edge and `extent` at the other:
/// the grid a Mapbox Vector Tile's geometry is written in (docs/ARCHITECTURE.md, "Vector tiles").
public struct WebMercatorTile: Hashable, Sendable, CustomStringConvertible {
    /// The deepest zoom served: MapLibre's maximum, and well inside what a Double resolves (2^24 tiles × 4096 units).
    public static let maxZoom = 24
    /// The latitude where the square world ends: atan(sinh(π)).
    public static let maxLatitude = 85.051_128_779_806_59

    public let z: Int
    public let x: Int
    public let y: Int

    /// A tile of the pyramid; nil when `z` is outside 0...24 or `x`/`y` outside 0..<2^z.
    public init?(z: Int, x: Int, y: Int) {
        guard (0...Self.maxZoom).contains(z) else { return nil }
        let side = 1 << z
        guard (0..<side).contains(x), (0..<side).contains(y) else { return nil }
        (self.z, self.x, self.y) = (z, x, y)
    }

    public var description: String { "\(z)/\(x)/\(y)" }

    /// Tiles per side at this zoom.
    public var side: Double { Double(1 << z) }

    /// The world's x (0 at 180° W, 1 at 180° E) of a longitude.
    @inlinable
    public static func worldX(longitude: Double) -> Double { (longitude + 180) / 360 }

    /// The world's y (0 at 85.05° N, 1 at 85.05° S; beyond the square world past them) of a latitude.
    @inlinable
    public static func worldY(latitude: Double) -> Double {
        let clamped = min(89.999_999, max(-89.999_999, latitude))
        let radians = clamped * .pi / 180
        return (1 - asinh(tan(radians)) / .pi) / 2
    }

    /// The longitude of a world x.
    public static func longitude(worldX: Double) -> Double { worldX * 360 - 180 }

    /// The latitude of a world y.
    public static func latitude(worldY: Double) -> Double { atan(sinh(.pi * (1 - 2 * worldY))) * 180 / .pi }

    /// A WGS-84 position in this tile's units at `extent` units per tile side, rounded to the nearest unit (as PostGIS
    /// `ST_AsMVTGeom` snaps): outside 0...extent when the position is outside the tile.
    @inlinable
    public func position(latitude: Double, longitude: Double, extent: Int) -> (x: Int, y: Int) {
        let scale = Double(1 << z)
        let e = Double(extent)
        let px = (Self.worldX(longitude: longitude) * scale - Double(x)) * e
        let py = (Self.worldY(latitude: latitude) * scale - Double(y)) * e
        return (Int(px.rounded()), Int(py.rounded()))
    }

    /// A WGS-84 position in this tile's units at `extent` units per tile side, unrounded (what polygons are clipped in).
    @inlinable
    public func point(latitude: Double, longitude: Double, extent: Int) -> (x: Double, y: Double) {
        let scale = Double(1 << z)
        let e = Double(extent)
        return ((Self.worldX(longitude: longitude) * scale - Double(x)) * e, (Self.worldY(latitude: latitude) * scale - Double(y)) * e)
    }

    /// The tile's area grown by `buffer` units of `extent` on each side, in WGS-84 degrees: the box whose records a
    /// tile with that buffer holds. West and east stop at the antimeridian (a buffer does not wrap around the world);
    /// the buffer of an edge row reaches a little past 85.05°, as far as it goes in the projection.
    public func bounds(buffer: Int = 0, extent: Int = 4096) -> BoundingBox {
        let grow = Double(buffer) / Double(extent)
        let west = (Double(x) - grow) / side
        let east = (Double(x + 1) + grow) / side
        let north = (Double(y) - grow) / side
        let south = (Double(y + 1) + grow) / side
        return BoundingBox(
            uncheckedWest: max(-180, Self.longitude(worldX: west)),
            south: Self.latitude(worldY: south),
            east: min(180, Self.longitude(worldX: east)),
            north: Self.latitude(worldY: north)
        )
    }
}
