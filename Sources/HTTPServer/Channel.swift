import HTTPTypes
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOSSL
import Synchronization

/// Hummingbird's HTTP/1 child channel with the limits a server facing the open internet needs (docs/ARCHITECTURE.md, "The HTTP contract"):
///
/// - a request must arrive whole — head and body — within `requestTimeout` of its first byte, else 408 and close
///   (slowloris, a `Content-Length` that never arrives); a new connection that sends nothing is closed after it;
/// - an idle keep-alive connection is closed after `idleTimeout` (Hummingbird's own connection-state handler);
/// - HTTP/1.0 without `Connection: keep-alive` is closed after its answer, which says `Connection: close`;
/// - a declared body over the size limit is answered 413 before it is read;
/// - every error of the HTTP parser (bad chunking, a head over the limit, garbage) is a 4xx problem+json and the
///   connection is closed — never a 500, never a bare status;
/// - at most `maximumConnections` at once: one more is answered 503 problem+json and closed, so that a socket
///   flood cannot exhaust the process's descriptors and starve `/health`.
///
/// The pipeline is Hummingbird's (`HTTP1Channel.setup`) with handlers added: with the fast lane on, the byte lane
/// (`RawFastLaneHandler`) first, which answers plain reads before any parsing and hands everything else on;
/// `RequestClock` in front of the HTTP decoder, which sees the first byte of each request; `HTTPGuard` right after
/// it, which sees the HTTP/1 head (with its version) and the parser's errors; our `ConnectionIdleHandler` in place
/// of Hummingbird's connection-state handler (the same idle and shutdown rules, counting the byte lane's answers as
/// activity). All run on the channel's event loop and share one `ConnectionTimers`.
///
/// A request the byte lane passed on is answered by the application's router, as are the later requests of its
/// connection. (A second lane for them, on the parsed response parts, was measured and removed: on requests passed
/// on it answered 23 000 requests/s where the router alone answers 31 000 — RESULTS.md, issue 35.)
public struct GuardedHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    public typealias Value = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    public let responder: HTTPChannelHandler.Responder
    let limits: ConnectionLimits
    let connections: ConnectionCounter
    /// The fast lane for read routes, or nil to send every request through the router.
    let lane: FastLane?
    /// HTTPS: TLS is the first handler, and everything after it sees plain bytes (the byte lane included).
    let tls: NIOSSLContext?
    /// The path whose POST body is streamed to disk (a live import): a larger size limit and a deadline in
    /// proportion to its declared length.
    let streamedBodyPath: String?

    public init(
        responder: @escaping HTTPChannelHandler.Responder,
        limits: ConnectionLimits,
        connections: ConnectionCounter,
        lane: FastLane?,
        tls: NIOSSLContext?,
        streamedBodyPath: String?
    ) {
        self.responder = responder
        self.limits = limits
        self.connections = connections
        self.lane = lane
        self.tls = tls
        self.streamedBodyPath = streamedBodyPath
    }

    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let admitted = connections.open()
            channel.closeFuture.whenComplete { _ in connections.close() }
            let pipeline = channel.pipeline.syncOperations
            if !admitted {
                try pipeline.addHandler(RefuseConnection(maximum: limits.maximumConnections))
                return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
            }
            let timers = ConnectionTimers(limits: limits)
            if let tls { try pipeline.addHandler(NIOSSLServerHandler(context: tls)) }
            if let lane { try pipeline.addHandler(RawFastLaneHandler(lane: lane, timers: timers)) }
            try pipeline.addHandler(RequestClock(timers: timers))
            var decoderLimits = NIOHTTPDecoderLimitConfiguration()
            decoderLimits.maxHeaderFieldSize = limits.maximumHeadSize
            decoderLimits.maxHeaderListSize = limits.maximumHeadSize
            decoderLimits.maxHeaderFieldCount = 200
            try pipeline.configureHTTPServerPipeline(
                withPipeliningAssistance: false,
                withErrorHandling: false,
                withOutboundHeaderValidation: false,
                withEncoderConfiguration: .init(),
                withDecoderLimitConfiguration: decoderLimits
            )
            try pipeline.addHandler(HTTPGuard(timers: timers, limits: limits, streamedBodyPath: streamedBodyPath))
            try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: tls != nil))
            try pipeline.addHandler(ConnectionIdleHandler(timers: timers, idleTimeout: .init(limits.idleTimeout)))
            return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
        }
    }

    public func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }
}

