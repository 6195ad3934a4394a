import BundledData
import Catalog
import GeoCore
import SpatialIndex

/// The coordinate system of a request's input and output (`coordsys`).
public enum CoordSys: String, Sendable, CaseIterable {
    case wgs84, gcj02, bd09

    public init(parsing text: String?) throws(SearchError) {
        guard let text else {
            self = .wgs84
            return
        }
        guard let value = CoordSys(rawValue: text.lowercased()) else { throw .invalid(parameter: "coordsys", rule: "must be wgs84, gcj02 or bd09") }
        self = value
    }

    /// A position given in this system, in WGS-84.
    public func toWGS84(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        switch self {
        case .wgs84: return (latitude, longitude)
        case .gcj02: return ChinaDatum.gcj02ToWGS84(latitude: latitude, longitude: longitude)
        case .bd09: return ChinaDatum.bd09ToWGS84(latitude: latitude, longitude: longitude)
        }
    }

    /// A WGS-84 position in this system.
    public func fromWGS84(latitude: Double, longitude: Double) -> (latitude: Double, longitude: Double) {
        switch self {
        case .wgs84: return (latitude, longitude)
        case .gcj02: return ChinaDatum.wgs84ToGCJ02(latitude: latitude, longitude: longitude)
        case .bd09: return ChinaDatum.wgs84ToBD09(latitude: latitude, longitude: longitude)
        }
    }

    public func toWGS84(_ c: Coordinate) -> Coordinate {
        let w = toWGS84(latitude: c.latitude, longitude: c.longitude)
        return Coordinate(uncheckedLatitude: w.latitude, longitude: w.longitude)
    }

    /// A box given in this system, in WGS-84 (corners converted; exact away from the China boundary).
    public func toWGS84(_ box: BoundingBox) -> BoundingBox {
        guard self != .wgs84 else { return box }
        let sw = toWGS84(latitude: box.south, longitude: box.west)
        let ne = toWGS84(latitude: box.north, longitude: box.east)
        return BoundingBox(uncheckedWest: sw.longitude, south: min(sw.latitude, ne.latitude), east: ne.longitude, north: max(sw.latitude, ne.latitude))
    }

    public func toWGS84(_ polygon: Polygon) -> Polygon {
        guard self != .wgs84 else { return polygon }
        return (try? Polygon(vertices: polygon.vertices.map { toWGS84($0) })) ?? polygon
    }
}

