import GeoCore
import Records

/// The water and building areas of an import, found by box for the `base` tiles.
///
/// One grid per kind, of cells 0.01° square (about 1 km): an area is listed in every cell its box covers, one that
/// covers more than `largeCells` cells (a lake, the sea) in a short list of large areas looked at by every query
/// instead. A box wider than `scanCells` cells (a tile at a low zoom) scans the kind's boxes instead of the grid.
/// Immutable once built.
public struct MapAreaIndex: Sendable {
    /// In the order of the store (`AddressData.areas`).
    public let areas: [MapArea]
    /// Each area's box: west, south, east, north.
    let boxes: [Double]
    let grids: [Grid]

    struct Grid: Sendable {
        var cells: [Int64: [Int32]] = [:]
        var large: [Int32] = []
        /// Every area of the kind, for a query too wide for the cells.
        var all: [Int32] = []
    }

    static let cellDegrees = 0.01
    static let largeCells = 64
    static let scanCells = 4_096

    public static let empty = MapAreaIndex([])

    public init(_ areas: [MapArea]) {
        self.areas = areas
        var boxes: [Double] = []
        boxes.reserveCapacity(4 * areas.count)
        var grids = [Grid](repeating: Grid(), count: MapArea.Kind.allCases.count)
        for (i, area) in areas.enumerated() {
            guard let box = area.bounds else {
                boxes += [1, 1, 0, 0]  // matches nothing
                continue
            }
            boxes += [box.west, box.south, box.east, box.north]
            let k = Self.kindNumber(area.kind)
            grids[k].all.append(Int32(i))
            let (rows, columns) = Self.cells(box)
            if rows.count * columns.count > Self.largeCells {
                grids[k].large.append(Int32(i))
                continue
            }
            for row in rows { for column in columns { grids[k].cells[Self.key(row, column), default: []].append(Int32(i)) } }
        }
        self.boxes = boxes
        self.grids = grids
    }

    public var isEmpty: Bool { areas.isEmpty }

    /// The areas of `kind` whose box meets `box`, in store order; at most `limit` (`truncated` when there were more).
    public func areas(of kind: MapArea.Kind, in box: BoundingBox, limit: Int) -> (areas: [MapArea], truncated: Bool) {
        let grid = grids[Self.kindNumber(kind)]
        let (rows, columns) = Self.cells(box)
        var found: [Int32]
        if rows.count * columns.count > Self.scanCells || grid.all.count < 64 {
            found = grid.all.filter { meets(Int($0), box) }
        } else {
            var seen = Set<Int32>()
            found = grid.large.filter { meets(Int($0), box) }
            for row in rows {
                for column in columns {
                    for i in grid.cells[Self.key(row, column)] ?? [] where seen.insert(i).inserted && meets(Int(i), box) { found.append(i) }
                }
            }
            found.sort()
        }
        let truncated = found.count > limit
        return (found.prefix(limit).map { areas[Int($0)] }, truncated)
    }

    /// The box around every area (nil: none).
    public var bounds: BoundingBox? {
        guard !areas.isEmpty else { return nil }
        var (west, south, east, north) = (Double.infinity, Double.infinity, -Double.infinity, -Double.infinity)
        for i in areas.indices where boxes[4 * i] <= boxes[4 * i + 2] {
            (west, south) = (min(west, boxes[4 * i]), min(south, boxes[4 * i + 1]))
            (east, north) = (max(east, boxes[4 * i + 2]), max(north, boxes[4 * i + 3]))
        }
        return west <= east ? BoundingBox(uncheckedWest: west, south: south, east: east, north: north) : nil
    }

    func meets(_ i: Int, _ box: BoundingBox) -> Bool {
        boxes[4 * i] <= box.east && boxes[4 * i + 2] >= box.west && boxes[4 * i + 1] <= box.north && boxes[4 * i + 3] >= box.south
    }

    static func kindNumber(_ kind: MapArea.Kind) -> Int { kind == .water ? 0 : 1 }

    static func cells(_ box: BoundingBox) -> (rows: ClosedRange<Int>, columns: ClosedRange<Int>) {
        func cell(_ degrees: Double) -> Int { Int((degrees / cellDegrees).rounded(.down)) }
        let south = cell(max(-90, box.south))
        let north = max(south, cell(min(90, box.north)))
        let west = cell(max(-180, box.west))
        let east = max(west, cell(min(180, box.east)))
        return (south...north, west...east)
    }

    static func key(_ row: Int, _ column: Int) -> Int64 { Int64(row) << 32 | Int64(UInt32(bitPattern: Int32(column))) }
}
