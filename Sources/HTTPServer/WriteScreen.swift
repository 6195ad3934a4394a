import HTTPTypes

/// Writes refused in the byte lane, before the router (issue 59): a write without valid credentials (401) or over
/// its rate limit (429) is answered from the request's head alone, its body read and dropped, with the answer the
/// router's handler would have thrown — the same problem, fields and bytes (`ResponseHead`), the same request
/// metrics and request-log entry. Under a flood of refused writes the readers beside it then lose what a flood of
/// `/health` costs them, not the router's per-request work (docs/ARCHITECTURE.md, "The walk of a read").
///
/// Only routes whose handler asks for the principal before anything else are screened (`WriteRoutes`), and only
/// what can be decided without waiting: a token not yet in the verified-token cache goes to the router. A write
/// the screen lets through is handed to the pipeline behind, alone; the lane takes the connection back once its
/// answer is written (`RawFastLaneHandler`).
public struct WriteScreen: Sendable {
    /// A write as the screen sees it.
    public struct Request: Sendable {
        public let method: HTTPRequest.Method
        /// The route's path in Hummingbird's form (`/v1/pins/:id`).
        public let pattern: String
        /// The `Authorization` header's value, as it came (spaces around it trimmed).
        public let authorization: Substring?
        /// The peer's address, whose bucket limits writers without an identity.
        public let client: String?
    }

    /// How the router would refuse the write, and whom the request log names as its caller.
    public struct Refusal: Sendable {
        public let problem: Problem
        public let caller: AccessLog.Caller?

        public init(problem: Problem, caller: AccessLog.Caller?) {
            self.problem = problem
            self.caller = caller
        }
    }

    let routes: WriteRoutes
    let refusal: @Sendable (Request) -> Refusal?

    /// - Parameter refusal: the answer to a write of `routes`, decided without waiting; nil: the router decides.
    public init(routes: WriteRoutes, refusal: @escaping @Sendable (Request) -> Refusal?) {
        self.routes = routes
        self.refusal = refusal
    }
}

/// The write routes the screen answers for, by method and path.
public struct WriteRoutes: Sendable {
    private var tables: [HTTPRequest.Method: PathTable<String>] = [:]

    public init() {}

    /// Adds `method path` (`/v1/pins/{id}`), whose pattern in Hummingbird's form is `pattern`; false when the path's
    /// shape is not one the lane matches (a parameter before the last segment).
    @discardableResult
    public mutating func add(method: HTTPRequest.Method, path: String, pattern: String) -> Bool {
        guard PathTable<String>.accepts(path) else { return false }
        tables[method, default: PathTable()].add(path: path, pattern)
        return true
    }

    public var isEmpty: Bool { tables.values.allSatisfy(\.isEmpty) }

    /// The pattern of the route `method path` matches.
    func match(_ method: HTTPRequest.Method, _ path: Substring) -> String? {
        tables[method]?.match(path)?.entry
    }
}
