import GeoCore
import Records
import SearchEngine

/// A request parameter that does not satisfy its rule. The HTTP server answers it as a 400 problem+json, the CLI
/// as exit status 2; both print `"\(parameter) \(rule)"`.
public struct ParameterError: Error, Equatable, Sendable, CustomStringConvertible {
    public let parameter: String
    public let rule: String

    public init(_ parameter: String, _ rule: String) {
        self.parameter = parameter
        self.rule = rule
    }

    public var description: String { "\(parameter) \(rule)" }

    /// A GeoCore error about a parameter's value: the parameter it names, else `parameter` (whose value broke it).
    static func from(_ error: GeoError, parameter: String) -> ParameterError {
        if case .invalidGeohashPrecision = error { return ParameterError("precision", Rules.precision) }
        return ParameterError(error.parameter ?? parameter, error.rule)
    }
}

/// Where named parameter values come from: a URL's query string, or the options of a CLI command.
public protocol ParameterSource {
    /// The last value given for `name` (a repeated parameter takes its last value), nil when absent.
    func lastValue(of name: String) -> Substring?

    /// Calls `body` with the last value's UTF-8 bytes and answers true, or answers false when absent: numbers are
    /// read without making a string. (Not generic: a generic closure here cost more than the parse.)
    func withLastValue(of name: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) -> Bool
}

extension ParameterSource {
    public func withLastValue(of name: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        guard let value = lastValue(of: name) else { return false }
        var text = String(value)
        text.withUTF8(body)
        return true
    }
}

/// Parameters as a list of names and values, in order: what the CLI builds from its options, and what it sends as
/// a query string with `--server`.
public struct QueryItems: ParameterSource, Sendable, ExpressibleByArrayLiteral {
    public private(set) var items: [(name: String, value: String)]

    public init(_ items: [(String, String?)]) {
        self.items = items.compactMap { name, value in value.map { (name, $0) } }
    }

    /// Absent (nil) values are left out.
    public init(arrayLiteral elements: (String, String?)...) { self.init(elements) }

    public mutating func append(_ name: String, _ value: String?) {
        if let value { items.append((name, value)) }
    }

    public static func + (left: QueryItems, right: QueryItems) -> QueryItems {
        var sum = left
        sum.items += right.items
        return sum
    }

    public func lastValue(of name: String) -> Substring? {
        items.last { $0.name == name }.map { Substring($0.value) }
    }
}

/// Typed access to parameters with the contract's rules: repeated parameters take the last value, unknown ones are
/// ignored, and a value that does not parse is a `ParameterError` naming the parameter and the rule. Numbers are
/// decimal only (no hex, no `inf`), with surrounding spaces or tabs allowed.
public struct RequestParameters<Source: ParameterSource> {
    public let source: Source

    public init(_ source: Source) { self.source = source }

    public func string(_ name: String) -> String? {
        source.lastValue(of: name).map { String($0) }
    }

    public func required(_ name: String) throws(ParameterError) -> String {
        guard let value = string(name) else { throw ParameterError(name, "is required") }
        return value
    }

    // (Rules are autoclosures: made only when a value breaks them, not on every request.)

    public func double(_ name: String, rule: @autoclosure () -> String) throws(ParameterError) -> Double? {
        var parsed: Double?
        guard source.withLastValue(of: name, { parsed = DecimalNumber.parse(utf8: Self.trimmed($0)) }) else { return nil }
        guard let value = parsed else { throw ParameterError(name, rule()) }
        return value
    }

    public func int(_ name: String, rule: @autoclosure () -> String) throws(ParameterError) -> Int? {
        var parsed: Int?
        guard source.withLastValue(of: name, { parsed = DecimalNumber.parseInteger(utf8: Self.trimmed($0)) }) else { return nil }
        guard let value = parsed else { throw ParameterError(name, rule()) }
        return value
    }

    /// An integer in `range`, or `defaultValue` when absent.
    public func int(_ name: String, in range: ClosedRange<Int>, default defaultValue: Int) throws(ParameterError) -> Int {
        // (The rule is made only for an error: a closure capturing `range` cost an allocation per request.)
        let value = try int(name, rule: Self.integerRule(range)) ?? defaultValue
        guard range.contains(value) else { throw ParameterError(name, Self.integerRule(range)) }
        return value
    }

