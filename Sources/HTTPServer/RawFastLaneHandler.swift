import CScheduling
import Logging
import NIOCore
import NIOHTTPTypes
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The fast lane in front of the HTTP parser (issue 17): a connection's requests are read here as bytes, and each
/// plain `GET`/`HEAD` of a read route — the request line, a few headers, no body — is answered at once with one
/// buffer: no HTTP parser callbacks, no request or response head objects, no trip through the handlers behind.
///
/// The lane is deliberately narrow. The first request it does not take whole — another method or route, HTTP/1.0,
/// a body, `Expect`, `Upgrade`, an unusual `Connection`, a duplicated `X-Request-Id`, any byte outside printable
/// ASCII, a head near the size limit — hands that request and every later byte of the connection to the pipeline
/// behind (`RequestClock`, NIO's parser, `HTTPGuard`, the response-part lane, Hummingbird), for good: whatever the
/// parser would reject, limit or treat specially keeps exactly its behaviour there, and answers stay in order
/// because this lane's are written before the bytes are passed on. What it takes it answers as the router would,
/// byte for byte (`FastAnswer`), including `Connection: close`.
///
/// It shares the connection's `ConnectionTimers`: a request that arrives in pieces gets the request deadline (and
/// its 408) from its first byte, as in `RequestClock`, and each read counts as activity for the idle timeout
/// (`ConnectionIdleHandler`). A request read whole in one read schedules no timer at all.
///
/// Answers are written at once but flushed together at the end of the event loop's tick (`TickFlush`), after every
/// connection the loop found readable has been read and answered.
///
/// A heavy read (`ReadCost`) is answered on the read workers instead: what the connection sends meanwhile waits (in
/// memory up to a bound, then in the socket) until its answer is written on the loop, then is answered in turn, so
/// pipelined answers keep their order.
final class RawFastLaneHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = IOData

    private let lane: FastLane
    private let timers: ConnectionTimers
    /// The lane has handed the connection to the pipeline behind.
    private var passingOn = false
    /// An answer with `Connection: close` was written: the rest is dropped.
    private var closing = false
    /// Input not answered yet: the start of a request not yet read whole, or what arrived while a heavy read was
    /// being answered on the read workers.
    private var partial: ByteBuffer?
    private var forwarded = false
    /// A heavy read of this connection is being answered on the read workers; later requests wait for it.
    private var awaitingWorker = false
    /// Reading stopped (`autoRead` off) because more than `waitingLimit` bytes arrived while a heavy read was answered:
    /// what a client pipelines behind it is held in memory only up to that, the rest waits in the socket.
    private var readsPaused = false
    /// Shutdown and the peer's end of input, held back while a heavy read is answered so that its answer is not
    /// cut off; delivered after it.
    private var heldEvents: [Any] = []

    /// The connection's event loop's flush batch, found when the handler is added.
    private var tickFlush: TickFlush?
    /// The peer's address for the request log, written once per connection (nil without a log).
    private var client: String?

    init(lane: FastLane, timers: ConnectionTimers) {
        self.lane = lane
        self.timers = timers
    }

    func handlerAdded(context: ChannelHandlerContext) {
        tickFlush = TickFlush.of(context.eventLoop)
        if lane.accessLog != nil { client = context.channel.remoteAddress?.ipAddress }
        ReadWorkers.yieldToWorkers(context.eventLoop, logger: lane.logger)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if passingOn {
            forwarded = true
            context.fireChannelRead(data)
            return
        }
        guard !closing, !timers.lingering else { return }
        var input = unwrapInboundIn(data)
        if var earlier = partial {
            partial = nil
            earlier.writeBuffer(&input)
            input = earlier
        }
        timers.touch()
        if awaitingWorker {
            // Answered in order once the heavy read's answer is written.
            partial = input
            if input.readableBytes > waitingLimit && !readsPaused {
                readsPaused = true
                try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
            }
            return
        }
        answer(&input, context: context)
    }

    /// How many bytes may wait behind a heavy read before reading stops: a whole head of the largest size.
    private var waitingLimit: Int { max(timers.limits.maximumHeadSize, 65_536) }

    /// Answers the requests at the start of `input` until it is used up, a request is incomplete, one goes to the
    /// pipeline behind, or one is heavy (then the rest waits in `partial`).
    private func answer(_ input: inout ByteBuffer, context: ChannelHandlerContext) {
        var wrote = false
        defer { if wrote { tickFlush!.add(context) } }
        while input.readableBytes > 0 {
            var buffer = context.channel.allocator.buffer(capacity: 0)
            switch lane.answer(&input, maximumHeadSize: timers.limits.maximumHeadSize, client: client, into: &buffer) {
            case .answered(close: true):
                closing = true
                timers.requestRead()
                context.writeAndFlush(wrapOutboundOut(.byteBuffer(buffer))).whenComplete { _ in context.close(promise: nil) }
                return
            case .answered(close: false):
                context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: nil)
                wrote = true
            case .heavy(let read):
                timers.requestRead()
                if input.readableBytes > 0 { partial = input }
                answerOnWorker(read, context: context)
                return
            case .incomplete:
                partial = input
                timers.startRequest(context) { [timers] in timers.requestTimedOut(context) }
                return
            case .other:
                passOn(input, context: context)
                return
            }
        }
        timers.requestRead()
    }

    /// Has the read workers make `read`'s answer, then writes it on the event loop and goes on with the input that
    /// waited. Answers that were written before it are flushed first, so that the client is not kept waiting for them.
    private func answerOnWorker(_ read: FastLane.TakenRead, context: ChannelHandlerContext) {
        awaitingWorker = true
        let lane = self.lane
        ReadWorkers.pool.runIfActive(eventLoop: context.eventLoop) {
            var buffer = ByteBuffer()
            lane.respond(read, into: &buffer)
            return buffer
        }.assumeIsolatedUnsafeUnchecked().whenComplete { [self] result in
            awaitingWorker = false
            guard case .success(let buffer) = result else {
                // The workers are shut down: the process is stopping.
                context.close(promise: nil)
                return
            }
            guard context.channel.isActive else { return }
            if read.close {
                closing = true
                partial = nil
                context.writeAndFlush(wrapOutboundOut(.byteBuffer(buffer))).whenComplete { _ in context.close(promise: nil) }
                return
            }
            timers.touch()
            context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: nil)
            tickFlush!.add(context)
            if var waiting = partial {
                partial = nil
                answer(&waiting, context: context)
            }
            if forwarded {
                // What waited went to the pipeline behind, outside any read of the channel: complete it as a read,
                // which is when the handlers behind deliver what they were given.
                forwarded = false
                context.fireChannelReadComplete()
            }
            guard !awaitingWorker else { return }
            if readsPaused {
                readsPaused = false
                try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: true)
            }
            if !heldEvents.isEmpty {
                // Written out before the handlers behind hear of the events: at shutdown they close the connection at
                // once, which would drop answers still waiting for the tick's flush.
                context.flush()
                let events = heldEvents
                heldEvents = []
                for event in events { userInboundEventTriggered(context: context, event: event) }
            }
            if !passingOn && !closing { context.read() }
        }
    }

    /// Hands `input` and the rest of the connection to the pipeline behind. A deadline already running for a
    /// request read in pieces keeps running from its first byte.
    private func passOn(_ input: ByteBuffer, context: ChannelHandlerContext) {
        passingOn = true
        forwarded = true
        context.fireChannelRead(wrapInboundOut(input))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if forwarded || passingOn {
            forwarded = false
            context.fireChannelReadComplete()
            return
        }
        // A read answered here gave the handlers behind nothing, so they have no read to complete (the only one of
        // them that acts on it, NIOAsyncChannelHandler, delivers the reads it was given since the last completion:
        // none): the event stops here instead of crossing the eight handlers behind — 3 % of a nearby request's
        // CPU (perf, issue 17). The next read is asked for on their behalf — unless a heavy read is being answered,
        // whose completion asks for it.
        if !closing && !awaitingWorker { context.read() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        var inputClosed = false
        if case ChannelEvent.inputClosed = event { inputClosed = true }
        // While a heavy read is answered, the handlers behind — which close a connection whose input ended, or with
        // no request in progress at shutdown — would cut its answer off: they hear of either once it is written.
        if awaitingWorker && (inputClosed || event is ChannelShouldQuiesceEvent) {
            heldEvents.append(event)
            return
        }
        // The peer closed its side in the middle of a request: the parser behind answers that as it always does.
        if inputClosed, !passingOn, let partial {
            self.partial = nil
            passOn(partial, context: context)
        }
        context.fireUserInboundEventTriggered(event)
    }
}

