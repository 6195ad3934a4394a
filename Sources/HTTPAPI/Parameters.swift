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
        query[values: Substring(name)].last.map { String($0) }
    }

    func double(_ name: String, rule: String = "must be a number") throws(Problem) -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite else { throw .badRequest("\(name) \(rule)") }
        return value
    }

    func int(_ name: String, rule: String) throws(Problem) -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else { throw .badRequest("\(name) \(rule)") }
        return value
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


import Foundation
