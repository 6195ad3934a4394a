import API
import Hummingbird

/// What a read operation answers: status, content type and body. Read operations are synchronous functions of
/// the query string (and a path parameter); the same function serves the Hummingbird route and the fast lane, so
/// the two cannot answer differently.
struct ReadAnswer: Sendable {
    var status: HTTPResponse.Status
    var contentType: String
    var body: [UInt8]

    static func json(_ body: [UInt8], geojson: Bool = false) -> ReadAnswer {
        ReadAnswer(status: .ok, contentType: geojson ? "application/geo+json" : "application/json", body: body)
    }

    /// In the request's format, labelled application/geo+json for GeoJSON.
    static func encoded(_ encoder: APIEncoder, _ body: [UInt8]) -> ReadAnswer { json(body, geojson: encoder.format == .geojson) }
}

/// The input of a read operation.
struct ReadInput {
    let query: FormQuery
    /// The path parameter (`{id}`) as it came, still percent-encoded.
    let pathParameter: Substring?

    var parameters: QueryParameters { RequestParameters(query) }
}

typealias ReadHandler = @Sendable (ReadInput) throws -> ReadAnswer

/// Where the byte lane makes a read's answer: on the event loop, or on the read workers.
///
/// A light read (a nearby or within walk, a record by id, a conversion, health) costs a few microseconds and is
/// answered on the event loop in the tick that read it. A heavy one — keyword search, geocoding, a keyword filter on
/// a spatial query, clusters over a box — can cost milliseconds; on the loop it would hold up every other connection
/// the loop serves, so it is answered on the read workers (`ReadWorkers`), and the connection's later requests wait
/// for it, in order.
enum ReadCost: Sendable {
    case light
    case heavy
    /// Heavy when the query string has this parameter (`q` on nearby and within).
    case heavyWith(parameter: String)

    /// Whether the read of `target` (path and query, as it came) is heavy. A key with `%` or `+` in it is taken as
    /// possibly the parameter: only where the answer is made depends on this, never what it says.
    func isHeavy(target: String) -> Bool {
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

/// The read operations of the route table by path: literal paths by dictionary, `prefix/{id}` paths by prefix.
struct ReadRoutes: Sendable {
    struct Entry: Sendable {
        let operationId: String
        /// The route's path in Hummingbird's form (`/v1/pois/:id`): the `route` label of the request metrics.
        let pattern: String
        let cost: ReadCost
        let handler: ReadHandler
    }

    private var literal: [Substring: Entry] = [:]
    private var parameterized: [(prefix: String, entry: Entry)] = []

    mutating func add(_ route: Route, pattern: String, cost: ReadCost, handler: @escaping ReadHandler) {
        let entry = Entry(operationId: route.operationId, pattern: pattern, cost: cost, handler: handler)
        if let brace = route.path.firstIndex(of: "{") {
            precondition(route.path.last == "}", "a read route's parameter is its last segment: \(route)")
            parameterized.append((String(route.path[..<brace]), entry))
        } else {
            literal[Substring(route.path)] = entry
        }
    }

    var isEmpty: Bool { literal.isEmpty && parameterized.isEmpty }

    /// The read operation answering GET `path` (without its query), with its path parameter.
    func match(_ path: Substring) -> (entry: Entry, parameter: Substring?)? {
        if let entry = literal[path] { return (entry, nil) }
        for (prefix, entry) in parameterized where path.hasPrefix(prefix) {
            let rest = path.dropFirst(prefix.count)
            if !rest.isEmpty, !rest.contains("/") { return (entry, rest) }
        }
        return nil
    }
}
