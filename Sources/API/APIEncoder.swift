import BundledData
import GeoCore
import Records
import SearchEngine

/// Response bodies of the v1 API (also printed by the CLI's `--format json`): JSON or GeoJSON, in the request's
/// coordinate system. Numbers are written in their shortest round-trip form; positions keep full precision.
public struct APIEncoder: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case json, geojson
    }

    public let coordsys: CRS.Geographic
    public let format: Format
    /// Who reads the answer, for the pin answers that say whether each pin is theirs: nil writes no `owned` (search
    /// answers, the same for every caller); `.some(nil)` is a reader without a valid user token, who owns none.
    public let reader: String??

    public init(coordsys: CRS.Geographic = .wgs84, format: Format = .json, reader: String?? = nil) {
        self.coordsys = coordsys
        self.format = format
        self.reader = reader
    }

    /// `{"results": [...], "next": ...}` (+ `"total"`), or a FeatureCollection with `next`/`total` members. `next` is
    /// the cursor of the following page (made by the request, which knows its query).
    public func page(_ page: Page, next: String?) -> [UInt8] {
        var json = JSONWriter(capacity: 256 + 320 * page.results.count)
        beginList(&json)
        for hit in page.results {
            switch hit.storage {
            case .record(let record): write(record, distance: hit.distance, score: hit.score, to: &json)
            case .packed(let poi): write(poi, distance: hit.distance, score: hit.score, to: &json)
            }
        }
        json.endArray()
        json.key("next")
        if let next { json.string(next) } else { json.null() }
        if let total = page.total {
            json.field("total", total)
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
    public func clusters(_ clusters: [ClusterCell]) -> [UInt8] {
        var json = JSONWriter()
        beginList(&json)
        for cluster in clusters {
            let p = coordsys.fromWGS84(latitude: cluster.latitude, longitude: cluster.longitude)
            beginItem(at: p, to: &json)
            json.key("geohash")
            json.string(cluster.geohash.string)
            json.field("count", cluster.count)
            json.field("lat", p.latitude)
            json.field("lon", p.longitude)
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
        json.field("total", total)
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
            json.pointGeometry(latitude: p.latitude, longitude: p.longitude)
            json.key("properties")
        }
        json.beginObject()
    }

    /// A POI from the record store, written from its bytes: the same output as `write(.poi(poi.record), ...)`.
    public func write(_ poi: PackedPOI, distance: Double?, score: Double?, to json: inout JSONWriter) {
        let p = coordsys.fromWGS84(latitude: poi.latitude, longitude: poi.longitude)
        beginItem(at: p, to: &json)
        poi.bytes.withUnsafeBufferPointer { bytes in
            json.key("id")
            json.string(utf8: UnsafeBufferPointer(rebasing: bytes[poi.idRange]))
            json.field("kind", literal: "poi")
            json.key("name")
            json.string(utf8: UnsafeBufferPointer(rebasing: bytes[poi.nameRange]))
            json.key("category")
            json.string(utf8: UnsafeBufferPointer(rebasing: bytes[poi.categoryRange]))
            if let range = poi.addressRange {
                json.key("address")
                json.string(utf8: UnsafeBufferPointer(rebasing: bytes[range]))
            }
            if let range = poi.cityRange {
                json.key("city")
                json.string(utf8: UnsafeBufferPointer(rebasing: bytes[range]))
            }
            if let range = poi.countryRange {
                json.key("country")
                json.string(utf8: UnsafeBufferPointer(rebasing: bytes[range]))
            }
            json.field("lat", p.latitude)
            json.field("lon", p.longitude)
            json.key("tags")
            // The store keeps tags as TagsJSON.write wrote them.
            if poi.tagsRange.isEmpty {
                json.beginObject()
                json.endObject()
            } else {
                json.raw(UnsafeBufferPointer(rebasing: bytes[poi.tagsRange]))
            }
        }
        writeTail(distance: distance, score: score, to: &json)
    }

    public func write(_ record: Hit.Record, distance: Double?, score: Double?, to json: inout JSONWriter) {
        let position = record.position
        let p = coordsys.fromWGS84(latitude: position.latitude, longitude: position.longitude)
        beginItem(at: p, to: &json)
        switch record {
        case .poi(let poi):
            json.field("id", poi.id)
            json.field("kind", literal: "poi")
            json.field("name", poi.name)
            json.field("category", poi.category)
            if let address = poi.address { json.field("address", address) }
            if let city = poi.city { json.field("city", city) }
            if let country = poi.country { json.field("country", country) }
            json.field("lat", p.latitude)
            json.field("lon", p.longitude)
            json.key("tags")
            TagsJSON.write(poi.tags, to: &json)
        case .pin(let pin):
            json.pinFields(
                pin,
                id: "id",
                kind: true,
                latitude: ("lat", p.latitude),
                longitude: ("lon", p.longitude),
                owned: reader.map { pin.isOwned(by: $0) }
            )
        }
        writeTail(distance: distance, score: score, to: &json)
    }

    /// distance and score, then the record's (and feature's) end.
    /// Distances are written to 0.1 m and scores to 0.001: finer digits are noise to a client.
    private func writeTail(distance: Double?, score: Double?, to json: inout JSONWriter) {
        if let distance {
            json.field("distance", (distance * 10).rounded() / 10)
        }
        if let score {
            json.field("score", (score * 1000).rounded() / 1000)
        }
        json.endObject()
        if format == .geojson { json.endObject() }
    }
}

extension JSONWriter {
    /// A pin's fields in the order both its wire shapes write them (the API's record, On the Map's StudentLocation):
    /// the id under the shape's key, `"kind":"pin"` when asked, the person and the place's text, the position under
    /// the shape's keys (in the answer's coordinate system), the timestamps, and whether the reader owns it when the
    /// answer is for one reader.
    public mutating func pinFields(
        _ pin: PinRecord,
        id: StaticString,
        kind: Bool,
        latitude: (StaticString, Double),
        longitude: (StaticString, Double),
        owned: Bool? = nil
    ) {
        field(id, pin.id)
        if kind { field("kind", literal: "pin") }
        field("uniqueKey", pin.uniqueKey)
        field("firstName", pin.firstName)
        field("lastName", pin.lastName)
        field("mapString", pin.mapString)
        field("mediaURL", pin.mediaURL)
        field(latitude.0, latitude.1)
        field(longitude.0, longitude.1)
        field("createdAt", pin.createdAt)
        field("updatedAt", pin.updatedAt)
        if let owned {
            key("owned")
            bool(owned)
        }
    }
}

extension PinRecord {
    /// Whether `reader` (a user's `sub`; nil for a caller without a user token) placed this pin. A pin no user owns
    /// is nobody's: a key's or an anonymous writer's pin is not "owned" by the next anonymous reader.
    public func isOwned(by reader: String?) -> Bool {
        guard let owner, let reader else { return false }
        return owner == reader
    }
}
