import GeoCore
import Records
import SpatialIndex

extension SearchEngine {
    /// The records of one vector tile (GET /tiles/{layer}/{z}/{x}/{y}.mvt; docs/ARCHITECTURE.md, "Vector tiles").
    ///
    /// An unclustered tile holds the records in the tile's box grown by the buffer — the records `within` returns for
    /// that box — each at its position rounded to a tile unit, in record order. A clustered tile holds the records in
    /// the tile's own box, counted per cell of the grid, each cell at the mean position of its records: the counts
    /// add up to the records `within` returns for the tile's box.
    ///
    /// On a GCJ-02 or BD-09 map the tile's box is in that datum: the records are searched in its WGS-84 image grown by
    /// a margin larger than the datum's local distortion, then kept by their position in the datum.
    public func tile<W: TileWriter>(_ query: TileQuery, into writer: inout W) throws(SearchError) {
        let clustered = query.isClustered
        let buffer = clustered ? 0 : query.buffer
        let tile = query.tile
        let extent = query.extent
        precondition(extent > 0 && buffer >= 0 && extent + buffer < 0x7000, "tile positions are packed in 16 bits")
        let datum = query.datum
        let box = datum.wgs84SearchBox(tile.bounds(buffer: buffer, extent: extent))
        try read { s throws(SearchError) in
            let matcher = query.text.map { self.matcher($0, s) }
            let test = filter(s, categories: query.categories, matcher: matcher)
            // Each point as one integer, record number above its position, so that record order is a plain sort.
            var points: [UInt64] = []
            var tooMany = false
            let low = -buffer
            let high = extent + buffer
            let body: (UInt32, Double, Double) -> Bool = { number, latitude, longitude in
                if let test, !test(number) { return true }
                let p: (x: Int, y: Int)
                if datum == .wgs84 {
                    p = tile.position(latitude: latitude, longitude: longitude, extent: extent)
                } else {
                    let moved = datum.fromWGS84(latitude: latitude, longitude: longitude)
                    p = tile.position(latitude: moved.latitude, longitude: moved.longitude, extent: extent)
                    guard p.x >= low, p.x <= high, p.y >= low, p.y <= high else { return true }
                }
                if !clustered && points.count >= query.maxPoints {
                    tooMany = true
                    return false
                }
                points.append(UInt64(number) << 32 | Self.packed(p.x) << 16 | Self.packed(p.y))
                return true
            }
            if query.kind == .poi { s.poiSpatial.tree.search(box, body) } else { s.pinSpatial.tree.search(box, body) }
            if tooMany {
                throw SearchError.invalid(
                    parameter: "cluster",
                    rule:
                        "must be above \(tile.z) for tile \(tile): it holds more than \(query.maxPoints) records unclustered; ask for it clustered or for tiles at a deeper zoom"
                )
            }
            writer.begin(categories: s.categoryNames)
            if clustered {
                writeClusters(s, points, extent: extent, grid: query.grid, into: &writer)
            } else {
                points.sort()
                s.records.prefetch(points.lazy.map { UInt32($0 >> 32) })
                for point in points {
                    write(s, UInt32(point >> 32), x: Self.unpacked(point >> 16), y: Self.unpacked(point), count: nil, into: &writer)
                }
            }
        }
    }

    /// A number that names the records `tile` reads for `query` as they are now: it changes when a record of the
    /// query's kind in the tile's box (grown by the buffer and, on a GCJ-02 or BD-09 map, by the datum's margin) is
    /// put, moved or deleted, and when a state is loaded anew (`ChangedCells`); with a `q` filter, whose words may
    /// be matched through the index's whole vocabulary, when any record of the kind is. What `tile` makes for the
    /// query is the same while the number is — a tile cache's validator (`TileCache`). Read it before the tile: a
    /// write in between then only makes the kept tile newer than its number says.
    public func tileVersion(_ query: TileQuery) -> UInt64 {
        let box = query.datum.wgs84SearchBox(query.tile.bounds(buffer: query.buffer, extent: query.extent))
        return read { s in
            switch (query.kind, query.text == nil) {
            case (.poi, true): s.poiCells.version(in: box)
            case (.poi, false): s.poiCells.everywhere
            case (.pin, true): s.pinCells.version(in: box)
            case (.pin, false): s.pinCells.everywhere
            }
        }
    }

    /// The records of a tile as values (`TileContent`).
    public func tile(_ query: TileQuery) throws(SearchError) -> TileContent {
        var content = TileContent()
        try tile(query, into: &content)
        return content
    }

    @inline(__always) private static func packed(_ position: Int) -> UInt64 { UInt64(UInt16(truncatingIfNeeded: position + 0x8000)) }
    @inline(__always) private static func unpacked(_ bits: UInt64) -> Int { Int(UInt16(truncatingIfNeeded: bits)) - 0x8000 }

    /// One record to the writer.
    private func write<W: TileWriter>(_ s: EngineState, _ number: UInt32, x: Int, y: Int, count: Int?, into writer: inout W) {
        if let fields = s.records.poiIDAndName(Int(number)) {
            let code = s.meta[Int(number)].category
            writer.poi(x: x, y: y, id: fields.id, name: fields.name, category: code == UInt16.max ? nil : Int(code), count: count)
        } else if case .pin(let pin) = s.record(Int(number)) {
            writer.pin(x: x, y: y, pin, count: count)
        }
    }

    /// The points counted per grid cell (a point on the tile's far edge in the last cell), each cell at its points'
    /// mean position, cells row after row.
    private func writeClusters<W: TileWriter>(_ s: EngineState, _ points: [UInt64], extent: Int, grid: Int, into writer: inout W) {
        // One slot per cell (32 × 32 by default): the sums of positions, the count and the lowest record number.
        var count = [Int](repeating: 0, count: grid * grid)
        var sumX = [Int](repeating: 0, count: grid * grid)
        var sumY = [Int](repeating: 0, count: grid * grid)
        var first = [UInt32](repeating: .max, count: grid * grid)
        for point in points {
            let x = Self.unpacked(point >> 16)
            let y = Self.unpacked(point)
            let column = min(grid - 1, max(0, x * grid / extent))
            let row = min(grid - 1, max(0, y * grid / extent))
            let key = row * grid + column
            count[key] += 1
            sumX[key] += x
            sumY[key] += y
            first[key] = min(first[key], UInt32(point >> 32))
        }
        for key in 0..<grid * grid where count[key] > 0 {
            let x = Int((Double(sumX[key]) / Double(count[key])).rounded())
            let y = Int((Double(sumY[key]) / Double(count[key])).rounded())
            if count[key] == 1 {
                write(s, first[key], x: x, y: y, count: 1, into: &writer)
            } else {
                writer.cluster(x: x, y: y, count: count[key])
            }
        }
    }

    /// The WGS-84 box around the live records of one kind, nil when there are none (TileJSON's `bounds`).
    public func bounds(of kind: RecordKind) -> BoundingBox? {
        read { s in
            var west = Double.infinity
            var south = Double.infinity
            var east = -Double.infinity
            var north = -Double.infinity
            let wantPins = kind == .pin
            for i in 0..<s.meta.count {
                let meta = s.meta[i]
                guard meta.live, meta.isPin == wantPins else { continue }
                west = min(west, meta.longitude)
                east = max(east, meta.longitude)
                south = min(south, meta.latitude)
                north = max(north, meta.latitude)
            }
            guard west <= east else { return nil }
            return BoundingBox(uncheckedWest: west, south: south, east: east, north: north)
        }
    }
}
