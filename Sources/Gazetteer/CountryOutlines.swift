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
        let x = point.longitude
        let y = point.latitude
        for outline in outlines where x >= outline.west && x <= outline.east && y >= outline.south && y <= outline.north {
            for polygon in outline.polygons where Self.contains(polygon, x, y) { return outline.country }
        }
        return nil
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
