import HTTPTypes

/// What a read operation answers: status, content type, further header fields and body. Read operations are
/// synchronous functions of the query string, the path parameters and a few request header fields; the same function
/// serves the application's router and the byte lane, so the two cannot answer differently.
public struct ReadAnswer: Sendable {
    public var status: HTTPResponse.Status
    /// nil for an answer without content (204, 304).
    public var contentType: String?
    public var body: [UInt8]
    /// Header fields written after Content-Type, in this order (a tile's caching and coding).
    public var fields: [HTTPField]

    public init(status: HTTPResponse.Status, contentType: String?, body: [UInt8], fields: [HTTPField] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.fields = fields
    }

    public static func json(_ body: [UInt8], geojson: Bool = false) -> ReadAnswer {
        ReadAnswer(status: .ok, contentType: geojson ? "application/geo+json" : "application/json", body: body)
    }

    /// Whether a status admits content, and with it a Content-Length (RFC 9110 §8.6: not 1xx, 204 or 304).
    public static func admitsContent(_ status: HTTPResponse.Status) -> Bool {
        status.kind != .informational && status != .noContent && status != .notModified
    }
}

/// A read request as the transport hands it to a read operation: the query string (without `?`) and the path
/// parameters (`{id}`, or `{z}`, `{x}` and `{y}` of a tile), as they came, still percent-encoded; and the request
/// header fields a read may answer by (the byte lane reads these two only).
public struct ReadRequest: Sendable {
    public let query: Substring?
    /// In the order of the route's path.
    public let pathParameters: [Substring]
    /// `Accept-Encoding`, for a compressed answer.
    public let acceptEncoding: String?
    /// `If-None-Match`, for a 304.
    public let ifNoneMatch: String?

    public init(query: Substring?, pathParameters: [Substring] = [], acceptEncoding: String? = nil, ifNoneMatch: String? = nil) {
        self.query = query
        self.pathParameters = pathParameters
        self.acceptEncoding = acceptEncoding
        self.ifNoneMatch = ifNoneMatch
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
    /// Heavy when this says so of the request target (a tile by its zoom and layer).
    case heavyWhen(@Sendable (String) -> Bool)

    /// Whether the read of `target` (path and query, as it came) is heavy. A key with `%` or `+` in it is taken as
    /// possibly the parameter: only where the answer is made depends on this, never what it says.
    public func isHeavy(target: String) -> Bool {
        switch self {
        case .light: return false
        case .heavy: return true
        case .heavyWhen(let isHeavy): return isHeavy(target)
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

    /// Adds the read operation of `path` (`/v1/pois/{id}`, `/tiles/{layer}/{z}/{x}/{y}.mvt`).
    public mutating func add(operationId: String, path: String, pattern: String, cost: ReadCost, handler: @escaping ReadHandler) {
        table.add(path: path, Entry(operationId: operationId, pattern: pattern, cost: cost, handler: handler))
    }

    public var isEmpty: Bool { table.isEmpty }

    /// The read operation answering GET `path` (without its query), with its path parameters.
    public func match(_ path: Substring) -> (entry: Entry, parameters: [Substring])? { table.match(path) }
}

/// Routes by path, as the router matches them: literal paths by dictionary, others segment by segment, where a
/// parameter is one whole non-empty segment (`{id}`), or one with a literal suffix and a non-empty stem (`{y}.mvt`).
public struct PathTable<Entry: Sendable>: Sendable {
    private enum Segment: Sendable {
        case literal(Substring)
        /// A parameter, with the literal text that follows it in its segment ("" for none).
        case parameter(suffix: Substring)
    }

    private var literal: [Substring: Entry] = [:]
    private var parameterized: [(segments: [Segment], entry: Entry)] = []

    public init() {}

    /// Whether the table can hold `path`: each segment literal, a parameter, or a parameter and a literal suffix.
    public static func accepts(_ path: String) -> Bool {
        path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().allSatisfy { segment in
            guard let open = segment.firstIndex(of: "{") else { return !segment.contains("}") }
            guard open == segment.startIndex, let close = segment.firstIndex(of: "}"), close > segment.index(after: open) else { return false }
            return !segment[segment.index(after: close)...].contains { $0 == "{" || $0 == "}" }
        }
    }

    /// Adds the route of `path` (`/v1/pois/{id}`, `/tiles/{layer}/{z}/{x}/{y}.mvt`).
    public mutating func add(path: String, _ entry: Entry) {
        precondition(path.hasPrefix("/") && Self.accepts(path), "a lane route's parameters are whole segments, or ones with a suffix: \(path)")
        guard path.contains("{") else {
            literal[Substring(path)] = entry
            return
        }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { segment -> Segment in
            guard segment.first == "{", let close = segment.firstIndex(of: "}") else { return .literal(segment) }
            return .parameter(suffix: segment[segment.index(after: close)...])
        }
        parameterized.append((segments, entry))
    }

    public var isEmpty: Bool { literal.isEmpty && parameterized.isEmpty }

    /// The route of `path` (without its query), with its path parameters in order.
    ///
    /// Walks the path's UTF-8 bytes: `Substring`'s `split` and `hasSuffix` compare by Character, which asks for grapheme
    /// breaks at every step (~1 % of the server's CPU under deep tiles, perf). The lane's targets are ASCII.
    public func match(_ path: Substring) -> (entry: Entry, parameters: [Substring])? {
        if let entry = literal[path] { return (entry, []) }
        let utf8 = path.utf8
        guard utf8.first == UInt8(ascii: "/") else { return nil }
        routes: for (segments, entry) in parameterized {
            var start = utf8.index(after: utf8.startIndex)
            var parameters: [Substring] = []
            for (n, segment) in segments.enumerated() {
                let end = utf8[start...].firstIndex(of: UInt8(ascii: "/")) ?? utf8.endIndex
                let part = utf8[start..<end]
                switch segment {
                case .literal(let text):
                    guard part.elementsEqual(text.utf8) else { continue routes }
                case .parameter(let suffix):
                    let suffixCount = suffix.utf8.count
                    guard part.count > suffixCount, part.suffix(suffixCount).elementsEqual(suffix.utf8) else { continue routes }
                    parameters.append(path[start..<utf8.index(end, offsetBy: -suffixCount)])
                }
                if n == segments.count - 1 {
                    guard end == utf8.endIndex else { continue routes }
                } else {
                    guard end != utf8.endIndex else { continue routes }
                    start = utf8.index(after: end)
                }
            }
            return (entry, parameters)
        }
        return nil
    }
}