/// The threads that answer heavy reads (`ReadCost.heavy`) for the byte lane: one per core, started on first use and
/// kept for the life of the process, as NIO's own singletons are.
enum ReadWorkers {
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: System.coreCount)
        pool.start()
        return pool
    }()

    /// The event loops already under the batch policy.
    private static let yielding = Mutex<Set<ObjectIdentifier>>([])

    /// Puts the thread of `loop` (the calling thread: a handler's loop) under Linux's batch policy, once per loop:
    /// its wake-ups — a request read, a worker's answer to write — no longer preempt a read worker in the middle of
    /// a search; the loop runs when the worker's time slice ends or it waits for work. It keeps its share of the CPU.
    ///
    /// Measured (RESULTS.md, issue 36): on 2 cores the loop woke about once per search request, and each wake-up
    /// preempted a worker (0.56 involuntary switches per request on each). Under the batch policy the search mix
    /// served 13 % more requests per second with a lower p99; nearby alone, and nearby and search at once, did not
    /// change past the noise.
    ///
    /// A thread inherits the policy of the thread that starts it: the workers are started first, under the normal
    /// policy (a worker under the batch policy would not preempt the loop either, and the loop would wait for it).
    static func yieldToWorkers(_ loop: any EventLoop, logger: Logger) {
        guard loop.inEventLoop, yielding.withLock({ $0.insert(ObjectIdentifier(loop)).inserted }) else { return }
        _ = pool
        let error = poi_schedule_calling_thread_as_batch()
        if error != 0 {
            logger.warning("the event loop keeps the normal scheduling policy (sched_setscheduler: \(String(cString: strerror(error))))")
        }
    }
}

