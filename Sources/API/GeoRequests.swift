import BundledData
import Gazetteer
import GeoCore
import Records

// geocode, reverse and convert as typed requests, parsed once for the HTTP server and the CLI (`poi geocode` and
// `poi reverse` send the same parameters with --server as they parse locally), each with the encoder of its answer.

extension ParameterError {
    /// A gazetteer query rule, with the parameter it names.
    static func from(_ error: GazetteerError) -> ParameterError { ParameterError(error.parameter, error.rule) }
}

/// GET /v1/geocode.
public struct GeocodeRequest: Sendable {
    public var query: GeocodeQuery
    /// The system of `lat`/`lon` in and of the answer's positions.
    public var coordsys: CRS.Geographic

    public init<S>(_ p: RequestParameters<S>) throws(ParameterError) {
        coordsys = try p.coordsys()
        let text = try p.required("q")
        let limit = try p.int("limit", rule: "must be an integer between 1 and 100") ?? 10
        let near = try p.origin(required: false, coordsys: coordsys)
        do throws(GazetteerError) {
            query = try GeocodeQuery(text: text, limit: limit, country: p.string("country"), language: p.string("lang"), near: near)
        } catch {
            throw ParameterError.from(error)
        }
    }

    /// `{"results": [...], "next": null}`.
    public func encode(_ results: [GeocodeResult]) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.key("results")
        json.beginArray()
        for result in results { result.converted(to: coordsys).write(to: &json) }
        json.endArray()
        json.key("next")
        json.null()
        json.endObject()
        return json.buffer
    }
}

/// GET /v1/reverse.
public struct ReverseRequest: Sendable {
    public var point: Coordinate
    public var coordsys: CRS.Geographic

    public init<S>(_ p: RequestParameters<S>) throws(ParameterError) {
        coordsys = try p.coordsys()
        point = try p.origin(required: true, coordsys: coordsys)!
    }

    public func encode(_ result: ReverseResult) -> [UInt8] {
        var result = result
        if let place = result.place { result = result.replacingPlace(place.converted(to: coordsys)) }
        result.address = result.address?.converted(to: coordsys)
        var json = JSONWriter()
        result.write(to: &json)
        return json.buffer
    }
}

/// GET /v1/convert: one position between any two systems.
public struct ConvertRequest: Sendable {
    public var from: CRS
    public var to: CRS
    public var point: XY

    public init<S>(_ p: RequestParameters<S>) throws(ParameterError) {
        from = try Self.crs(p, "from")
        to = try Self.crs(p, "to")
        guard let lat = try p.double("lat", rule: "must be a number (latitude or northing)") else { throw ParameterError("lat", "is required") }
        guard let lon = try p.double("lon", rule: "must be a number (longitude or easting)") else { throw ParameterError("lon", "is required") }
        point = XY(x: lon, y: lat)
    }

    static func crs<S>(_ p: RequestParameters<S>, _ name: String) throws(ParameterError) -> CRS {
        let text = try p.required(name)
        do throws(GeoError) {
            return try CRS(parsing: text)
        } catch {
            throw ParameterError(name, "must be wgs84, gcj02, bd09 or EPSG:<code> of a CRS known to PROJ (got \"\(text.prefix(40))\")")
        }
    }

    /// `{"from", "to", "point": [x, y]}`.
    public func encode(_ converted: XY) -> [UInt8] {
        Self.encode(from: from, to: to, "point") { $0.xy(converted) }
    }

    /// A conversion's answer: `{"from", "to", key: …}`.
    static func encode(from: CRS, to: CRS, _ key: StaticString, _ value: (inout JSONWriter) -> Void) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.field("from", from.description)
        json.field("to", to.description)
        json.key(key)
        value(&json)
        json.endObject()
        return json.buffer
    }
}

extension ConvertBody {
    /// `{"from", "to", "points": [[x, y], …]}`.
    public func encode(_ converted: [XY]) -> [UInt8] {
        ConvertRequest.encode(from: from, to: to, "points") { json in
            json.beginArray()
            for point in converted { json.xy(point) }
            json.endArray()
        }
    }
}

extension JSONWriter {
    /// `[x, y]`.
    mutating func xy(_ point: XY) {
        beginArray()
        number(point.x)
        number(point.y)
        endArray()
    }
}

extension GeocodeResult {
    /// The result with its position in `coordsys`.
    public func converted(to coordsys: CRS.Geographic) -> GeocodeResult {
        guard coordsys != .wgs84 else { return self }
        let p = coordsys.fromWGS84(latitude: latitude, longitude: longitude)
        return moved(latitude: p.latitude, longitude: p.longitude, distance: distance)
    }

    /// The result with `distance` (metres from the request's origin).
    public func with(distance: Double?) -> GeocodeResult { moved(latitude: latitude, longitude: longitude, distance: distance) }

    private func moved(latitude: Double, longitude: Double, distance: Double?) -> GeocodeResult {
        GeocodeResult(
            id: id,
            name: name,
            displayName: displayName,
            latitude: latitude,
            longitude: longitude,
            country: country,
            admin1: admin1,
            admin2: admin2,
            population: population,
            type: type,
            score: score,
            adcode: adcode,
            unresolved: unresolved,
            distance: distance,
            address: address,
            interpolation: interpolation
        )
    }
}

extension ReverseResult {
    public func replacingPlace(_ place: GeocodeResult) -> ReverseResult {
        ReverseResult(
            place: place,
            country: country,
            countryName: countryName,
            admin1: admin1,
            admin2: admin2,
            city: city,
            division: division,
            address: address
        )
    }
}

/// GET /v1/streets: the imported street lines in a box, as GeoJSON LineStrings (the map page's offline base layer).
public struct StreetsRequest: Sendable {
    public let box: BoundingBox
    public let limit: Int
    public let coordsys: CRS.Geographic

    public init<S>(_ p: RequestParameters<S>) throws(ParameterError) {
        coordsys = try p.encoder().coordsys
        box = try p.bbox(coordsys: coordsys, required: true)!
        limit = try p.int("limit", in: Rules.streetsLimitRange, default: 1_000)
    }

    /// `{"type": "FeatureCollection", "features": [...], "truncated": Bool}`; each feature a LineString with its
    /// `id` and `name` (and `names`, the variants) as properties, coordinates [lon, lat] in the request's coordsys.
    public func encode(_ answer: (lines: [StreetLine], truncated: Bool)) -> [UInt8] {
        var json = JSONWriter()
        json.featureCollection(
            answer.lines,
            after: {
                $0.key("truncated")
                $0.bool(answer.truncated)
            },
            feature: { line, json in
                json.key("id")
                json.string(line.id)
                json.key("properties")
                json.beginObject()
                json.key("id")
                json.string(line.id)
                json.key("name")
                json.string(line.names.first ?? "")
                json.key("names")
                json.beginArray()
                for name in line.names { json.string(name) }
                json.endArray()
                json.endObject()
                json.key("geometry")
                json.beginObject()
                json.key("type")
                json.string("LineString")
                json.key("coordinates")
                json.beginArray()
                for point in line.points {
                    let p = coordsys.fromWGS84(latitude: point.latitude, longitude: point.longitude)
                    json.beginArray()
                    json.number((p.longitude * 1e7).rounded() / 1e7)
                    json.number((p.latitude * 1e7).rounded() / 1e7)
                    json.endArray()
                }
                json.endArray()
                json.endObject()
            }
        )
        return json.buffer
    }
}
