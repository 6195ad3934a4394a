import BundledData
import Foundation
import GeoCore

/// Country outlines (Natural Earth 1:110m, `data/countries.geojson.gz`) for one question reverse geocoding cannot
/// answer from places alone: is a point far from every place on land, and whose? At this scale a coast is off by up
/// to ~10 km, so the outlines are consulted only away from places (see `Gazetteer.reverse`).
public struct CountryOutlines: Sendable {
    struct Outline: Sendable {
        let country: String
        let west: Double, south: Double, east: Double, north: Double
        /// Polygons, each its rings (outer first, then holes) as flat [lon, lat, lon, lat, …].
        let polygons: [[[Double]]]
    }

    let outlines: [Outline]
    /// Each cell of a `cellDegrees` grid: the outline (index + 1) holding all of it, `0` where none reaches it, or
    /// `mixed` where an edge passes — the only cells whose points are tested against the polygons. No edge crosses a
    /// cell not marked mixed, so the even-odd count is the same at every point of it: its centre's answer is exact
    /// for all of it. Most points of a country are far from its border (an input tips answer asks for ten).
    let cells: [UInt16]

    static let cellDegrees = 0.25
    static let columns = Int(360 / cellDegrees)
    static let rows = Int(180 / cellDegrees)
    static let mixed = UInt16.max

    init(outlines: [Outline]) {
        self.outlines = outlines
        self.cells = Self.grid(outlines)
    }

    /// Reads the GeoJSON FeatureCollection at `path` (gzip or plain); features without an ISO code are left out.
    public static func load(path: String) throws -> CountryOutlines {
        let bytes = try GzipFile.read(path)
        guard let collection = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let features = collection["features"] as? [[String: Any]]
        else { throw PlaceFileError.malformed(file: (path as NSString).lastPathComponent, line: 1) }
        var outlines: [Outline] = []
        for feature in features {
            guard let properties = feature["properties"] as? [String: Any], let country = properties["iso_a2"] as? String,
                let geometry = feature["geometry"] as? [String: Any], let coordinates = geometry["coordinates"] as? [Any]
            else { continue }
            let polygons: [[[Double]]]
            switch geometry["type"] as? String {
            case "Polygon": polygons = [rings(coordinates)]
            case "MultiPolygon": polygons = coordinates.map { rings($0 as? [Any] ?? []) }
            default: continue
            }
            var west = 180.0
            var south = 90.0
            var east = -180.0
            var north = -90.0
            for polygon in polygons {
                for ring in polygon {
                    for i in stride(from: 0, to: ring.count, by: 2) {
                        west = min(west, ring[i])
                        east = max(east, ring[i])
                        south = min(south, ring[i + 1])
                        north = max(north, ring[i + 1])
                    }
                }
            }
            outlines.append(Outline(country: country, west: west, south: south, east: east, north: north, polygons: polygons))
        }
        return CountryOutlines(outlines: outlines)
    }

    private static func rings(_ value: [Any]) -> [[Double]] {
        value.map { ring in ((ring as? [[Double]]) ?? []).flatMap { $0.count >= 2 ? [$0[0], $0[1]] : [] } }
    }

    /// The ISO code of the country whose outline contains `point`, or nil (sea, or a disputed area without a code).
    public func country(at point: Coordinate) -> String? {
        if let cell = Self.cell(x: point.longitude, y: point.latitude) {
            let value = cells[cell.row * Self.columns + cell.column]
            if value != Self.mixed { return value == 0 ? nil : outlines[Int(value) - 1].country }
        }
        return scan(x: point.longitude, y: point.latitude)
    }

    /// The grid cell of a point; nil on the grid's far edges (longitude 180, latitude 90), which no cell holds.
    static func cell(x: Double, y: Double) -> (row: Int, column: Int)? {
        let column = Int(((x + 180) / cellDegrees).rounded(.down))
        let row = Int(((y + 90) / cellDegrees).rounded(.down))
        guard (0..<columns).contains(column), (0..<rows).contains(row) else { return nil }
        return (row, column)
    }