extension FastLane {
    public enum Outcome {
        /// The request at the start of the input was answered (and read from it); `close`: it asked for
        /// `Connection: close`.
        case answered(close: Bool)
        /// The request at the start of the input was read from it and is heavy: its answer is for the read workers.
        case heavy(TakenRead)
        /// The input starts a request the lane could take, not yet whole.
        case incomplete
        /// For the HTTP parser behind: another method, route or form (the input is left as it was).
        case other
    }

    /// Answers the request at the start of `input` into `buffer` when the lane takes it: the byte lane's work for
    /// one request, from its bytes to the response's bytes.
    /// `client` is the peer's address, for the request log.
    public func answer(_ input: inout ByteBuffer, maximumHeadSize: Int, client: String? = nil, into buffer: inout ByteBuffer) -> Outcome {
        switch input.withUnsafeReadableBytes({ FastRequest.parse($0, maximumHeadSize: maximumHeadSize) }) {
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
        let route: (entry: ReadRoutes.Entry, parameter: Substring?)
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
        let answer = respond(
            read.route,
            path: read.path,
            query: read.query,
            requestID: read.request.requestID,
            log: (read.request.isHead, read.client)
        )
        answer.write(to: &buffer, includeBody: !read.request.isHead, close: read.request.close)
    }
}

/// The flushes of one event loop's fast-lane answers, done together once the loop has handled every connection
/// that was readable in this tick (NIO runs tasks queued from the loop after its I/O events).
///
/// Measured (RESULTS.md, issue 17): a flush is a `write` to a loopback socket, and writing each answer as soon as
/// it is made woke the client's thread once per answer — on this 2-core guest that wake-up cost more server CPU
/// than making the answer. Flushing the tick's answers back to back wakes each waiting client thread about once
/// per tick. The syscalls are the same (one `write` per connection); an answer waits at most for the rest of the
/// tick's reads, which are each a few microseconds.
final class TickFlush: @unchecked Sendable {
    // Used only on its event loop (`add` and the queued task), hence @unchecked.
    private let eventLoop: any EventLoop
    private var pending: [ChannelHandlerContext] = []

    private init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
        pending.reserveCapacity(64)
    }

