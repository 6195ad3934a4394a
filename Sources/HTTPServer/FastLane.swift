import BundledData
import Dispatch
import HTTPTypes
import Logging
import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the byte lane needs: the read operations, the write screen, how an error they throw is answered, the request
/// metrics and the `Server` header.
public struct FastLane: Sendable {
    let reads: ReadRoutes
    /// Writes refused before the router; nil: every write goes to the router.
    let screen: WriteScreen?
    let metrics: EndpointMetrics?
    let serverName: String
    let logger: Logger
    /// The problem an error of a read operation answers; nil for an unexpected error (a logged 500).
    let problem: @Sendable (any Error) -> Problem?
    /// The request log, when the server keeps one.
    let accessLog: AccessLog?
    /// The threads that answer heavy reads.
    public let workers: ReadWorkers

    public init(
        reads: ReadRoutes,
        metrics: EndpointMetrics?,
        serverName: String,
        logger: Logger,
        accessLog: AccessLog? = nil,
        workers: ReadWorkers = ReadWorkers(),
        screen: WriteScreen? = nil,
        problem: @escaping @Sendable (any Error) -> Problem?
    ) {
        (self.reads, self.metrics, self.serverName, self.logger, self.problem) = (reads, metrics, serverName, logger, problem)
        (self.accessLog, self.workers) = (accessLog, workers)
        self.screen = screen.flatMap { $0.routes.isEmpty ? nil : $0 }
    }
}

/// A response's status line and header fields, written as bytes: the writer of the byte lane's reads and their
/// problems, and of the raw problems written in front of the HTTP parser (the request deadline's 408, the
/// connection cap's 503; `HTTPGuard`'s answers to parser errors go through NIO's encoder) — with the fields in the
/// order the router's path writes them (Content-Type, then Content-Length and X-Request-Id, the problem's in the
/// order of `Problem.response`, Date, Server), so that the two paths' answers are byte-identical (the identity
/// tests compare them).
struct ResponseHead {
    let status: HTTPResponse.Status
    let contentType: String?
    /// A read's further fields, after Content-Type.
    var fields: [HTTPField] = []
    let body: [UInt8]
    let requestID: String
    /// A problem+json answer, whose fields the error middleware orders differently.
    let isProblem: Bool
    var retryAfter: Int? = nil
    let date: String
    let server: String

    init(_ read: ReadAnswer, requestID: String, server: String) {
        self.status = read.status
        self.contentType = read.contentType
        self.fields = read.fields
        self.body = read.body
        self.requestID = requestID
        self.isProblem = false
        self.date = HTTPDate.now()
        self.server = server
    }

    init(problem: Problem, body: [UInt8], requestID: String, server: String) {
        self.status = problem.status
        self.contentType = "application/problem+json"
        self.body = body
        self.requestID = requestID
        self.isProblem = true
        self.retryAfter = problem.retryAfter
        self.date = HTTPDate.now()
        self.server = server
    }

    /// The whole HTTP/1.1 response (the body left out for HEAD); a `Connection: close` answer ends its fields with
    /// `connection: close`, as `HTTPGuard` adds it.
    ///
    /// Written in one pass into memory reserved once: NIO's `write*` calls check capacity, uniqueness and exclusive
    /// access each, which for a dozen pieces cost more than the copies (issue 17, `poi bench wire`).
    func write(to buffer: inout ByteBuffer, includeBody: Bool, close: Bool) {
        let reason = status == .ok ? "OK" : status.reasonPhrase
        let bound =
            200 + reason.utf8.count + (contentType?.utf8.count ?? 0) + requestID.utf8.count + date.utf8.count + server.utf8.count
            + fields.reduce(0) { $0 + 4 + $1.name.rawName.utf8.count + $1.value.utf8.count } + (includeBody ? body.count : 0)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bound) { memory in
            var out = RawOutput(base: memory.baseAddress!.assumingMemoryBound(to: UInt8.self))
            out.put("HTTP/1.1 ")
            out.put(status.code)
            out.put(" ")
            out.put(text: reason)
            if let contentType { out.field("Content-Type", contentType) }
            for field in fields { out.field(named: field.name.rawName, field.value) }
            if isProblem {
                out.field("X-Request-Id", requestID)
                if status == .unauthorized { out.field("WWW-Authenticate", "Bearer") }
                if let retryAfter { out.field("Retry-After", String(retryAfter)) }
                out.field("Content-Length", String(body.count))
            } else {
                // None for a status without content, as Hummingbird leaves it out.
                if ReadAnswer.admitsContent(status) { out.field("Content-Length", String(body.count)) }
                out.field("X-Request-Id", requestID)
            }
            out.field("Date", date)
            out.field("Server", server)
            if close { out.field("connection", "close") }
            out.put("\r\n\r\n")
            if includeBody { body.withUnsafeBufferPointer { out.put($0) } }
            assert(out.count <= bound)
            return out.count
        }
    }
}