/// Response bodies of the v1 API (also printed by the CLI's `--format json`): JSON or GeoJSON, in the request's
/// coordinate system. Numbers are written in their shortest round-trip form; positions keep full precision.
public struct APIEncoder: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case json, geojson

        public init(parsing text: String?) throws(SearchError) {
            guard let text else {
                self = .json
                return
            }
            guard let value = Format(rawValue: text.lowercased()) else { throw .invalid(parameter: "format", rule: "must be json or geojson") }
            self = value
        }
    }

    public let coordsys: CoordSys
    public let format: Format

    public init(coordsys: CoordSys = .wgs84, format: Format = .json) {
        self.coordsys = coordsys
        self.format = format
    }

    /// `{"results": [...], "next": ...}` (+ `"total"`), or a FeatureCollection with `next`/`total` members.
    public func page(_ page: Page) -> [UInt8] {
        var json = JSONWriter()
        json.buffer.reserveCapacity(256 + 320 * page.results.count)
        beginList(&json)
        for hit in page.results {
            switch hit.storage {
            case .record(let record): write(record, distance: hit.distance, score: hit.score, to: &json)
            case .packed(let poi): write(poi, distance: hit.distance, score: hit.score, to: &json)
            }
        }
        json.endArray()
        json.key("next")
        if let next = page.next { json.string(next) } else { json.null() }
        if let total = page.total {
            json.key("total")
            json.number(total)
        }
        json.endObject()
        return json.buffer
    }

    /// One record (GET /v1/pois/{id}, pins).
    public func record(_ record: Hit.Record) -> [UInt8] {
        var json = JSONWriter()
        write(record, distance: nil, score: nil, to: &json)
        return json.buffer
    }

    /// `{"results": [{"geohash","count","lat","lon"}]}` or a FeatureCollection of cluster points.
    public func clusters(_ clusters: [Cluster]) -> [UInt8] {
        var json = JSONWriter()
        beginList(&json)
        for cluster in clusters {
            let p = coordsys.fromWGS84(latitude: cluster.latitude, longitude: cluster.longitude)
            beginItem(at: p, to: &json)
            json.key("geohash")
            json.string(cluster.geohash.string)
            json.key("count")
            json.number(cluster.count)
            json.key("lat")
            json.number(p.latitude)
            json.key("lon")
            json.number(p.longitude)
            json.endObject()
            if format == .geojson { json.endObject() }
        }
        json.endArray()
        json.endObject()
        return json.buffer
    }

    /// A list of pins with the total (GET /v1/pins).
    public func pins(_ pins: [PinRecord], total: Int, next: String? = nil) -> [UInt8] {
        var json = JSONWriter()
        beginList(&json)
        for pin in pins { write(.pin(pin), distance: nil, score: nil, to: &json) }
        json.endArray()
        json.key("next")
        if let next { json.string(next) } else { json.null() }
        json.key("total")
        json.number(total)
        json.endObject()
        return json.buffer
    }

    /// Opens `{"results": [` or, for GeoJSON, `{"type": "FeatureCollection", "features": [`.
    private func beginList(_ json: inout JSONWriter) {
        json.beginObject()
        if format == .geojson {
            json.key("type")
            json.string("FeatureCollection")
            json.key("features")
        } else {
            json.key("results")
        }
        json.beginArray()
    }

    /// Opens one list item: `{` or, for GeoJSON, `{"type":"Feature","geometry":...,"properties":{`.
    private func beginItem(at p: (latitude: Double, longitude: Double), to json: inout JSONWriter) {
        if format == .geojson {
            json.beginObject()
            json.key("type")
            json.string("Feature")
            writeGeometry(p, to: &json)
            json.key("properties")
        }
        json.beginObject()
    }

    /// A POI's tags as a JSON object, keys sorted. The record store keeps tags in exactly this form, so answers
    /// written from its bytes match answers written from records.
    static func writeTags(_ tags: [String: String], to json: inout JSONWriter) {
        json.beginObject()
        if tags.count == 1, let (key, value) = tags.first {
            json.field(key, value)
        } else if !tags.isEmpty {
            for key in tags.keys.sorted() { json.field(key, tags[key]!) }
        }
        json.endObject()
    }

    private func writeGeometry(_ p: (latitude: Double, longitude: Double), to json: inout JSONWriter) {
        json.key("geometry")
        json.beginObject()
        json.key("type")
        json.string("Point")
        json.key("coordinates")
        json.beginArray()
        json.number(p.longitude)
        json.number(p.latitude)
        json.endArray()
        json.endObject()
    }

    /// A POI from the record store, written from its bytes: the same output as `write(.poi(poi.record), ...)`.
    func write(_ poi: PackedPOI, distance: Double?, score: Double?, to json: inout JSONWriter) {
        let p = coordsys.fromWGS84(latitude: poi.latitude, longitude: poi.longitude)
        beginItem(at: p, to: &json)
        poi.bytes.withUnsafeBufferPointer { bytes in
            json.key("id")
            json.string(utf8: UnsafeBufferPointer(rebasing: bytes[poi.idRange]))
            json.field("kind", "poi")
            json.key("name")
            json.string(utf8: UnsafeBufferPointer(rebasing: bytes[poi.nameRange]))
            json.field("category", poi.category)
            if let range = poi.addressRange {
                json.key("address")
                json.string(utf8: UnsafeBufferPointer(rebasing: bytes[range]))
            }
            if let city = poi.city { json.field("city", city) }
            if let country = poi.country { json.field("country", country) }
            json.key("lat")
            json.number(p.latitude)
            json.key("lon")
            json.number(p.longitude)
            json.key("tags")
            // The store keeps tags as writeTags wrote them.
            if poi.tagsRange.isEmpty {
                json.beginObject()
                json.endObject()
            } else {
                json.raw(UnsafeBufferPointer(rebasing: bytes[poi.tagsRange]))
            }
        }
        writeTail(distance: distance, score: score, to: &json)
    }

    func write(_ record: Hit.Record, distance: Double?, score: Double?, to json: inout JSONWriter) {
        let position = EngineState.position(record)
        let p = coordsys.fromWGS84(latitude: position.latitude, longitude: position.longitude)
        beginItem(at: p, to: &json)
        switch record {
        case .poi(let poi):
            json.field("id", poi.id)
            json.field("kind", "poi")
            json.field("name", poi.name)
            json.field("category", poi.category)
            if let address = poi.address { json.field("address", address) }
            if let city = poi.city { json.field("city", city) }
            if let country = poi.country { json.field("country", country) }
            json.key("lat")
            json.number(p.latitude)
            json.key("lon")
            json.number(p.longitude)
            json.key("tags")
            APIEncoder.writeTags(poi.tags, to: &json)
        case .pin(let pin):
            json.field("id", pin.id)
            json.field("kind", "pin")
            json.field("uniqueKey", pin.uniqueKey)
            json.field("firstName", pin.firstName)
            json.field("lastName", pin.lastName)
            json.field("mapString", pin.mapString)
            json.field("mediaURL", pin.mediaURL)
            json.key("lat")
            json.number(p.latitude)
            json.key("lon")
            json.number(p.longitude)
            json.field("createdAt", pin.createdAt)
            json.field("updatedAt", pin.updatedAt)
        }
        writeTail(distance: distance, score: score, to: &json)
    }

    /// distance and score, then the record's (and feature's) end.
    private func writeTail(distance: Double?, score: Double?, to json: inout JSONWriter) {
        if let distance {
            json.key("distance")
            json.number(distance)
        }
        if let score {
            json.key("score")
            json.number(score)
        }
        json.endObject()
        if format == .geojson { json.endObject() }
    }
}