/// The connection limits of `poi serve` (`--request-timeout`, `--idle-timeout`, `--max-connections`).
public struct ConnectionLimits: Sendable {
    /// From a request's first byte to the end of its body.
    public var requestTimeout: Duration
    /// Between requests on a keep-alive connection.
    public var idleTimeout: Duration
    public var maximumConnections: Int
    /// Largest request head: the HTTP parser applies it to the request line and to the headers (a polygon of about
    /// 2 500 vertices at full precision fits in a GET's query string).
    public var maximumHeadSize: Int
    public var maximumBodySize: Int
    /// Largest body of a live import (`POST /v1/import`), which is streamed to disk rather than held.
    public var maximumImportSize: Int
    /// An import body must arrive at this rate at least: its deadline is the request timeout plus its declared
    /// length at this rate (so a 100 MB import may take minutes, and a trickle is still cut off).
    public var minimumImportRate: Int

    public init(
        requestTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(60),
        maximumConnections: Int = 4_096,
        maximumHeadSize: Int = 64 * 1_024,
        maximumBodySize: Int = 1 << 20,
        maximumImportSize: Int = 1 << 30,
        minimumImportRate: Int = 256 * 1_024
    ) {
        self.maximumImportSize = maximumImportSize
        self.minimumImportRate = minimumImportRate
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
        self.maximumConnections = maximumConnections
        self.maximumHeadSize = maximumHeadSize
        self.maximumBodySize = maximumBodySize
    }
}

/// Open connections, across event loops.
public final class ConnectionCounter: Sendable {
    private let count = Atomic<Int>(0)
    let maximum: Int

    public init(maximum: Int) { self.maximum = maximum }

    /// Counts the connection in; false when it is over the maximum (it is still counted until it closes).
    func open() -> Bool { count.wrappingAdd(1, ordering: .relaxed).newValue <= maximum }
    func close() { count.wrappingSubtract(1, ordering: .relaxed) }
    var current: Int { count.load(ordering: .relaxed) }
}

/// Per-connection state shared by `RequestClock` and `HTTPGuard` (both on the channel's event loop).
final class ConnectionTimers {
    let limits: ConnectionLimits
    /// A request has started arriving (a byte since the previous request's end) and has not been read whole.
    var readingRequest = false
    /// The answer to the current request has begun; a timeout then only closes.
    var answering = false
    var deadline: Scheduled<Void>?
    /// An error answer has been written: what else arrives is read and dropped until the peer closes (or 2 s pass),
    /// so that the peer reads the answer instead of a connection reset (a "lingering close", as nginx does).
    var lingering = false

    init(limits: ConnectionLimits) { self.limits = limits }

