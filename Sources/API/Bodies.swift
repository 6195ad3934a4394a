import BundledData
import GeoCore
import Records
import SearchEngine

// The JSON bodies of the write operations as typed values, read once here against the contract — strict JSON
// (`StrictJSON`), an object at the top, each field of the type the contract says — for the HTTP server (and any
// other caller). A body that breaks a rule is a `BodyError` naming the field and the rule: a 400 problem+json.

/// A request body that breaks the contract; the message names the field and the rule.
public struct BodyError: Error, Equatable, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}

/// A JSON object body, member by member.
public struct JSONObjectBody: Sendable {
    public let members: [String: JSONValue]

    public init(_ bytes: some Collection<UInt8>) throws(BodyError) {
        let value: JSONValue
        do { value = try StrictJSON.parse(bytes) } catch { throw BodyError("the body is not valid JSON: \(error.description)") }
        guard case .object(let members) = value else { throw BodyError("the body must be a JSON object, not \(value.kindDescription)") }
        self.members = members
    }

    public func string(_ key: String, required: Bool = false, maximumLength: Int = 1_000) throws(BodyError) -> String? {
        switch members[key] {
        case nil, .null?:
            if required { throw BodyError("\(key) is required") }
            return nil
        case .string(let text)?:
            guard text.unicodeScalars.count <= maximumLength else { throw BodyError("\(key) must be at most \(maximumLength) characters") }
            return text
        case let other?:
            throw BodyError("\(key) must be a string, not \(other.kindDescription)")
        }
    }

    /// The number under one of `keys` (aliases such as lat and latitude); refuses both given at once.
    public func number(_ keys: [String]) throws(BodyError) -> Double? {
        let present = keys.filter { members[$0] != nil }
        if present.count > 1 { throw BodyError("give only one of \(present.joined(separator: " and "))") }
        guard let key = present.first else { return nil }
        guard case .number(let value)? = members[key] else { throw BodyError("\(key) must be a number, not \(members[key]!.kindDescription)") }
        return value
    }

    /// lat/lon (or latitude/longitude) in the request's coordinate system, validated and converted to WGS-84.
    public func position(coordsys: CRS.Geographic) throws -> Coordinate {
        guard let lat = try number(["lat", "latitude"]) else { throw BodyError("lat is required (a number between -90 and 90)") }
        guard let lon = try number(["lon", "longitude"]) else { throw BodyError("lon is required (a number between -180 and 180)") }
        return coordsys.toWGS84(try Coordinate(latitude: lat, longitude: lon))
    }

    /// An object of strings (a POI's `tags`); absent or null is none.
    public func strings(_ key: String) throws(BodyError) -> [String: String] {
        switch members[key] {
        case nil, .null?: return [:]
        case .object(let object)?:
            var strings: [String: String] = [:]
            for (name, value) in object {
                guard case .string(let text) = value else { throw BodyError("\(key).\(name) must be a string") }
                strings[name] = text
            }
            return strings
        default: throw BodyError("\(key) must be an object of strings")
        }
    }
}

/// PUT /v1/pois/{id}: a POI as a client writes it.
public struct POIBody: Sendable {
    /// The POI the body describes, with the path's id (positions in WGS-84).
    public let record: POIRecord

    /// Reads the body of a PUT to `id`: an `id` in the body, if any, must be the path's.
    public init(_ bytes: some Collection<UInt8>, id: String, coordsys: CRS.Geographic) throws {
        let body = try JSONObjectBody(bytes)
        if let given = try body.string("id"), given != id { throw BodyError("id in the body must match the path (or be left out)") }
        let position = try body.position(coordsys: coordsys)
        let tags = try body.strings("tags")
        record = POIRecord(
            id: id,
            name: try body.string("name", required: true)!,
            category: try body.string("category", required: true)!,
            address: try body.string("address"),
            city: try body.string("city"),
            country: try body.string("country"),
            lat: position.latitude,
            lon: position.longitude,
            tags: tags
        )
    }
}

/// POST /v1/pins and PUT /v1/pins/{id}: a pin as a client writes it, checked against the pin rules.
public enum PinBody {
    public static func input(_ bytes: some Collection<UInt8>, coordsys: CRS.Geographic) throws -> PinInput {
        let body = try JSONObjectBody(bytes)
        let position = try body.position(coordsys: coordsys)
        let input = PinInput(
            uniqueKey: try body.string("uniqueKey") ?? "",
            firstName: try body.string("firstName") ?? "",
            lastName: try body.string("lastName") ?? "",
            mapString: try body.string("mapString") ?? "",
            mediaURL: try body.string("mediaURL") ?? "",
            latitude: position.latitude,
            longitude: position.longitude
        )
        try PinRules.check(input)
        return input
    }
}

/// POST /v1/convert: points between two coordinate systems.
public struct ConvertBody: Sendable {
    public let from: CRS
    public let to: CRS
    public let points: [XY]

    public static let maximumPoints = 100_000

    public init(_ bytes: some Collection<UInt8>) throws {
        let body = try JSONObjectBody(bytes)
        guard let fromText = try body.string("from") else { throw BodyError("from is required (wgs84, gcj02, bd09 or EPSG:<code>)") }
        guard let toText = try body.string("to") else { throw BodyError("to is required (wgs84, gcj02, bd09 or EPSG:<code>)") }
        from = try CRS(parsing: fromText)
        to = try CRS(parsing: toText)
        guard case .array(let raw)? = body.members["points"] else { throw BodyError("points is required: an array of [x, y] pairs") }
        guard raw.count <= Self.maximumPoints else { throw BodyError("points must hold at most \(Self.maximumPoints) pairs") }
        var points: [XY] = []
        points.reserveCapacity(raw.count)
        for (index, item) in raw.enumerated() {
            guard case .array(let pair) = item, pair.count == 2, case .number(let x) = pair[0], case .number(let y) = pair[1] else {
                throw BodyError("points[\(index)] must be [x, y] with two numbers")
            }
            points.append(XY(x: x, y: y))
        }
        self.points = points
    }
}