    /// The first outline whose polygons contain the point, by testing them.
    func scan(x: Double, y: Double) -> String? {
        for outline in outlines where x >= outline.west && x <= outline.east && y >= outline.south && y <= outline.north {
            for polygon in outline.polygons where Self.contains(polygon, x, y) { return outline.country }
        }
        return nil
    }

    /// The cells: every cell an edge's bounding box touches is mixed (a cell is half-open, as the even-odd test
    /// is: `y` in [min, max) of an edge, `x` strictly left of its crossing); the others take their centre's answer,
    /// found a row at a time from the sorted crossings of each polygon's edges with the row's centre line.
    static func grid(_ outlines: [Outline]) -> [UInt16] {
        var cells = [UInt16](repeating: 0, count: rows * columns)
        for outline in outlines {
            for polygon in outline.polygons {
                for ring in polygon {
                    let n = ring.count / 2
                    guard n >= 3 else { continue }
                    var j = n - 1
                    for i in 0..<n {
                        let (x0, x1) = (min(ring[2 * i], ring[2 * j]), max(ring[2 * i], ring[2 * j]))
                        let (y0, y1) = (min(ring[2 * i + 1], ring[2 * j + 1]), max(ring[2 * i + 1], ring[2 * j + 1]))
                        let columnRange = clamp(x0 + 180, columns)...clamp(x1 + 180, columns)
                        for row in clamp(y0 + 90, rows)...clamp(y1 + 90, rows) {
                            for column in columnRange { cells[row * columns + column] = mixed }
                        }
                        j = i
                    }
                }
            }
        }
        var crossings: [Double] = []
        for row in 0..<rows {
            let y = -90 + (Double(row) + 0.5) * cellDegrees
            for (index, outline) in outlines.enumerated() where y >= outline.south && y <= outline.north {
                for polygon in outline.polygons {
                    crossings.removeAll(keepingCapacity: true)
                    for ring in polygon {
                        let n = ring.count / 2
                        guard n >= 3 else { continue }
                        var j = n - 1
                        for i in 0..<n {
                            let (xi, yi, xj, yj) = (ring[2 * i], ring[2 * i + 1], ring[2 * j], ring[2 * j + 1])
                            if (yi > y) != (yj > y) { crossings.append((xj - xi) * (y - yi) / (yj - yi) + xi) }
                            j = i
                        }
                    }
                    guard !crossings.isEmpty else { continue }
                    crossings.sort()
                    let first = clamp(crossings[0] + 180, columns)
                    for column in first...clamp(crossings[crossings.count - 1] + 180, columns) where cells[row * columns + column] == 0 {
                        // Inside when an odd number of crossings lie to the right of the centre.
                        let x = -180 + (Double(column) + 0.5) * cellDegrees
                        var low = 0
                        var high = crossings.count
                        while low < high {
                            let mid = (low + high) / 2
                            if crossings[mid] <= x { low = mid + 1 } else { high = mid }
                        }
                        if (crossings.count - low) % 2 == 1 { cells[row * columns + column] = UInt16(index + 1) }
                    }
                }
            }
        }
        return cells
    }

    /// The cell number of a coordinate offset to start at 0, kept on the grid.
    private static func clamp(_ offset: Double, _ count: Int) -> Int {
        min(count - 1, max(0, Int((offset / cellDegrees).rounded(.down))))
    }

    /// Even-odd rule over all rings of a polygon (so holes count out).
    static func contains(_ rings: [[Double]], _ x: Double, _ y: Double) -> Bool {
        var inside = false
        for ring in rings {
            let n = ring.count / 2
            guard n >= 3 else { continue }
            var j = n - 1
            for i in 0..<n {
                let xi = ring[2 * i]
                let yi = ring[2 * i + 1]
                let xj = ring[2 * j]
                let yj = ring[2 * j + 1]
                if (yi > y) != (yj > y), x < (xj - xi) * (y - yi) / (yj - yi) + xi { inside.toggle() }
                j = i
            }
        }
        return inside
    }
}
