import HTTPTypes

/// What a read operation answers: status, content type and body. Read operations are synchronous functions of
/// the query string (and a path parameter); the same function serves the application's router and the byte lane,
/// so the two cannot answer differently.
public struct ReadAnswer: Sendable {
    public var status: HTTPResponse.Status
    public var contentType: String
    public var body: [UInt8]

    public init(status: HTTPResponse.Status, contentType: String, body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }

    public static func json(_ body: [UInt8], geojson: Bool = false) -> ReadAnswer {
        ReadAnswer(status: .ok, contentType: geojson ? "application/geo+json" : "application/json", body: body)
    }
}

/// A read request as the transport hands it to a read operation: the query string (without `?`) and the path
/// parameter (`{id}`), both as they came, still percent-encoded.
public struct ReadRequest: Sendable {
    public let query: Substring?
    public let pathParameter: Substring?

    public init(query: Substring?, pathParameter: Substring?) {
        self.query = query
        self.pathParameter = pathParameter
    }

    /// The path and the query of a request target (`/v1/nearby?lat=1`), split at its first `?`.
    public static func split(target: Substring) -> (path: Substring, query: Substring?) {
        guard let question = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return (target, nil) }
        return (target[..<question], target[target.utf8.index(after: question)...])
    }
}

public typealias ReadHandler = @Sendable (ReadRequest) throws -> ReadAnswer

/// Where the byte lane makes a read's answer: on the event loop, or on the read workers.
///
/// A light read (a nearby or within walk, a record by id, a conversion, health) costs a few microseconds and is
/// answered on the event loop in the tick that read it. A heavy one — keyword search, geocoding, a keyword filter on
/// a spatial query, clusters over a box — can cost milliseconds; on the loop it would hold up every other connection
/// the loop serves, so it is answered on the read workers (`ReadWorkers`), and the connection's later requests wait
/// for it, in order.
public enum ReadCost: Sendable {
    case light
    case heavy
    /// Heavy when the query string has this parameter (`q` on nearby and within).
    case heavyWith(parameter: String)

    /// Whether the read of `target` (path and query, as it came) is heavy. A key with `%` or `+` in it is taken as
    /// possibly the parameter: only where the answer is made depends on this, never what it says.
    public func isHeavy(target: String) -> Bool {
        switch self {
        case .light: return false
        case .heavy: return true
        case .heavyWith(let parameter):
            var target = target
            return target.withUTF8 { bytes in
                guard let question = bytes.firstIndex(of: UInt8(ascii: "?")) else { return false }
                var keyStart = question + 1
                var i = keyStart
                while i <= bytes.count {
                    if i == bytes.count || bytes[i] == UInt8(ascii: "&") || bytes[i] == UInt8(ascii: "=") {
                        let key = UnsafeBufferPointer(rebasing: bytes[keyStart..<i])
                        if key.contains(UInt8(ascii: "%")) || key.contains(UInt8(ascii: "+")) || key.elementsEqual(parameter.utf8) { return true }
                        // Skip the value.
                        while i < bytes.count && bytes[i] != UInt8(ascii: "&") { i += 1 }
                        keyStart = i + 1
                    }
                    i += 1
                }
                return false
            }
        }
    }
}

/// The read operations of the route table by path.
public struct ReadRoutes: Sendable {
    public struct Entry: Sendable {
        public let operationId: String
        /// The route's path in Hummingbird's form (`/v1/pois/:id`): the `route` label of the request metrics.
        public let pattern: String
        public let cost: ReadCost
        public let handler: ReadHandler
    }

    private var table = PathTable<Entry>()

    public init() {}

    /// Adds the read operation of `path` (`/v1/pois/{id}`: a parameter only as the last segment).
    public mutating func add(operationId: String, path: String, pattern: String, cost: ReadCost, handler: @escaping ReadHandler) {
        table.add(path: path, Entry(operationId: operationId, pattern: pattern, cost: cost, handler: handler))
    }

    public var isEmpty: Bool { table.isEmpty }

    /// The read operation answering GET `path` (without its query), with its path parameter.
    public func match(_ path: Substring) -> (entry: Entry, parameter: Substring?)? { table.match(path) }
}

/// Routes by path, as the router matches them: literal paths by dictionary, `prefix/{id}` paths by prefix, where the
/// parameter is one whole segment.
public struct PathTable<Entry: Sendable>: Sendable {
    private var literal: [Substring: Entry] = [:]
    private var parameterized: [(prefix: String, entry: Entry)] = []

    public init() {}

    /// Whether the table can hold `path`: literal, or with one parameter as its last segment.
    public static func accepts(_ path: String) -> Bool {
        guard let brace = path.firstIndex(of: "{") else { return true }
        return path.last == "}" && path[brace...].dropFirst().allSatisfy { $0 != "{" && $0 != "/" }
            && path[path.index(before: brace)] == "/"
    }

    /// Adds the route of `path` (`/v1/pois/{id}`: a parameter only as the last segment).
    public mutating func add(path: String, _ entry: Entry) {
        precondition(Self.accepts(path), "a lane route's parameter is its last segment: \(path)")
        if let brace = path.firstIndex(of: "{") {
            parameterized.append((String(path[..<brace]), entry))
        } else {
            literal[Substring(path)] = entry
        }
    }

    public var isEmpty: Bool { literal.isEmpty && parameterized.isEmpty }

    /// The route of `path` (without its query), with its path parameter.
    public func match(_ path: Substring) -> (entry: Entry, parameter: Substring?)? {
        if let entry = literal[path] { return (entry, nil) }
        for (prefix, entry) in parameterized where path.hasPrefix(prefix) {
            let rest = path.dropFirst(prefix.count)
            if !rest.isEmpty, !rest.contains("/") { return (entry, rest) }
        }
        return nil
    }
}
