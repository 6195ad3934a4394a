import Foundation
import GeoCore
import Records
import SearchEngine
import VectorTile

/// The layers of `/tiles/{layer}/…` (docs/ARCHITECTURE.md, "Vector tiles").
public enum TileLayer: String, Sendable, CaseIterable {
    case pois, pins
    /// The imported map, the map's base: water, buildings and streets with their names (`BaseLayer`).
    case base

    public var kind: RecordKind { self == .pois ? .poi : .pin }

    public init(parameter text: String?) throws(ParameterError) {
        guard let text, let layer = TileLayer(rawValue: text) else {
            throw ParameterError("layer", "must be one of \(TileLayer.allCases.map(\.rawValue).joined(separator: ", ")) (got \"\(text ?? "")\")")
        }
        self = layer
    }

    /// The properties its features carry, as TileJSON's `fields` describes them.
    public var fields: [(name: String, description: String)] {
        var fields: [(String, String)]
        switch self {
        case .pois: fields = [("id", "String: the POI's id"), ("name", "String"), ("category", "String: a dot path, e.g. food.cafe")]
        case .pins:
            fields = [
                ("id", "String: the pin's id"), ("name", "String: first and last name"), ("mapString", "String: the place as its author wrote it"),
                ("mediaURL", "String"),
            ]
        case .base: return [("id", "String: the OSM way (osm-w…)"), ("name", "String: the street's name")]
        }
        fields.append(("count", "Number: records in the cell, in a clustered tile (the other fields only when it is 1)"))
        return fields
    }
}

/// The layers of a `base` tile, in drawing order: water (lakes, rivers, the sea), buildings, then the streets (the
/// layer named `base`).
public enum BaseLayer: String, Sendable, CaseIterable {
    case water, buildings, base

    public var fields: [(name: String, description: String)] {
        switch self {
        case .water: return [("id", "String: the OSM way or relation (osm-w…, osm-r…), or osm-sea-N for the sea"), ("name", "String")]
        case .buildings: return [("id", "String: the OSM way or relation (osm-w…, osm-r…)"), ("name", "String")]
        case .base: return TileLayer.base.fields
        }
    }

    public var description: String {
        switch self {
        case .water: return "Lakes, rivers and reservoirs, and the sea made from the coastline"
        case .buildings: return "Buildings, from zoom \(TileRequest.buildingsFrom)"
        case .base: return "Streets"
        }
    }

    public var minZoom: Int { self == .buildings ? TileRequest.buildingsFrom : 0 }
}

/// GET /tiles/{layer}/{z}/{x}/{y}.mvt: the tile's address from the path, its filters from the query string.
public struct TileRequest: Sendable {
    public var layer: TileLayer
    public var query: TileQuery
    /// The filters as asked (`query` holds them as the engine takes them).
    public var filters: TileFilters

    /// `z`, `x` and `y` as they came in the path; `y` without its `.mvt`.
    public init<S>(layer: String?, z: String?, x: String?, y: String?, _ p: RequestParameters<S>) throws(ParameterError) {
        self.layer = try TileLayer(parameter: layer)
        let zoom = try Self.integer("z", z, in: 0...WebMercatorTile.maxZoom)
        let last = (1 << zoom) - 1
        let column = try Self.integer("x", x, in: 0...last, rule: "at zoom \(zoom)")
        let row = try Self.integer("y", y, in: 0...last, rule: "at zoom \(zoom)")
        filters = try TileFilters(p)
        if self.layer == .base {
            if filters.text != nil { throw ParameterError("q", "does not apply to the base layer (streets): leave it out") }
            if filters.category != nil { throw ParameterError("category", "does not apply to the base layer (streets): leave it out") }
        }
        query = TileQuery(
            tile: WebMercatorTile(z: zoom, x: column, y: row)!,
            kind: self.layer.kind,
            text: filters.text,
            categories: filters.category.map { [$0] } ?? [],
            datum: filters.coordsys,
            clusterBelow: filters.clusterBelow
        )
    }

    /// The rule's text is made only for a refusal: this runs three times a tile.
    private static func integer(
        _ name: String,
        _ text: String?,
        in range: ClosedRange<Int>,
        rule: @autoclosure () -> String = ""
    ) throws(ParameterError)
        -> Int
    {
        guard let text, !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int(text),
            range.contains(value)
        else {
            let rule = rule()
            throw ParameterError(
                name,
                "must be an integer between \(range.lowerBound) and \(range.upperBound)\(rule.isEmpty ? "" : " " + rule) (got \"\(text ?? "")\")"
            )
        }
        return value
    }

    /// The WGS-84 box whose street lines the base tile holds (on a GCJ-02 or BD-09 map, the tile's image grown as
    /// `SearchEngine.tile` grows it).
    public var baseBox: BoundingBox { query.datum.wgs84SearchBox(query.tile.bounds(buffer: query.buffer, extent: query.extent)) }

