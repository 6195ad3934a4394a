import API
import Hummingbird

/// Registers the handlers of the route table's operations on the router, by operationId: the path and method come
/// from the table only. `finish()` checks that every operation of the table has its handler.
final class RouteRegistrar {
    typealias Handler = @Sendable (Request, BasicRequestContext) async throws -> Response

    let router: Router<BasicRequestContext>
    private var registered: Set<String> = []

    init(router: Router<BasicRequestContext>) { self.router = router }

    func on(_ operationId: String, _ handler: @escaping Handler) {
        guard let route = RouteTable.route(operationId) else { preconditionFailure("no route \(operationId) in RouteTable") }
        guard registered.insert(operationId).inserted else { preconditionFailure("\(operationId) registered twice") }
        let path = RouterPath("/" + route.segments.map { $0.hasPrefix("{") ? ":" + $0.dropFirst().dropLast() : $0 }.joined(separator: "/"))
        let method: HTTPRequest.Method
        switch route.method {
        case .get: method = .get
        case .post: method = .post
        case .put: method = .put
        case .delete: method = .delete
        }
        router.on(path, method: method, use: handler)
    }

    /// Every operation of the table has a handler.
    func finish() {
        let missing = RouteTable.routes.map(\.operationId).filter { !registered.contains($0) }
        precondition(missing.isEmpty, "operations of RouteTable without a handler: \(missing)")
    }
}
