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
            if limits.refusedWritePause > .zero { try pipeline.addHandler(RefusalPause(pause: .init(limits.refusedWritePause))) }
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
    /// How long a connection is not read after the byte lane refused one of its writes (401, 429): a client just told
    /// no, or told to wait, has nothing to send at once, and what it floods with waits in its socket instead of
    /// taking the event loop from the readers beside it. Zero reads on at once.
    public var refusedWritePause: Duration

    public init(
        requestTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(60),
        maximumConnections: Int = 4_096,
        maximumHeadSize: Int = 64 * 1_024,
        maximumBodySize: Int = 1 << 20,
        maximumImportSize: Int = 1 << 30,
        minimumImportRate: Int = 256 * 1_024,
        refusedWritePause: Duration = .milliseconds(10)
    ) {
        self.refusedWritePause = refusedWritePause
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
