import GeoCore
import Hummingbird
import HummingbirdCore
import SearchEngine

/// Query-string access with the contract's rules: repeated parameters take the last value, unknown ones are
/// ignored, and a value that does not parse is a 400 naming the parameter and the rule.
struct Parameters {
    /// Parsed once: `uri.queryParameters` parses the query string on every access.
    let query: FlatDictionary<Substring, Substring>

    init(_ request: Request) { self.query = request.uri.queryParameters }

    func string(_ name: String) -> String? {
        value(name).map { String($0) }
    }

    /// The last value of `name`, without copying.
    private func value(_ name: String) -> Substring? {
        var found: Substring?
        for element in query where element.key == name { found = element.value }
        return found
    }

    func double(_ name: String, rule: String = "must be a number") throws(Problem) -> Double? {
        guard let text = value(name) else { return nil }
        guard let value = DecimalNumber.parse(Self.trimmed(text)) else { throw .badRequest("\(name) \(rule)") }
        return value
    }

    func int(_ name: String, rule: String) throws(Problem) -> Int? {
        guard let text = value(name) else { return nil }
        guard let value = DecimalNumber.parseInteger(Self.trimmed(text)) else { throw .badRequest("\(name) \(rule)") }
        return value
    }

    /// Without surrounding spaces and tabs (a number pasted with a space around it is still that number).
    private static func trimmed(_ text: Substring) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) }) else {
            return text[text.endIndex...]
        }
        return text[first...last]
    }

    func required(_ name: String) throws(Problem) -> String {
        guard let value = string(name) else { throw .badRequest("\(name) is required") }
        return value
    }

    /// lat/lon as an origin in the request's coordinate system, converted to WGS-84.
    func origin(required: Bool, coordsys: CoordSys) throws -> Coordinate? {
        let lat = try double("lat", rule: "must be a number between -90 and 90")
        let lon = try double("lon", rule: "must be a number between -180 and 180")
        guard let origin = try QueryValidation.origin(lat: lat, lon: lon, required: required) else { return nil }
        return coordsys.toWGS84(origin)
    }

    func coordsys() throws -> CoordSys { try CoordSys(parsing: string("coordsys")) }
    func format() throws -> APIEncoder.Format { try APIEncoder.Format(parsing: string("format")) }
    func kind() throws -> KindFilter { try KindFilter(parsing: string("kind")) }
    func limit(default value: Int = 20) throws -> Int {
        try QueryValidation.limit(try int("limit", rule: "must be an integer between 1 and 100"), default: value)
    }
}