    /// The zoom from which base tiles hold buildings.
    public static let buildingsFrom = 13

    /// The base tile: its `water` and `buildings` layers (`encodeAreas`), then its streets (`encodeBase`); empty when
    /// all three are.
    public func encodeBase(lines: [StreetLine], water: [MapArea], buildings: [MapArea]) -> [UInt8] {
        encodeAreas(water, layer: .water) + encodeAreas(query.tile.z >= Self.buildingsFrom ? buildings : [], layer: .buildings) + encodeBase(lines)
    }

    /// One layer of areas: each a polygon with its id and name, every ring clipped to the tile and its buffer and
    /// snapped to whole units (`Polygons.ring`); a ring left with less than a square unit is left out, with its holes
    /// when it is an outer ring. Empty when nothing is left.
    public func encodeAreas(_ areas: [MapArea], layer: BaseLayer) -> [UInt8] {
        var out = VectorTileLayer(name: layer.rawValue, extent: query.extent, keys: layer.fields.map { VectorTileLayer.Key($0.name) })
        var rings: [[(x: Int, y: Int)]] = []
        var projected: [(x: Double, y: Double)] = []
        for area in areas {
            rings.removeAll(keepingCapacity: true)
            var keepsHoles = false
            for ring in area.rings {
                guard ring.outer || keepsHoles else { continue }
                projected.removeAll(keepingCapacity: true)
                for point in ring.points {
                    var (latitude, longitude) = (point.latitude, point.longitude)
                    if query.datum != .wgs84 { (latitude, longitude) = query.datum.fromWGS84(latitude: latitude, longitude: longitude) }
                    projected.append(query.tile.point(latitude: latitude, longitude: longitude, extent: query.extent))
                }
                let clipped = Polygons.ring(projected, exterior: ring.outer, extent: query.extent, buffer: query.buffer)
                if ring.outer { keepsHoles = clipped != nil }
                if let clipped { rings.append(clipped) }
            }
            guard !rings.isEmpty else { continue }
            out.string(0, area.id)
            if let name = area.name { out.string(1, name) }
            out.addPolygon(rings)
        }
        return out.isEmpty ? [] : out.encoded()
    }

    /// The base tile's streets: each street line (as `/v1/streets` returns them for `baseBox`) with its id and primary
    /// name, every vertex in tile units; vertices that round to the one before are dropped (the generalisation at
    /// low zooms), and a line left with one vertex is left out. Empty when nothing is left.
    public func encodeBase(_ lines: [StreetLine]) -> [UInt8] {
        var out = VectorTileLayer(name: layer.rawValue, extent: query.extent, keys: layer.fields.map { VectorTileLayer.Key($0.name) })
        var xs: [Int] = []
        var ys: [Int] = []
        for line in lines where line.kind == .street {
            xs.removeAll(keepingCapacity: true)
            ys.removeAll(keepingCapacity: true)
            for point in line.points {
                var latitude = point.latitude
                var longitude = point.longitude
                if query.datum != .wgs84 { (latitude, longitude) = query.datum.fromWGS84(latitude: latitude, longitude: longitude) }
                let p = query.tile.position(latitude: latitude, longitude: longitude, extent: query.extent)
                if let x = xs.last, let y = ys.last, x == p.x, y == p.y { continue }
                xs.append(p.x)
                ys.append(p.y)
            }
            guard xs.count >= 2 else { continue }
            out.string(0, line.id)
            if let name = line.names.first { out.string(1, name) }
            out.addLine(xs: xs, ys: ys)
        }
        return out.isEmpty ? [] : out.encoded()
    }

    /// A writer of the tile's Mapbox Vector Tile, for `SearchEngine.tile(_:into:)`.
    public func writer() -> MVTWriter { MVTWriter(layer: layer, extent: query.extent) }
}

/// Writes the records `SearchEngine.tile` gives into one Mapbox Vector Tile layer named after the path's, with the
/// properties of `TileLayer.fields` (keys 0… in that order; `count` last).
public struct MVTWriter: TileWriter {
    private var out: VectorTileLayer
    private let countKey: Int
    /// The layer's value index of each category code, made on first use (-1: not yet).
    private var categoryValues: [Int64] = []
    private var categories: [String] = []

    init(layer: TileLayer, extent: Int) {
        out = VectorTileLayer(name: layer.rawValue, extent: extent, keys: layer.fields.map { VectorTileLayer.Key($0.name) })
        countKey = layer.fields.count - 1
    }

    /// The tile's bytes; empty when it holds nothing (answered 204).
    public func encoded() -> [UInt8] { out.isEmpty ? [] : out.encoded() }

    public mutating func begin(categories: [String]) {
        self.categories = categories
        categoryValues = Array(repeating: -1, count: categories.count)
    }

