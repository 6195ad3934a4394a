import GeoCore
import Records
import SnapshotFile

/// The water and building areas of an import, found by box for the `base` tiles.
///
/// Kept as flat arrays, so that a snapshot serves them from its mapping and a country's buildings cost the pages
/// tiles touch rather than objects in memory: every area encoded back to back (`MapAreaBlock`'s coding, one area
/// a block), where each starts, each one's box, and per kind a grid of cells 0.01° square (about 1 km) listing the
/// areas whose box meets the cell. An area whose box covers more than `largeCells` cells (a lake, the sea) is in
/// that kind's short list of large areas instead, which every query looks at. A box of more than `scanCells` cells
/// (a tile at a low zoom) looks at every area of the kind instead. Areas are decoded only when a query finds them.
/// Immutable once built.
public struct MapAreaIndex: Sendable {
    /// The areas' bytes, one `MapAreaBlock` each, in the order of the store (`AddressData.areas`).
    let bytes: FlatArray<UInt8>
    /// `bytes[starts[i]..<starts[i + 1]]` is area i.
    let starts: FlatArray<UInt64>
    /// Each area's box: west, south, east, north.
    let boxes: FlatArray<Double>
    /// Per kind (`Kind.allCases` order): the grid, the large areas and every area of the kind.
    let grids: [Grid]

    struct Grid: Sendable {
        let cells: CellTable<UInt32>
        let large: FlatArray<UInt32>
        let all: FlatArray<UInt32>
    }

    static let cellDegrees = 0.01
    static let largeCells = 64
    static let scanCells = 4_096

    public static let empty = MapAreaIndex(AreaList())

