import GeoCore

/// When the records of one kind last changed, by area: for what depends on the records of a box alone, such as a
/// vector tile (`SearchEngine.tileVersion`, `TileCache`).
///
/// The world is cut into cells of a quarter degree. A write of a record notes the cells of its old and new positions
/// with a number no state had before (`EngineState.newGeneration`, which only grows); a cell not written since the
/// state was made has the number the state was made with. The version of a box is the largest number of the cells it
/// meets: it changes whenever a record in the box is put, moved or deleted, and not when a record far away is. A box
/// of more than `maximumCells` cells answers `everywhere`, the number of the latest write of the kind anywhere.
struct ChangedCells: Sendable {
    static let cellsPerDegree = 4.0
    static let rows = 180 * Int(cellsPerDegree)
    static let columns = 360 * Int(cellsPerDegree)
    /// The most cells a box's version is read from; a larger box (a tile of zoom 8 or less) answers `everywhere`.
    static let maximumCells = 64

    /// The number the cells were made with.
    private let made: UInt64
    /// The number of the latest write anywhere (`made` before any).
    private(set) var everywhere: UInt64
    /// The number of each cell's latest write, for the cells written since `made`.
    private var cells: [Int: UInt64] = [:]

    init() {
        made = EngineState.newGeneration()
        everywhere = made
    }

    /// A record of the kind was put or deleted at this position (call it for the old and the new one).
    mutating func note(latitude: Double, longitude: Double) {
        let now = EngineState.newGeneration()
        cells[Self.row(latitude) * Self.columns + Self.column(longitude)] = now
        everywhere = now
    }

    /// The version of the records in `box`: the same as long as none there is put, moved or deleted.
    func version(in box: BoundingBox) -> UInt64 {
        let (south, north) = (Self.row(box.south), Self.row(box.north))
        let (west, east) = (Self.column(box.west), Self.column(box.east))
        guard west <= east, (north - south + 1) * (east - west + 1) <= Self.maximumCells else { return everywhere }
        var version = made
        for row in south...north {
            for column in west...east {
                if let written = cells[row * Self.columns + column] { version = max(version, written) }
            }
        }
        return version
    }

    /// The cell's row and column of a coordinate; the poles and the antimeridian fall in the last ones.
    private static func row(_ latitude: Double) -> Int { min(rows - 1, max(0, Int(((latitude + 90) * cellsPerDegree).rounded(.down)))) }
    private static func column(_ longitude: Double) -> Int {
        min(columns - 1, max(0, Int(((longitude + 180) * cellsPerDegree).rounded(.down))))
    }
}
