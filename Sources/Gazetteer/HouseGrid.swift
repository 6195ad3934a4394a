import Foundation
import GeoCore
import SnapshotFile

/// Houses in a uniform grid of cells (0.001° of latitude × 0.002° of longitude, about 110 m square in Helsinki), for
/// reverse geocoding's "the nearest house within a few tens of metres".
///
/// Reverse only ever asks within `AddressIndex.houseRadius`, so a flat grid answers it with a few cells' houses,
/// and is three flat arrays — about 4 bytes a house, where the R-tree of the POIs costs 50 — that a snapshot serves
/// from its mapping and a build makes with one sort.
struct HouseGrid: Sendable {
    static let cellLatitude = 0.001
    static let cellLongitude = 0.002
    /// Cells a parallel has: column numbers wrap around the antimeridian.
    static let columns = Int((360 / cellLongitude).rounded())

    /// The cells that have houses, ascending (`key`); `houses[starts[i]..<starts[i + 1]]` are cell `keys[i]`'s
    /// houses, ascending.
    let keys: FlatArray<Int64>
    let starts: FlatArray<UInt32>
    let houses: FlatArray<UInt32>

    init(keys: FlatArray<Int64>, starts: FlatArray<UInt32>, houses: FlatArray<UInt32>) {
        self.keys = keys
        self.starts = starts
        self.houses = houses
    }

    init(latitudes: FlatArray<Double>, longitudes: FlatArray<Double>) {
        var entries = [(key: Int64, house: UInt32)]()
        entries.reserveCapacity(latitudes.count)
        for i in latitudes.indices {
            let (y, x) = Self.cell(latitudes[i], longitudes[i])
            entries.append((Self.key(y, x), UInt32(i)))
        }
        entries.sort { ($0.key, $0.house) < ($1.key, $1.house) }
        var keys: [Int64] = []
        var starts: [UInt32] = []
        var houses: [UInt32] = []
        houses.reserveCapacity(entries.count)
        for entry in entries {
            if keys.last != entry.key {
                keys.append(entry.key)
                starts.append(UInt32(houses.count))
            }
            houses.append(entry.house)
        }
        starts.append(UInt32(houses.count))
        self.init(keys: FlatArray(keys), starts: FlatArray(starts), houses: FlatArray(houses))
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
        longitudes: FlatArray<Double>
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
                let last = Self.key(y, span.upperBound)
                var i = keys.lowerBound(of: Self.key(y, span.lowerBound))
                while i < keys.count && keys[i] <= last {
                    for k in Int(starts[i])..<Int(starts[i + 1]) {
                        let house = Int(houses[k])
                        let d = GreatCircle.distance(
                            latitude1: point.latitude,
                            longitude1: point.longitude,
                            latitude2: latitudes[house],
                            longitude2: longitudes[house]
                        )
                        if d <= radius, d < best?.distance ?? .infinity || (d == best!.distance && house < best!.house) { best = (house, d) }
                    }
                    i += 1
                }
            }
        }
        return best
    }

    /// The arrays agree with each other and hold every one of `count` houses once.
    func isConsistent(houseCount count: Int) -> Bool {
        guard starts.count == keys.count + 1, starts.first ?? 0 == 0, Int(starts.last ?? 0) == houses.count, houses.count == count else {
            return false
        }
        for i in keys.indices.dropFirst() where keys[i - 1] >= keys[i] { return false }
        for i in starts.indices.dropFirst() where starts[i - 1] > starts[i] { return false }
        var seen = [Bool](repeating: false, count: count)
        for house in houses {
            guard Int(house) < count, !seen[Int(house)] else { return false }
            seen[Int(house)] = true
        }
        return true
    }
}
