extension Geohash {
    /// The default cap on the number of cells a cover may return.
    public static let defaultCellLimit = 100_000

    /// The cells of `precision` that intersect the box, in row-major order from the south-west (each antimeridian
    /// part separately).
    /// - Throws: `.invalidGeohashPrecision`, or `.tooManyCells` when the answer would exceed `limit`.
    public static func cover(_ box: BoundingBox, precision: Int, limit: Int = defaultCellLimit) throws(GeoError) -> [Geohash] {
        guard (1...maximumPrecision).contains(precision) else { throw .invalidGeohashPrecision(precision) }
        let lonBits = (5 * precision + 1) / 2
        let latBits = (5 * precision) / 2
        let lonCells = 1 << lonBits
        let latCells = 1 << latBits
        let size = cellSize(precision: precision)
        var ranges: [(lat: ClosedRange<Int>, lon: ClosedRange<Int>)] = []
        var total = 0
        for part in box.antimeridianParts {
            let south = min(latCells - 1, Int(((part.south + 90) / size.latitude).rounded(.down)))
            let north = min(latCells - 1, Int(((part.north + 90) / size.latitude).rounded(.down)))
            let west = min(lonCells - 1, Int(((part.west + 180) / size.longitude).rounded(.down)))
            let east = min(lonCells - 1, Int(((part.east + 180) / size.longitude).rounded(.down)))
            ranges.append((south...north, west...east))
            total += (north - south + 1) * (east - west + 1)
            if total > limit { throw .tooManyCells(limit: limit) }
        }
        var cells: [Geohash] = []
        cells.reserveCapacity(total)
        var seen = Set<UInt64>()
        for range in ranges {
            for latCell in range.lat {
                for lonCell in range.lon {
                    let bits = interleave(
                        latIndex: UInt32(latCell) << UInt32(bitsPerAxis - latBits),
                        lonIndex: UInt32(lonCell) << UInt32(bitsPerAxis - lonBits)
                    )
                    // The two antimeridian parts share the cells at ±180 only when a part is degenerate.
                    if ranges.count == 1 || seen.insert(bits).inserted {
                        cells.append(Geohash(bits: bits, precision: precision))
                    }
                }
            }
        }
        return cells
    }

    /// The cells of `precision` that intersect the circle of `radius` metres around `center`.
    public static func cover(
        center: Coordinate,
        radius: Double,
        precision: Int,
        limit: Int = defaultCellLimit
    ) throws(GeoError) -> [Geohash] {
        guard radius.isFinite, radius >= 0 else { throw .invalidRadius(radius) }
        let candidates = try cover(BoundingBox.around(center, radius: radius), precision: precision, limit: limit)
        return candidates.filter { $0.bounds.minimumDistance(from: center) <= radius }
    }
}
