import GeoCore

extension GeohashGrid {
    /// Counts and centroids of the records inside `box`, grouped by their geohash cell at `precision`, in geohash
    /// order.
    ///
    /// Cells entirely inside the box are answered from ranges and prefix sums. Cells cut by the box's edge test each
    /// of their records against the box with the exact position from `position`. The box is first covered with at
    /// most a few dozen coarser cells, each a contiguous range, and within each range the walk jumps from one
    /// non-empty cell to the next by galloping search, so empty cells cost nothing.
    /// - Throws: `.invalidGeohashPrecision`.
    func clusters(
        in box: BoundingBox,
        precision: Int,
        position: (UInt32) -> (latitude: Double, longitude: Double)?
    ) throws(GeoError) -> [Cluster] {
        guard (1...Geohash.maximumPrecision).contains(precision) else { throw .invalidGeohashPrecision(precision) }
        var cells: [UInt64: (count: Int, latitude: Double, longitude: Double)] = [:]
        let cellMask = Geohash.mask(precision: precision)
        for part in box.antimeridianParts {
            for coarse in try GeohashGrid.coarseCover(part, precision: precision) {
                let low = coarse.bits
                let high = coarse.bits | ~Geohash.mask(precision: coarse.precision)
                collectBase(in: part, low: low, high: high, cellMask: cellMask, precision: precision, position: position, into: &cells)
                // Entries added since the base was built.
                var i = added.lowerBound(of: Entry(hash: low, id: 0))
                while i < added.count && added[i].hash <= high {
                    let entry = added[i]
                    i += 1
                    guard let p = position(entry.id), part.contains(latitude: p.latitude, longitude: p.longitude) else { continue }
                    let decoded = Geohash.approximatePosition(entry.hash)
                    cells[entry.hash & cellMask, default: (0, 0, 0)].count += 1
                    cells[entry.hash & cellMask]!.latitude += decoded.latitude
                    cells[entry.hash & cellMask]!.longitude += decoded.longitude
                }
            }
        }
        return cells.keys.sorted().compactMap { bits in
            let cell = cells[bits]!
            guard cell.count > 0 else { return nil }
            return Cluster(
                geohash: Geohash(bits: bits, precision: precision),
                count: cell.count,
                latitude: cell.latitude / Double(cell.count),
                longitude: cell.longitude / Double(cell.count)
            )
        }
    }

    private func collectBase(
        in part: BoundingBox,
        low: UInt64,
        high: UInt64,
        cellMask: UInt64,
        precision: Int,
        position: (UInt32) -> (latitude: Double, longitude: Double)?,
        into cells: inout [UInt64: (count: Int, latitude: Double, longitude: Double)]
    ) {
        var i = GeohashGrid.upperBound(baseHashes, low &- 1, from: 0, to: baseHashes.count)
        if low == 0 { i = 0 }
        let end = GeohashGrid.upperBound(baseHashes, high, from: i, to: baseHashes.count)
        while i < end {
            let cell = baseHashes[i] & cellMask
            let cellEnd = GeohashGrid.upperBound(baseHashes, cell | ~cellMask, from: i, to: end)
            defer { i = cellEnd }
            let bounds = Geohash(bits: cell, precision: precision).bounds
            guard bounds.intersects(part) else { continue }
            let inside =
                bounds.south >= part.south && bounds.north <= part.north && bounds.west >= part.west && bounds.east <= part.east
            var count = 0
            var lat = 0.0
            var lon = 0.0
            if inside {
                let a = prefixSum(i)
                let b = prefixSum(cellEnd)
                count = cellEnd - i
                lat = b.latitude - a.latitude
                lon = b.longitude - a.longitude
                // Subtract base entries of this cell that have since been removed or moved.
                var r = removedSorted.lowerBound(of: Entry(hash: cell, id: 0))
                while r < removedSorted.count && removedSorted[r].hash <= cell | ~cellMask {
                    let decoded = Geohash.approximatePosition(removedSorted[r].hash)
                    count -= 1
                    lat -= decoded.latitude
                    lon -= decoded.longitude
                    r += 1
                }
            } else {
                for k in i..<cellEnd {
                    let id = baseIDs[k]
                    if removed[id] == baseHashes[k] { continue }
                    guard let p = position(id), part.contains(latitude: p.latitude, longitude: p.longitude) else { continue }
                    let decoded = Geohash.approximatePosition(baseHashes[k])
                    count += 1
                    lat += decoded.latitude
                    lon += decoded.longitude
                }
            }
            if count > 0 {
                cells[cell, default: (0, 0, 0)].count += count
                cells[cell]!.latitude += lat
                cells[cell]!.longitude += lon
            }
        }
    }

    /// An estimate of the number of records inside `box`, for query planning: the records of each covering cell (at
    /// `precision`, or coarser so that there are at most about 32), weighted by the share of the cell's area the box
    /// covers — exact for cells inside the box, assuming even density in cells cut by its edge. Two binary
    /// searches per cell and no record visited.
    /// - Throws: `.invalidGeohashPrecision`.
    func estimatedCount(in box: BoundingBox, precision: Int) throws(GeoError) -> Double {
        guard (1...Geohash.maximumPrecision).contains(precision) else { throw .invalidGeohashPrecision(precision) }
        var total = 0.0
        for part in box.antimeridianParts {
            for cell in try GeohashGrid.coarseCover(part, precision: precision) {
                let low = cell.bits
                let high = cell.bits | ~Geohash.mask(precision: cell.precision)
                let start = low == 0 ? 0 : GeohashGrid.upperBound(baseHashes, low &- 1, from: 0, to: baseHashes.count)
                var count = GeohashGrid.upperBound(baseHashes, high, from: start, to: baseHashes.count) - start
                var i = added.lowerBound(of: Entry(hash: low, id: 0))
                while i < added.count && added[i].hash <= high {
                    count += 1
                    i += 1
                }
                guard count > 0 else { continue }
                let bounds = cell.bounds
                let height = min(bounds.north, part.north) - max(bounds.south, part.south)
                let width = min(bounds.east, part.east) - max(bounds.west, part.west)
                guard height > 0, width > 0 else { continue }
                let share = (height * width) / ((bounds.north - bounds.south) * (bounds.east - bounds.west))
                total += Double(count) * min(1, share)
            }
        }
        return total
    }

    /// Cells at a precision ≤ `precision` covering the (non-crossing) box, at most about 32 of them.
    static func coarseCover(_ box: BoundingBox, precision: Int) throws(GeoError) -> [Geohash] {
        var q = precision
        while q > 1 {
            let size = Geohash.cellSize(precision: q)
            let rows = ((box.north - box.south) / size.latitude).rounded(.down) + 2
            let cols = ((box.east - box.west) / size.longitude).rounded(.down) + 2
            if rows * cols <= 32 { break }
            q -= 1
        }
        return try Geohash.cover(box, precision: q)
    }
}