    private static func integerRule(_ range: ClosedRange<Int>) -> String {
        "must be an integer between \(range.lowerBound) and \(range.upperBound)"
    }

    /// Without surrounding spaces and tabs (a number pasted with a space around it is still that number).
    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    // MARK: The parameters the operations share

    /// `coordsys`: the system of the request's positions and of the answer's (default WGS-84).
    public func coordsys() throws(ParameterError) -> CRS.Geographic {
        guard let text = source.lastValue(of: "coordsys") else { return .wgs84 }
        guard let value = CRS.Geographic(name: text) else { throw ParameterError("coordsys", "must be wgs84, gcj02 or bd09") }
        return value
    }

    /// `format`: json (default) or geojson.
    public func format() throws(ParameterError) -> APIEncoder.Format {
        guard let text = source.lastValue(of: "format") else { return .json }
        guard let value = APIEncoder.Format(rawValue: text.lowercased()) else { throw ParameterError("format", "must be json or geojson") }
        return value
    }

    /// `coordsys` and `format` as the encoder of the answer.
    public func encoder() throws(ParameterError) -> APIEncoder {
        APIEncoder(coordsys: try coordsys(), format: try format())
    }

    /// `kind`: poi (default), pin or all.
    public func kind() throws(ParameterError) -> KindFilter {
        guard let text = string("kind") else { return .poi }
        guard let kind = KindFilter(rawValue: text) else { throw ParameterError("kind", "must be poi, pin or all") }
        return kind
    }

    /// `limit`: 1 to 100.
    public func limit(default value: Int = 20) throws(ParameterError) -> Int {
        try int("limit", in: Rules.limitRange, default: value)
    }

    /// `lat`/`lon` as a WGS-84 origin (given in `coordsys`); both or neither, and with `required` both.
    public func origin(required: Bool, coordsys: CRS.Geographic) throws(ParameterError) -> Coordinate? {
        let lat = try double("lat", rule: Rules.latitude)
        let lon = try double("lon", rule: Rules.longitude)
        if lat == nil && lon == nil {
            if required { throw ParameterError("lat", "is required (with lon)") }
            return nil
        }
        guard let lat else { throw ParameterError("lat", "is required when lon is given") }
        guard let lon else { throw ParameterError("lon", "is required when lat is given") }
        guard (-90...90).contains(lat) else { throw ParameterError("lat", Rules.latitude) }
        guard (-180...180).contains(lon) else { throw ParameterError("lon", Rules.longitude) }
        return coordsys.toWGS84(Coordinate(uncheckedLatitude: lat, longitude: lon))
    }

    /// A keyword parameter (`q` unless named otherwise): see `Rules.text`.
    public func text(_ name: String = "q") throws(ParameterError) -> String? {
        guard let value = string(name) else { return nil }
        return try Rules.text(value, parameter: name)
    }

    /// `category`: a category path, lower-cased.
    public func category() throws(ParameterError) -> String? {
        guard let value = string("category") else { return nil }
        guard let path = CategoryPath.normalized(value) else { throw ParameterError("category", CategoryPath.rule) }
        return path
    }

    /// `bbox` as WGS-84 (given in `coordsys`).
    public func bbox(coordsys: CRS.Geographic, required: Bool = false) throws(ParameterError) -> BoundingBox? {
        guard let text = required ? try self.required("bbox") : string("bbox") else { return nil }
        do throws(GeoError) {
            return coordsys.toWGS84(try BoundingBox(parsing: text))
        } catch {
            throw ParameterError.from(error, parameter: "bbox")
        }
    }

    /// `polygon` as WGS-84 (given in `coordsys`).
    public func polygon(coordsys: CRS.Geographic) throws(ParameterError) -> Polygon? {
        guard let text = string("polygon") else { return nil }
        do throws(GeoError) {
            return coordsys.toWGS84(try Polygon(parsing: text))
        } catch {
            throw ParameterError.from(error, parameter: "polygon")
        }
    }
}
