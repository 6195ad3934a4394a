/// Positions along a Hilbert curve over a grid of longitude × latitude cells: points close on the curve are close
/// on the map (closer than in Z order, which jumps at every power-of-two seam). Records numbered in this order put a
/// posting list's neighbouring entries near each other, so a block of postings covers a small box.
public enum HilbertCurve {
    /// Cells per axis: 2^20, about 38 m of latitude.
    public static let order = 20

    /// The index along the curve of the cell holding a position (degrees; out-of-range values are clamped).
    public static func index(latitude: Double, longitude: Double) -> UInt64 {
        let side = UInt64(1) << order
        func cell(_ value: Double, _ low: Double, _ span: Double) -> UInt64 {
            guard value.isFinite else { return 0 }
            let scaled = (value - low) / span * Double(side)
            return UInt64(min(max(scaled, 0), Double(side - 1)))
        }
        return index(x: cell(longitude, -180, 360), y: cell(latitude, -90, 180), side: side)
    }

    /// The order of `count` positions along the curve: the indices `0..<count` sorted by the index of their cell,
    /// ties in the order given.
    public static func order(_ count: Int, position: (Int) -> (latitude: Double, longitude: Double)) -> [Int] {
        let keys = (0..<count).map { i in
            let p = position(i)
            return index(latitude: p.latitude, longitude: p.longitude)
        }
        return (0..<count).sorted { (keys[$0], $0) < (keys[$1], $1) }
    }

    /// The index of cell (x, y) of a `side` × `side` grid, `side` a power of two (the classic xy2d: quadrant by
    /// quadrant from the largest, each turned so that the curve enters and leaves it where its neighbours meet it).
    public static func index(x: UInt64, y: UInt64, side: UInt64) -> UInt64 {
        precondition(side.nonzeroBitCount == 1 && x < side && y < side, "a cell of the grid")
        var (x, y) = (x, y)
        var d: UInt64 = 0
        var s = side / 2
        while s > 0 {
            let rx: UInt64 = x & s != 0 ? 1 : 0
            let ry: UInt64 = y & s != 0 ? 1 : 0
            d += s * s * ((3 * rx) ^ ry)
            if ry == 0 {
                if rx == 1 {
                    x = side - 1 - x
                    y = side - 1 - y
                }
                swap(&x, &y)
            }
            s /= 2
        }
        return d
    }
}