/// Bytes written one after another from `base`, whose room the caller reserved.
private struct RawOutput {
    let base: UnsafeMutablePointer<UInt8>
    var count = 0

    mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress, !bytes.isEmpty else { return }
        (base + count).update(from: start, count: bytes.count)
        count += bytes.count
    }

    mutating func put(_ text: StaticString) {
        put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func put(text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ put($0) }) == nil { put(Array(text.utf8)) }
    }

    mutating func put(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { put($0) }
    }

    /// A header field on a line of its own: CRLF, name, colon, value.
    mutating func field(_ name: StaticString, _ value: String) {
        put("\r\n")
        put(name)
        put(": ")
        put(text: value)
    }

    /// The same, with a name known only when answering (a read's own fields).
    mutating func field(named name: String, _ value: String) {
        put("\r\n")
        put(text: name)
        put(": ")
        put(text: value)
    }

    /// A non-negative integer's decimal digits.
    mutating func put(_ value: Int) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            let start = DecimalDigits.write(UInt64(value), endingAt: digits.count, in: digits)
            put(UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }
}

extension FastLane {
    /// The answer to a GET or HEAD of `path` with `query` (as they came), whose path `route` matched.
    /// `requestID` is the request's `X-Request-Id`, used when at most 64 characters long, else one is made.
    /// `log` is what the request log needs beside the answer: the method and the client's address.
    func respond(
        _ entry: ReadRoutes.Entry,
        path: Substring,
        request: ReadRequest,
        requestID: String?,
        log: (isHead: Bool, client: String?) = (false, nil)
    ) -> ResponseHead {
        let start = DispatchTime.now().uptimeNanoseconds
        let wallClock = accessLog == nil ? 0 : AccessLog.now()
        let requestID = RequestID.of(requestID)
        let answer: ResponseHead
        do {
            answer = ResponseHead(try entry.handler(request), requestID: requestID, server: serverName)
        } catch {
            let problem: Problem
            if let known = self.problem(error) {
                problem = known
                if problem.status == .internalServerError {
                    logger.error("storage failure", metadata: ["request": "\(requestID)", "error": "\(error)"])
                }
            } else {
                logger.error("unexpected error", metadata: ["request": "\(requestID)", "path": "\(path)", "error": "\(error)"])
                problem = Problem(.internalServerError, "the request could not be completed")
            }
            answer = ResponseHead(problem: problem, body: problem.json(requestID: requestID), requestID: requestID, server: serverName)
        }
        account(answer, route: entry.pattern, method: log.isHead ? .head : .get, caller: nil, client: log.client, since: (start, wallClock))
        return answer
    }

    /// Counts an answer of the lane in the request metrics (a HEAD under GET) and writes it to the request log, as the
    /// router's middleware do for theirs. `since`: when the request was taken, by the monotonic and the wall clock.
    func account(
        _ answer: ResponseHead,
        route: String,
        method: HTTPRequest.Method,
        caller: AccessLog.Caller?,
        client: String?,
        since start: (monotonic: UInt64, wall: Int64)
    ) {
        metrics?.record(route: route, method: method == .head ? .get : method, status: answer.status, since: start.monotonic)
        accessLog?.record(
            AccessLog.Entry(
                time: start.wall,
                requestID: answer.requestID,
                method: method,
                route: route,
                status: answer.status.code,
                bytes: method == .head ? 0 : answer.body.count,
                durationNanoseconds: DispatchTime.now().uptimeNanoseconds - start.monotonic,
                caller: caller,
                client: client
            )
        )
    }
}

