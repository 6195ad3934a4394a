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

/// The read operations of the route table by path: literal paths by dictionary, `prefix/{id}` paths by prefix.
struct ReadRoutes: Sendable {
    struct Entry: Sendable {
        let operationId: String
        /// The route's path in Hummingbird's form (`/v1/pois/:id`): the `route` label of the request metrics.
        let pattern: String
        let handler: ReadHandler
    }

    private var literal: [Substring: Entry] = [:]
    private var parameterized: [(prefix: String, entry: Entry)] = []

    mutating func add(_ route: Route, pattern: String, handler: @escaping ReadHandler) {
        let entry = Entry(operationId: route.operationId, pattern: pattern, handler: handler)
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
