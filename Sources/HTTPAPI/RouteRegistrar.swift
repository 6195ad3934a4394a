import API
import HTTPServer
import Hummingbird

/// The input of a read operation: its query string as form parameters, and its path parameter.
struct ReadInput {
    let query: FormQuery
    /// The path parameter (`{id}`) as it came, still percent-encoded.
    let pathParameter: Substring?

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
        let name = route.segments.last.flatMap { $0.hasPrefix("{") && $0.hasSuffix("}") ? String($0.dropFirst().dropLast()) : nil }
        on(operationId) { request, context in
            let answer = try handler(ReadInput(query: FormQuery(request.uri.query), pathParameter: name.flatMap { context.parameters.get($0)?[...] }))
            return Response(
                status: answer.status,
                headers: [.contentType: answer.contentType],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body))
            )
        }
        reads.add(operationId: operationId, path: route.path, pattern: Self.pattern(route), cost: cost) { request in
            try handler(ReadInput(query: FormQuery(request.query), pathParameter: request.pathParameter))
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
