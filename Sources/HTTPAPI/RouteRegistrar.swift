import API
import HTTPServer
import Hummingbird

/// The input of a read operation: its query string as form parameters, its path parameters, and the request header
/// fields a read may answer by.
struct ReadInput {
    let query: FormQuery
    /// The path parameters (`{id}`; a tile's `{layer}`, `{z}`, `{x}`, `{y}`) in the path's order, as they came, still
    /// percent-encoded.
    let pathParameters: [Substring]
    var acceptEncoding: String? = nil
    var ifNoneMatch: String? = nil

    /// The last path parameter: a record route's `{id}`.
    var pathParameter: Substring? { pathParameters.last }

    var parameters: QueryParameters { RequestParameters(query) }
}

extension ReadAnswer {
    /// In the request's format, labelled application/geo+json for GeoJSON.
    static func encoded(_ encoder: APIEncoder, _ body: [UInt8]) -> ReadAnswer { json(body, geojson: encoder.format == .geojson) }
}

extension RequestParameters where Source == FormQuery {
    init(_ request: Request) { self.init(FormQuery(request.uri.query)) }
}

/// Registers the handlers of the route table's operations on the router, by operationId: the path and method come
/// from the table only. `finish()` checks that every operation of the table has its handler.
final class RouteRegistrar {
    typealias Handler = @Sendable (Request, AppRequestContext) async throws -> Response

    let router: Router<AppRequestContext>
    private var registered: Set<String> = []
    /// The read operations registered with `read`, for the fast lane.
    private(set) var reads = ReadRoutes()
    /// The write operations registered with `write`, for the fast lane's write screen.
    private(set) var writes = WriteRoutes()

    init(router: Router<AppRequestContext>) { self.router = router }

    func on(_ operationId: String, _ handler: @escaping Handler) {
        guard let route = RouteTable.route(operationId) else { preconditionFailure("no route \(operationId) in RouteTable") }
        guard registered.insert(operationId).inserted else { preconditionFailure("\(operationId) registered twice") }
        let path = RouterPath(Self.pattern(route))
        let method: HTTPRequest.Method
        switch route.method {
        case .get: method = .get
        case .post: method = .post
        case .put: method = .put
        case .delete: method = .delete
        }
        router.on(path, method: method, use: handler)
    }

    /// Registers a write operation whose handler asks `WriteAccess.principal` before anything else — before it reads
    /// the body or a parameter — and answers its errors as problem+json: the byte lane may then refuse the write's
    /// missing credentials and rate limit itself, as the handler would (`WriteScreen`).
    func write(_ operationId: String, _ handler: @escaping Handler) {
        on(operationId, handler)
        guard let route = RouteTable.route(operationId) else { return }
        let method: HTTPRequest.Method
        switch route.method {
        case .get: preconditionFailure("\(operationId) is a GET route")
        case .post: method = .post
        case .put: method = .put
        case .delete: method = .delete
        }
        writes.add(method: method, path: route.path, pattern: Self.pattern(route))
    }

    /// Registers a read operation: a synchronous function of the query string and path parameter, served by the
    /// router and by the fast lane alike.
    func read(_ operationId: String, cost: ReadCost = .light, _ handler: @escaping @Sendable (ReadInput) throws -> ReadAnswer) {
        guard let route = RouteTable.route(operationId), route.method == .get else { preconditionFailure("\(operationId) is not a GET route") }
        // `{name}` or `{name}.suffix` segments, in order.
        let names = route.segments.compactMap { segment -> String? in
            guard segment.hasPrefix("{"), let close = segment.firstIndex(of: "}") else { return nil }
            return String(segment[segment.index(after: segment.startIndex)..<close])
        }
        on(operationId) { request, context in
            let answer = try handler(
                ReadInput(
                    query: FormQuery(request.uri.query),
                    pathParameters: names.compactMap { context.parameters.get($0)?[...] },
                    acceptEncoding: request.headers[.acceptEncoding],
                    ifNoneMatch: request.headers[.ifNoneMatch]
                )
            )
            // The fields in the byte lane's order (`ResponseHead`): Content-Type, the read's own, then Hummingbird's.
            var headers = HTTPFields()
            if let contentType = answer.contentType { headers[.contentType] = contentType }
            headers.append(contentsOf: answer.fields)
            guard ReadAnswer.admitsContent(answer.status) else { return Response(status: answer.status, headers: headers) }
            return Response(status: answer.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
        }
        reads.add(operationId: operationId, path: route.path, pattern: Self.pattern(route), cost: cost) { request in
            try handler(
                ReadInput(
                    query: FormQuery(request.query),
                    pathParameters: request.pathParameters,
                    acceptEncoding: request.acceptEncoding,
                    ifNoneMatch: request.ifNoneMatch
                )
            )
        }
    }

    /// The route's path in Hummingbird's form: `{id}` as `:id`; `{y}.mvt` as it is (Hummingbird captures the part
    /// before the suffix).
    static func pattern(_ route: Route) -> String {
        "/" + route.segments.map { $0.hasPrefix("{") && $0.hasSuffix("}") ? ":" + $0.dropFirst().dropLast() : $0 }.joined(separator: "/")
    }

    /// Every operation of the table has a handler.
    func finish() {
        let missing = RouteTable.routes.map(\.operationId).filter { !registered.contains($0) }
        precondition(missing.isEmpty, "operations of RouteTable without a handler: \(missing)")
    }
}