/// The `Date` header's value (RFC 9110 §5.6.7), made once a second.
enum HTTPDate {
    private static let cache = Mutex<(second: Int, text: String)>((0, ""))
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func now() -> String {
        var now = time(nil)
        let second = Int(now)
        return cache.withLock { cached in
            if cached.second == second { return cached.text }
            var parts = tm()
            gmtime_r(&now, &parts)
            func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
            let text =
                "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(1900 + parts.tm_year) "
                + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
            cached = (second, text)
            return text
        }
    }
}

extension FastLane {
    public enum Outcome {
        /// The request at the start of the input was answered (and read from it); `close`: it asked for
        /// `Connection: close`.
        case answered(close: Bool)
        /// The request at the start of the input was a screened write, refused (401, 429) and answered.
        case refused(close: Bool)
        /// The request at the start of the input was read from it and is heavy: its answer is for the read workers.
        case heavy(TakenRead)
        /// The request at the start of the input is a screened write let through: its first `length` bytes are the
        /// router's, alone; the lane goes on after its answer.
        case forward(length: Int)
        /// The input starts a request the lane could take, not yet whole.
        case incomplete
        /// For the HTTP parser behind: another method, route or form (the input is left as it was).
        case other
    }

    /// Answers the request at the start of `input` into `buffer` when the lane takes it: the byte lane's work for
    /// one request, from its bytes to the response's bytes.
    /// `client` is the peer's address, for the request log.
    /// `maximumBodySize` bounds the bodies of screened writes (a larger one is the parser's, which answers 413).
    public func answer(
        _ input: inout ByteBuffer,
        maximumHeadSize: Int,
        maximumBodySize: Int = 0,
        client: String? = nil,
        into buffer: inout ByteBuffer
    ) -> Outcome {
        let parsed = input.withUnsafeReadableBytes {
            FastRequest.parse($0, maximumHeadSize: maximumHeadSize, writes: screen != nil, maximumBodySize: maximumBodySize)
        }
        switch parsed {
        case .request(let request, let length) where request.method.isWrite:
            let path = ReadRequest.split(target: request.target[...]).path
            guard let screen, let pattern = screen.routes.match(request.method.http, path) else { return .other }
            let start = DispatchTime.now().uptimeNanoseconds
            let write = WriteScreen.Request(method: request.method.http, pattern: pattern, authorization: request.authorization, client: client)
            guard let refusal = screen.refusal(write) else { return .forward(length: length) }
            let wallClock = accessLog == nil ? 0 : AccessLog.now()
            input.moveReaderIndex(forwardBy: length)
            let requestID = RequestID.of(request.requestID)
            let problem = refusal.problem
            let answer = ResponseHead(problem: problem, body: problem.json(requestID: requestID), requestID: requestID, server: serverName)
            answer.write(to: &buffer, includeBody: true, close: request.close)
            account(answer, route: pattern, method: write.method, caller: refusal.caller, client: client, since: (start, wallClock))
            return .refused(close: request.close)
        case .request(let request, let length):
            let (path, query) = ReadRequest.split(target: request.target[...])
            guard let route = reads.match(path) else { return .other }
            input.moveReaderIndex(forwardBy: length)
            let read = TakenRead(route: route, request: request, path: path, query: query, client: client)
            if route.entry.cost.isHeavy(target: request.target) { return .heavy(read) }
            respond(read, into: &buffer)
            return .answered(close: request.close)
        case .incomplete:
            return .incomplete
        case .other:
            return .other
        }
    }
}

extension FastLane {
    /// A read request the byte lane took, with the route its path matched: all that its answer needs, made on the
    /// event loop or, for a heavy read, on a worker.
    public struct TakenRead: Sendable {
        let route: (entry: ReadRoutes.Entry, parameters: [Substring])
        let request: FastRequest
        /// The request target's path and query, split once.
        let path: Substring
        let query: Substring?
        /// The peer's address, for the request log.
        let client: String?

        var close: Bool { request.close }
    }

    /// Writes the whole response to `read` into `buffer`.
    public func respond(_ read: TakenRead, into buffer: inout ByteBuffer) {
        let request = ReadRequest(
            query: read.query,
            pathParameters: read.route.parameters,
            acceptEncoding: read.request.acceptEncoding,
            ifNoneMatch: read.request.ifNoneMatch
        )
        let answer = respond(
            read.route.entry,
            path: read.path,
            request: request,
            requestID: read.request.requestID,
            log: (read.request.isHead, read.client)
        )
        answer.write(to: &buffer, includeBody: !read.request.isHead, close: read.request.close)
    }
}