    /// Flushes `context` at the end of this tick. On the context's event loop only.
    func add(_ context: ChannelHandlerContext) {
        if pending.isEmpty { eventLoop.execute { self.flushAll() } }
        pending.append(context)
    }

    private func flushAll() {
        let contexts = pending
        pending.removeAll(keepingCapacity: true)
        for context in contexts { context.flush() }
    }

    private static let loops = Mutex<[ObjectIdentifier: TickFlush]>([:])

    /// The batch of `eventLoop`, made on first use (once per loop; connections look it up when they open).
    static func of(_ eventLoop: any EventLoop) -> TickFlush {
        loops.withLock { loops in
            if let found = loops[ObjectIdentifier(eventLoop)] { return found }
            let made = TickFlush(eventLoop: eventLoop)
            loops[ObjectIdentifier(eventLoop)] = made
            return made
        }
    }
}

/// A request the byte lane takes: `GET`/`HEAD`, origin-form target, HTTP/1.1, no body.
public struct FastRequest: Equatable, Sendable {
    var isHead: Bool
    /// The request target, path and query as they came.
    var target: String
    var requestID: String?
    /// `Connection: close`.
    var close: Bool

    enum Parsed: Equatable {
        /// A whole request of `length` bytes.
        case request(FastRequest, length: Int)
        /// The bytes so far start a request the lane could take.
        case incomplete
        /// For the HTTP parser behind.
        case other
    }

    /// Parses the request at the start of `bytes`. Anything short of the plain form above is `.other`, as is a
    /// head longer than half of `maximumHeadSize` or with more than 64 fields (the parser behind applies the
    /// limits); so is an incomplete head already that long.
    static func parse(_ bytes: UnsafeRawBufferPointer, maximumHeadSize: Int) -> Parsed {
        let limit = maximumHeadSize / 2
        let count = bytes.count
        // Method.
        let isHead: Bool
        var i: Int
        if startsWith(bytes, "GET ") {
            isHead = false
            i = 4
        } else if startsWith(bytes, "HEAD ") {
            isHead = true
            i = 5
        } else {
            return couldStart(bytes, "GET ") || couldStart(bytes, "HEAD ") ? .incomplete : .other
        }
        // Target: origin form, characters a URI may hold (RFC 3986), no fragment.
        let targetStart = i
        while i < count, bytes[i] != UInt8(ascii: " ") {
            guard isTargetByte(bytes[i]) else { return .other }
            i += 1
        }
        guard i < count else { return i > limit ? .other : .incomplete }
        guard i > targetStart, bytes[targetStart] == UInt8(ascii: "/") else { return .other }
        let targetEnd = i
        i += 1
        // Version.
        let version = "HTTP/1.1\r\n"
        let available = min(count - i, version.utf8.count)
        guard zip(version.utf8.prefix(available), UnsafeRawBufferPointer(rebasing: bytes[i..<(i + available)])).allSatisfy({ $0 == $1 }) else {
            return .other
        }
        guard available == version.utf8.count else { return .incomplete }
        i += available
        // Fields.
        var requestID: String?
        var close = false
        var sawConnection = false
        var fields = 0
        while true {
            guard i < count else { return i > limit ? .other : .incomplete }
            if bytes[i] == UInt8(ascii: "\r") {
                guard i + 1 < count else { return .incomplete }
                guard bytes[i + 1] == UInt8(ascii: "\n") else { return .other }
                i += 2
                break
            }
            fields += 1
            guard fields <= 64 else { return .other }
            let nameStart = i
            while i < count, bytes[i] != UInt8(ascii: ":") {
                guard isTokenByte(bytes[i]) else { return .other }
                i += 1
            }
            guard i < count else { return i > limit ? .other : .incomplete }
            guard i > nameStart else { return .other }
            let name = UnsafeRawBufferPointer(rebasing: bytes[nameStart..<i])
            i += 1
            var valueStart = i
            while i < count, bytes[i] != UInt8(ascii: "\r") {
                let byte = bytes[i]
                guard byte == UInt8(ascii: "\t") || (byte >= 0x20 && byte < 0x7F) else { return .other }
                i += 1
            }
            guard i + 1 < count else { return i > limit ? .other : .incomplete }
            guard bytes[i + 1] == UInt8(ascii: "\n") else { return .other }
            var valueEnd = i
            i += 2
            while valueStart < valueEnd, bytes[valueStart] == 0x20 || bytes[valueStart] == 0x09 { valueStart += 1 }
            while valueEnd > valueStart, bytes[valueEnd - 1] == 0x20 || bytes[valueEnd - 1] == 0x09 { valueEnd -= 1 }
            let value = UnsafeRawBufferPointer(rebasing: bytes[valueStart..<valueEnd])
            if equalsLowercased(name, "x-request-id") {
                guard requestID == nil else { return .other }
                requestID = String(decoding: value, as: UTF8.self)
            } else if equalsLowercased(name, "connection") {
                guard !sawConnection else { return .other }
                sawConnection = true
                if equalsLowercased(value, "close") { close = true } else if !equalsLowercased(value, "keep-alive") { return .other }
            } else if equalsLowercased(name, "content-length") || equalsLowercased(name, "transfer-encoding")
                || equalsLowercased(name, "expect") || equalsLowercased(name, "upgrade")
            {
                return .other
            }
        }
        guard i <= limit else { return .other }
        let target = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[targetStart..<targetEnd]), as: UTF8.self)
        return .request(FastRequest(isHead: isHead, target: target, requestID: requestID, close: close), length: i)
    }

    private static func startsWith(_ bytes: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        return prefix.withUTF8Buffer { expected in (0..<count).allSatisfy { bytes[$0] == expected[$0] } }
    }

    /// `bytes` is shorter than `prefix` and begins it.
    private static func couldStart(_ bytes: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        guard bytes.count < prefix.utf8CodeUnitCount else { return false }
        return prefix.withUTF8Buffer { expected in bytes.indices.allSatisfy { bytes[$0] == expected[$0] } }
    }

    /// ASCII case-insensitive comparison with a lowercase name of letters and `-`.
    private static func equalsLowercased(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in (0..<bytes.count).allSatisfy { bytes[$0] | 0x20 == expected[$0] } }
    }

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// RFC 3986 unreserved, reserved but `#`, and `%`.
    private static func isTargetByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "/"),
            UInt8(ascii: "?"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "@"), UInt8(ascii: "!"), UInt8(ascii: "$"),
            UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: "%"):
            true
        default: false
        }
    }
}

