import Foundation
import GeoCore
import SnapshotFile

/// Houses in a uniform grid of cells (0.001° of latitude × 0.002° of longitude, about 110 m square in Helsinki), for
/// reverse geocoding's "the nearest house within a few tens of metres".
///
/// Reverse only ever asks within `AddressIndex.houseRadius`, so a flat grid answers it with a few cells' houses,
/// and is three flat arrays (`CellTable`) — about 4 bytes a house, where the R-tree of the POIs costs 50 — that a
/// snapshot serves from its mapping and a build makes with one sort.
struct HouseGrid: Sendable {
    static let cellLatitude = 0.001
    static let cellLongitude = 0.002
    /// Cells a parallel has: column numbers wrap around the antimeridian.
    static let columns = Int((360 / cellLongitude).rounded())

    /// Each cell's houses, ascending.
    let cells: CellTable<UInt32>

    init(cells: CellTable<UInt32>) { self.cells = cells }

    init(latitudes: FlatArray<Double>, longitudes: FlatArray<Double>) {
        var entries = [(key: Int64, item: UInt32)]()
        entries.reserveCapacity(latitudes.count)
        for i in latitudes.indices {
            let (y, x) = Self.cell(latitudes[i], longitudes[i])
            entries.append((Self.key(y, x), UInt32(i)))
        }
        self.init(cells: CellTable(entries))
    }

    static func cell(_ latitude: Double, _ longitude: Double) -> (Int, Int) {
        (Int((latitude / cellLatitude).rounded(.down)), Int(((longitude + 180) / cellLongitude).rounded(.down)))
    }

    static func key(_ y: Int, _ x: Int) -> Int64 {
        let column = ((x % columns) + columns) % columns
        return Int64(y) << 32 | Int64(column)
    }

    /// The nearest house within `radius` metres of `point` (great-circle distance; the lower index of equally
    /// near houses), and its distance.
    func nearest(
        to point: Coordinate2,
        within radius: Double,
        latitudes: FlatArray<Double>,
        longitudes: FlatArray<Double>,
        hidden: (Int32) -> Bool = { _ in false }
    ) -> (house: Int, distance: Double)? {
        let metresPerDegree = GreatCircle.earthRadius * .pi / 180
        // The cells a circle of `radius` can reach: its latitude span, and its widest longitude span (at the edge
        // nearer the pole); a circle over a pole reaches every column.
        let latitudeSpan = radius / metresPerDegree
        let (cy, cx) = Self.cell(point.latitude, point.longitude)
        let dy = Int((latitudeSpan / Self.cellLatitude).rounded(.up)) + 1
        let poleward = min(abs(point.latitude) + latitudeSpan, 90)
        let cosine = cos(poleward * .pi / 180)
        let dx = cosine < 1e-6 ? Self.columns / 2 : min(Int((latitudeSpan / cosine / Self.cellLongitude).rounded(.up)) + 1, Self.columns / 2)
        // Each row's cells are consecutive keys: the columns reached, split in two where they wrap.
        var spans: [ClosedRange<Int>]
        if 2 * dx + 1 >= Self.columns {
            spans = [0...(Self.columns - 1)]
        } else {
            let (low, high) = (cx - dx, cx + dx)
            if low < 0 {
                spans = [(low + Self.columns)...(Self.columns - 1), 0...high]
            } else if high >= Self.columns {
                spans = [low...(Self.columns - 1), 0...(high - Self.columns)]
            } else {
                spans = [low...high]
            }
        }
        var best: (house: Int, distance: Double)?
        for y in (cy - dy)...(cy + dy) {
            for span in spans {
                for cell in cells.keys(from: Self.key(y, span.lowerBound), through: Self.key(y, span.upperBound)) {
                    for k in cells.items(at: cell) {
                        let house = Int(cells.items[k])
                        if hidden(Int32(house)) { continue }
                        let d = GreatCircle.distance(
                            latitude1: point.latitude,
                            longitude1: point.longitude,
                            latitude2: latitudes[house],
                            longitude2: longitudes[house]
                        )
                        if d <= radius, d < best?.distance ?? .infinity || (d == best!.distance && house < best!.house) { best = (house, d) }
                    }
                }
            }
        }
        return best
    }

    /// The cells agree with each other and hold every one of `count` houses once.
    func isConsistent(houseCount count: Int) -> Bool {
        guard cells.isConsistent, cells.items.count == count else { return false }
        var seen = [Bool](repeating: false, count: count)
        for house in cells.items {
            guard Int(house) < count, !seen[Int(house)] else { return false }
            seen[Int(house)] = true
        }
        return true
    }
}