    public init(_ areas: AreaList) {
        // Each area's bytes as a block of one (`MapAreaBlock`'s version, the count 1, the area), made at their size.
        let one = MapAreaBlock.oneAreaHeader
        var bytes = FlatArray<UInt8>(repeating: 0, count: areas.byteCount + one.count * areas.count)
        var starts = FlatArray<UInt64>(repeating: 0, count: areas.count + 1)
        var boxes = FlatArray<Double>(repeating: 0, count: 4 * areas.count)
        let kinds = MapArea.Kind.allCases
        var entries = [[(key: Int64, item: UInt32)]](repeating: [], count: kinds.count)
        var large = [[UInt32]](repeating: [], count: kinds.count)
        var all = [[UInt32]](repeating: [], count: kinds.count)
        var end = 0
        bytes.withUnsafeMutableBufferPointer { bytes in
            for i in areas.indices {
                starts[i] = UInt64(end)
                for byte in one {
                    bytes[end] = byte
                    end += 1
                }
                areas.withBytes(of: i) { area in
                    UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: bytes[end..<(end + area.count)])).copyMemory(from: area)
                    end += area.count
                }
            }
        }
        starts[areas.count] = UInt64(end)
        for (i, area) in areas.enumerated() {
            guard let box = area.bounds else {
                for (k, edge) in [1.0, 1, 0, 0].enumerated() { boxes[4 * i + k] = edge }  // matches nothing
                continue
            }
            for (k, edge) in [box.west, box.south, box.east, box.north].enumerated() { boxes[4 * i + k] = edge }
            let k = kinds.firstIndex(of: area.kind)!
            all[k].append(UInt32(i))
            let (rows, columns) = Self.cells(box)
            if rows.count * columns.count > Self.largeCells {
                large[k].append(UInt32(i))
                continue
            }
            for row in rows { for column in columns { entries[k].append((Self.key(row, column), UInt32(i))) } }
        }
        self.bytes = bytes
        self.starts = starts
        self.boxes = boxes
        grids = kinds.indices.map { k in Grid(cells: CellTable(entries[k]), large: FlatArray(large[k]), all: FlatArray(all[k])) }
    }

    init(bytes: FlatArray<UInt8>, starts: FlatArray<UInt64>, boxes: FlatArray<Double>, grids: [Grid]) {
        (self.bytes, self.starts, self.boxes, self.grids) = (bytes, starts, boxes, grids)
    }

    public var count: Int { starts.count - 1 }

    public var isEmpty: Bool { count == 0 }

    /// Every area, decoded, in store order.
    public var areas: [MapArea] { (0..<count).map { area($0) } }

    /// The areas of `kind` whose box meets `box`, in store order; at most `limit` (`truncated` when there were more).
    /// - Parameter hidden: areas to pass over (`AddressLayer`'s, replaced in the layer of changes).
    public func areas(
        of kind: MapArea.Kind,
        in box: BoundingBox,
        limit: Int,
        hidden: (Int) -> Bool = { _ in false }
    ) -> (
        areas: [MapArea], truncated: Bool
    ) {
        let grid = grids[MapArea.Kind.allCases.firstIndex(of: kind)!]
        let (rows, columns) = Self.cells(box)
        var found: [UInt32] = []
        if rows.count * columns.count > Self.scanCells || grid.all.count < 64 {
            for i in grid.all where meets(Int(i), box) { found.append(i) }
        } else {
            for i in grid.large where meets(Int(i), box) { found.append(i) }
            for row in rows {
                for column in columns {
                    for k in grid.cells.items(of: Self.key(row, column)) {
                        let i = grid.cells.items[k]
                        if meets(Int(i), box) { found.append(i) }
                    }
                }
            }
            found.sortAndRemoveRepeats()
        }
        found.removeAll { hidden(Int($0)) }
        return (found.prefix(limit).map { area(Int($0)) }, found.count > limit)
    }

    /// Area `i`, decoded from its bytes.
    func area(_ i: Int) -> MapArea {
        let (start, end) = (Int(starts[i]), Int(starts[i + 1]))
        var out: [MapArea] = []
        // The decoder checks every length against the bytes, so a damaged area decodes to an empty one; the
        // snapshot's checksum was verified when it was read.
        bytes.withUnsafeBytes { all in try? MapAreaBlock.decode(UnsafeRawBufferPointer(rebasing: all[start..<end]), into: &out) }
        return out.first ?? MapArea(id: "", kind: .water, rings: [])
    }

    /// Area `i`'s id, read without its rings.
    func id(_ i: Int) -> String {
        let (start, end) = (Int(starts[i]), Int(starts[i + 1]))
        return bytes.withUnsafeBytes { all in MapAreaBlock.firstID(UnsafeRawBufferPointer(rebasing: all[start..<end])) } ?? ""
    }

    /// The box around every area (nil: none).
    public var bounds: BoundingBox? {
        var (west, south, east, north) = (Double.infinity, Double.infinity, -Double.infinity, -Double.infinity)
        for i in 0..<count where boxes[4 * i] <= boxes[4 * i + 2] {
            (west, south) = (min(west, boxes[4 * i]), min(south, boxes[4 * i + 1]))
            (east, north) = (max(east, boxes[4 * i + 2]), max(north, boxes[4 * i + 3]))
        }
        return west <= east ? BoundingBox(uncheckedWest: west, south: south, east: east, north: north) : nil
    }

    func meets(_ i: Int, _ box: BoundingBox) -> Bool {
        boxes[4 * i] <= box.east && boxes[4 * i + 2] >= box.west && boxes[4 * i + 1] <= box.north && boxes[4 * i + 3] >= box.south
    }

    static func cells(_ box: BoundingBox) -> (rows: ClosedRange<Int>, columns: ClosedRange<Int>) {
        func cell(_ degrees: Double) -> Int { Int((degrees / cellDegrees).rounded(.down)) }
        let south = cell(max(-90, box.south))
        let north = max(south, cell(min(90, box.north)))
        let west = cell(max(-180, box.west))
        let east = max(west, cell(min(180, box.east)))
        return (south...north, west...east)
    }

    static func key(_ row: Int, _ column: Int) -> Int64 { Int64(row) << 32 | Int64(UInt32(bitPattern: Int32(column))) }

    // MARK: Snapshot

    func write(to file: SnapshotWriter) throws(SnapshotError) {
        try file.write(bytes)
        try file.write(starts)
        try file.write(boxes)
        for grid in grids {
            try grid.cells.write(to: file)
            try file.write(grid.large)
            try file.write(grid.all)
        }
    }

    /// The index as `write(to:)` wrote it, served from the mapping; every area's bytes decoded once to check them.
    init(snapshot file: SnapshotReader) throws(SnapshotError) {
        let bytes: FlatArray<UInt8> = try file.readFlat()
        let starts: FlatArray<UInt64> = try file.readFlat()
        let boxes: FlatArray<Double> = try file.readFlat()
        var grids: [Grid] = []
        for _ in MapArea.Kind.allCases {
            grids.append(Grid(cells: try CellTable(snapshot: file), large: try file.readFlat(), all: try file.readFlat()))
        }
        self.init(bytes: bytes, starts: starts, boxes: boxes, grids: grids)
        guard isConsistent else { throw .corrupt(path: file.path, reason: "map areas of inconsistent sizes") }
    }

    /// The arrays agree with each other. The areas' bytes are not decoded here (a country's millions of buildings
    /// would be decoded at every start): `area(_:)` decodes one, bounds-checked.
    var isConsistent: Bool {
        guard let first = starts.first, first == 0, starts.last == UInt64(bytes.count), boxes.count == 4 * count,
            zip(starts, starts.dropFirst()).allSatisfy({ $0 <= $1 })
        else { return false }
        let areaCount = UInt32(count)
        for grid in grids {
            guard grid.cells.isConsistent, grid.cells.items.allSatisfy({ $0 < areaCount }), grid.large.allSatisfy({ $0 < areaCount }),
                grid.all.allSatisfy({ $0 < areaCount })
            else { return false }
        }
        return true
    }
}

extension Array where Element: Comparable {
    /// Sorts the elements and keeps one of each (the items several grid cells list, once each, in order).
    mutating func sortAndRemoveRepeats() {
        sort()
        var unique = 0
        for i in indices where i == 0 || self[i] != self[i - 1] {
            self[unique] = self[i]
            unique += 1
        }
        removeLast(count - unique)
    }
}