/// The idle timeout and graceful shutdown of a connection (in place of Hummingbird's `HTTPConnectionStateHandler`,
/// with the same rules), aware of the byte lane: a connection idle for `idleTimeout` — no request being read or
/// answered, nothing read — is closed; on shutdown (`ChannelShouldQuiesceEvent`) it is closed at once if no request
/// is in progress, else after the answer. Activity is `ConnectionTimers.lastActivity`, which the byte lane moves
/// on each read it answers.
final class ConnectionIdleHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let timers: ConnectionTimers
    private let idleTimeout: TimeAmount
    private var requestsInProgress = 0
    private var readingRequest = false
    private var closeAfterAnswer = false
    private var check: Scheduled<Void>?

    init(timers: ConnectionTimers, idleTimeout: TimeAmount) {
        self.timers = timers
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        timers.touch()
        schedule(context, at: timers.lastActivity + idleTimeout)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        timers.touch()
        switch unwrapInboundIn(data) {
        case .head:
            readingRequest = true
            requestsInProgress += 1
        case .body:
            break
        case .end:
            readingRequest = false
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            requestsInProgress -= 1
            if requestsInProgress == 0 {
                if closeAfterAnswer {
                    context.writeAndFlush(data, promise: promise)
                    context.close(promise: nil)
                    return
                }
                timers.touch()
                schedule(context, at: timers.lastActivity + idleTimeout)
            }
        }
        context.write(data, promise: promise)
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        guard check == nil else { return }
        check = context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(deadline: deadline) { [self] in
            check = nil
            // A request read and being answered is not idle; its answer's end schedules the next check.
            if !readingRequest && requestsInProgress > 0 { return }
            let due = timers.lastActivity + idleTimeout
            if NIODeadline.now() >= due {
                context.close(promise: nil)
            } else {
                schedule(context, at: due)
            }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if requestsInProgress > 0 { closeAfterAnswer = true } else { context.close(promise: nil) }
    }
}