    public mutating func poi(x: Int, y: Int, id: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>, category: Int?, count: Int?) {
        out.string(0, id)
        out.string(1, name)
        if let category {
            if categoryValues[category] < 0 { categoryValues[category] = Int64(out.value(categories[category])) }
            out.property(2, value: UInt32(categoryValues[category]))
        }
        if let count { out.uint(countKey, UInt64(count)) }
        out.addPoint(x: x, y: y)
    }

    public mutating func pin(x: Int, y: Int, _ pin: PinRecord, count: Int?) {
        out.string(0, pin.id)
        out.string(1, [pin.firstName, pin.lastName].filter { !$0.isEmpty }.joined(separator: " "))
        if !pin.mapString.isEmpty { out.string(2, pin.mapString) }
        if !pin.mediaURL.isEmpty { out.string(3, pin.mediaURL) }
        if let count { out.uint(countKey, UInt64(count)) }
        out.addPoint(x: x, y: y)
    }

    public mutating func cluster(x: Int, y: Int, count: Int) {
        out.uint(countKey, UInt64(count))
        out.addPoint(x: x, y: y)
    }
}

/// The query parameters a tile and its TileJSON share: `q`, `category`, `coordsys` and `cluster`.
public struct TileFilters: Sendable {
    public var text: String?
    public var category: String?
    public var coordsys: CRS.Geographic
    public var clusterBelow: Int

    public init<S>(_ p: RequestParameters<S>) throws(ParameterError) {
        text = try p.text()
        category = try p.category()
        coordsys = try p.coordsys()
        clusterBelow = try p.int("cluster", in: 0...(WebMercatorTile.maxZoom + 1), default: TileQuery.defaultClusterBelow)
    }

    /// The query string that asks for these filters again (empty for the defaults), for TileJSON's tile URL.
    public var queryString: String {
        var items: [String] = []
        func add(_ name: String, _ value: String) {
            items.append(name + "=" + (value.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? value))
        }
        if let text { add("q", text) }
        if let category { add("category", category) }
        if coordsys != .wgs84 { add("coordsys", coordsys.rawValue) }
        if clusterBelow != TileQuery.defaultClusterBelow { add("cluster", String(clusterBelow)) }
        return items.isEmpty ? "" : "?" + items.joined(separator: "&")
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}

/// GET /tiles/{layer}.json: TileJSON 3.0.0 for a layer with the request's filters.
public struct TileJSONRequest: Sendable {
    public var layer: TileLayer
    public var filters: TileFilters

    public init<S>(layer: String?, _ p: RequestParameters<S>) throws(ParameterError) {
        self.layer = try TileLayer(parameter: layer)
        filters = try TileFilters(p)
    }

    /// The document; `base` is the service's URL as the client reached it (`http://host:port`), `bounds` the
    /// records' WGS-84 box (nil: the whole Web Mercator world), given in the tiles' `coordsys`: a GCJ-02 map draws
    /// the records where that datum puts them, up to ~700 m from their WGS-84 places.
    public func encode(base: String, bounds: BoundingBox?) -> [UInt8] {
        let limit = WebMercatorTile.maxLatitude
        let box = bounds.map { filters.coordsys.fromWGS84($0) } ?? BoundingBox(uncheckedWest: -180, south: -limit, east: 180, north: limit)
        let west = max(-180, box.west)
        let east = min(180, box.east)
        let south = max(-limit, box.south)
        let north = min(limit, box.north)
        var fields: [String: String] = [:]
        for field in layer.fields { fields[field.name] = field.description }
        let maxZoom = 16
        let document: [String: Any] = [
            "tilejson": "3.0.0",
            "name": "poi \(layer.rawValue)",
            "description": layer == .base
                ? "The imported map: water, buildings and streets with their names"
                : "\(layer == .pois ? "Points of interest" : "User pins"); clustered per grid cell at zooms below \(filters.clusterBelow)",
            "scheme": "xyz",
            "tiles": ["\(base)/tiles/\(layer.rawValue)/{z}/{x}/{y}.mvt\(filters.queryString)"],
            "minzoom": 0,
            "maxzoom": maxZoom,
            "bounds": [west, south, east, north],
            "center": [(west + east) / 2, (south + north) / 2, bounds == nil ? 1 : 12],
            "attribution": layer == .pins ? "" : "© OpenStreetMap contributors (ODbL) and the data's sources",
            "vector_layers": layer == .base
                ? BaseLayer.allCases.map { base -> [String: Any] in
                    var fields: [String: String] = [:]
                    for field in base.fields { fields[field.name] = field.description }
                    return ["id": base.rawValue, "description": base.description, "minzoom": base.minZoom, "maxzoom": maxZoom, "fields": fields]
                }
                : [
                    [
                        "id": layer.rawValue,
                        "description": layer == .pois ? "Points of interest" : "User pins",
                        "minzoom": 0,
                        "maxzoom": maxZoom,
                        "fields": fields,
                    ]
                ],
        ]
        let data = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return [UInt8](data)
    }
}