    /// After an error answer written with `write`: flush, close our side, drop further input, close fully soon.
    func linger(_ context: ChannelHandlerContext, flushed: EventLoopFuture<Void>) {
        lingering = true
        deadline?.cancel()
        deadline = nil
        flushed.whenComplete { _ in
            context.close(mode: .output, promise: nil)
            context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: .seconds(2)) { context.close(promise: nil) }
        }
    }

    func startRequest(_ context: ChannelHandlerContext, timedOut: @escaping () -> Void) {
        guard !readingRequest else { return }
        readingRequest = true
        schedule(context, timedOut: timedOut)
    }

    /// What to do when the current request's deadline passes.
    private var timedOut: (() -> Void)?

    func schedule(_ context: ChannelHandlerContext, timedOut: @escaping () -> Void) {
        deadline?.cancel()
        self.timedOut = timedOut
        deadline = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: .init(limits.requestTimeout), timedOut)
    }

    /// Moves the current request's deadline to the request timeout plus `extra` from now (a large import body).
    func extend(_ context: ChannelHandlerContext, by extra: Duration) {
        guard readingRequest, let timedOut else { return }
        deadline?.cancel()
        deadline = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: .init(limits.requestTimeout + extra), timedOut)
    }

    func requestRead() {
        readingRequest = false
        deadline?.cancel()
        deadline = nil
        // The closure holds a handler's context, and through it the pipeline that holds these timers: kept, it
        // would keep every closed connection alive (ConnectionLifetimeTests).
        timedOut = nil
    }

    /// When the current request's deadline passes (`context` is that of a handler in front of the HTTP decoder):
    /// 408 problem+json and a lingering close, or only the close once an answer has begun.
    func requestTimedOut(_ context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        if answering {
            context.close(promise: nil)
        } else {
            let problem = Problem(.requestTimeout, "the request did not arrive in full within \(Self.seconds(limits.requestTimeout)) s")
            linger(context, flushed: context.writeAndFlush(NIOAny(IOData.byteBuffer(problem.rawResponse()))))
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return attoseconds == 0 ? String(seconds) : String(Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// The last time the connection read something or finished an answer, for the idle timeout.
    private(set) var lastActivity = NIODeadline.uptimeNanoseconds(0)

    func touch() { lastActivity = .now() }
}

/// In front of the HTTP decoder: starts a request's deadline at its first byte, and answers 408 when it passes.
final class RequestClock: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private let timers: ConnectionTimers

    init(timers: ConnectionTimers) { self.timers = timers }

    func channelActive(context: ChannelHandlerContext) {
        // A new connection has the request timeout to send its first byte.
        timers.schedule(context) { context.close(promise: nil) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !timers.lingering else { return }
        timers.startRequest(context) { [timers] in timers.requestTimedOut(context) }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timers.requestRead()
        context.fireChannelInactive()
    }
}

/// Right after the HTTP decoder: parser errors and oversized bodies as problem+json, HTTP/1.0 closes after its answer.
final class HTTPGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let timers: ConnectionTimers
    private let limits: ConnectionLimits
    private let streamedBodyPath: String?
    /// Answers still to write, oldest first: whether each closes the connection.
    private var closeAfter: [Bool] = []
    /// Set once this handler has answered and is closing: nothing more is read or written.
    private var refused = false

    init(timers: ConnectionTimers, limits: ConnectionLimits, streamedBodyPath: String?) {
        self.timers = timers
        self.limits = limits
        self.streamedBodyPath = streamedBodyPath
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        let part = unwrapInboundIn(data)
        switch part {
        case .head(let head):
            let length = head.headers.first(name: "content-length").flatMap { Int($0) }
            if head.method == .POST, let streamedBodyPath, ReadRequest.split(target: head.uri[...]).path == streamedBodyPath {
                // A live import streams its body to disk: a larger limit, a declared length, and time in proportion.
                guard let length else {
                    answer(context, Problem(.lengthRequired, "an import needs a Content-Length header (send the body whole, not chunked)"))
                    return
                }
                guard length <= limits.maximumImportSize else {
                    answer(context, Problem(.contentTooLarge, "the import body is larger than \(limits.maximumImportSize / (1 << 20)) MiB"))
                    return
                }
                timers.extend(context, by: .milliseconds(Int64(length) * 1_000 / Int64(max(1, limits.minimumImportRate))))
            } else if let length, length > limits.maximumBodySize {
                answer(context, Problem(.contentTooLarge, "the request body is larger than \(limits.maximumBodySize / 1_024) KiB"))
                return
            }
            closeAfter.append(!head.isKeepAlive)
        case .body:
            break
        case .end:
            timers.requestRead()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !refused else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(var head):
            timers.answering = true
            if closeAfter.first == true {
                head.headers.replaceOrAdd(name: "connection", value: "close")
                context.write(wrapOutboundOut(.head(head)), promise: promise)
                return
            }
        case .body:
            break
        case .end:
            timers.answering = false
            let close = closeAfter.isEmpty ? false : closeAfter.removeFirst()
            if close {
                context.writeAndFlush(data, promise: promise)
                context.close(promise: nil)
                return
            }
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !refused else { return }
        switch error {
        case .headerOverflow:
            answer(
                context,
                Problem(
                    .init(code: 431, reasonPhrase: "Request Header Fields Too Large"),
                    "the request line or headers are longer than \(limits.maximumHeadSize / 1_024) KiB"
                )
            )
        case .invalidEOFState, .closedConnection:
            answer(context, Problem(.badRequest, "the connection closed before the request was complete"))
        case .invalidChunkSize:
            answer(context, Problem(.badRequest, "malformed request: invalid chunk size in a chunked body"))
        case .invalidContentLength, .unexpectedContentLength:
            answer(context, Problem(.badRequest, "malformed request: invalid Content-Length"))
        default:
            answer(context, Problem(.badRequest, "malformed request: \(error)"))
        }
    }

    /// Answers with `problem` (unless an answer has begun, which cannot be taken back) and closes the connection.
    private func answer(_ context: ChannelHandlerContext, _ problem: Problem) {
        refused = true
        timers.requestRead()
        guard context.channel.isActive else { return }
        if timers.answering {
            context.close(promise: nil)
            return
        }
        let requestID = RequestID.next()
        let body = problem.json(requestID: requestID)
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/problem+json")
        headers.add(name: "content-length", value: String(body.count))
        headers.add(name: "connection", value: "close")
        headers.add(name: RequestID.header.rawName, value: requestID)
        let head = HTTPResponseHead(
            version: .http1_1,
            status: .init(statusCode: problem.status.code, reasonPhrase: problem.status.reasonPhrase),
            headers: headers
        )
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: body)))), promise: nil)
        timers.linger(context, flushed: context.writeAndFlush(wrapOutboundOut(.end(nil))))
    }
}

/// The only handler of a connection over the maximum: answers 503 and closes.
final class RefuseConnection: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    let maximum: Int

    init(maximum: Int) { self.maximum = maximum }

    /// Answers at once and closes at once: a refused connection must give its descriptor back immediately, or a
    /// flood would hold them in lingering closes.
    func channelActive(context: ChannelHandlerContext) {
        let problem = Problem(.serviceUnavailable, "the server is at its limit of \(maximum) open connections; retry shortly", retryAfter: 1)
        context.writeAndFlush(NIOAny(problem.rawResponse())).whenComplete { _ in
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
