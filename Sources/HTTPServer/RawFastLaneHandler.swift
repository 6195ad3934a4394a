import Logging
import NIOCore
import NIOHTTPTypes
import NIOPosix
import Synchronization

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
///
/// A write of the screened routes (`WriteScreen`) is read whole here: refused, it is answered like a read; let
/// through, its bytes alone go to the pipeline behind, what follows waits as behind a heavy read, and the lane takes
/// the connection back once the router's answer has been written (`ConnectionTimers.pipelineAnswered`, called by
/// `ConnectionIdleHandler`) — so a client that sends writes and reads on one connection keeps the lane for its reads,
/// and a flooding writer whose writes are refused never reaches the router. After a refusal the connection is not read
/// for `ConnectionLimits.refusedWritePause`: what it sends meanwhile waits, as behind a heavy read, and is answered in
/// turn after the pause — a flood of refused writes then waits in its own sockets, and the event loop goes to the
/// readers beside it.
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
    /// A write let through by the screen is being answered by the pipeline behind; later requests wait for it.
    private var awaitingPipeline = false
    /// A write was refused on this connection and its pause (`ConnectionLimits.refusedWritePause`) is running: later
    /// requests wait for it to end.
    private var pausedAfterRefusal = false
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
        if lane.accessLog != nil || lane.screen != nil { client = context.channel.remoteAddress?.ipAddress }
        lane.workers.yieldToWorkers(context.eventLoop, logger: lane.logger)
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
        if isWaiting {
            // Answered in order once the heavy read's or the write's answer is written, or the pause after a refusal
            // has run.
            partial = input
            if input.readableBytes > waitingLimit && !readsPaused {
                readsPaused = true
                try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
            }
            return
        }
        answer(&input, context: context)
    }

    /// Whether later input waits: for a heavy read's answer, for the router's answer to a write, or for the pause after
    /// a refused write.
    private var isWaiting: Bool { awaitingWorker || awaitingPipeline || pausedAfterRefusal }

    /// How many bytes may wait behind a heavy read before reading stops: a whole head of the largest size.
    private var waitingLimit: Int { max(timers.limits.maximumHeadSize, 65_536) }

    /// Answers the requests at the start of `input` until it is used up, a request is incomplete, one goes to the
    /// pipeline behind, or one is heavy (then the rest waits in `partial`).
    private func answer(_ input: inout ByteBuffer, context: ChannelHandlerContext) {
        var wrote = false
        defer { if wrote { tickFlush!.add(context) } }
        while input.readableBytes > 0 {
            var buffer = context.channel.allocator.buffer(capacity: 0)
            let limits = timers.limits
            switch lane.answer(
                &input,
                maximumHeadSize: limits.maximumHeadSize,
                maximumBodySize: limits.maximumBodySize,
                client: client,
                into: &buffer
            ) {
            case .answered(close: true), .refused(close: true):
                closing = true
                timers.requestRead()
                context.writeAndFlush(wrapOutboundOut(.byteBuffer(buffer))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
                return
            case .answered(close: false):
                context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: nil)
                wrote = true
            case .refused(close: false):
                context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: nil)
                wrote = true
                let pause = limits.refusedWritePause
                guard pause > .zero else { continue }
                timers.requestRead()
                if input.readableBytes > 0 { partial = input }
                pauseAfterRefusal(pause, context: context)
                return
            case .heavy(let read):
                timers.requestRead()
                if input.readableBytes > 0 { partial = input }
                answerOnWorker(read, context: context)
                return
            case .forward(let length):
                forwardOne(&input, length: length, context: context)
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
        lane.workers.run(on: context.eventLoop) {
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
                context.writeAndFlush(wrapOutboundOut(.byteBuffer(buffer))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
                return
            }
            timers.touch()
            context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: nil)
            tickFlush!.add(context)
            goOn(context: context)
        }
    }

    /// Stops answering this connection for `pause`, then goes on with what waited.
    private func pauseAfterRefusal(_ pause: Duration, context: ChannelHandlerContext) {
        pausedAfterRefusal = true
        context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: TimeAmount(pause)) { [self] in
            pausedAfterRefusal = false
            guard context.channel.isActive, !passingOn, !closing else { return }
            goOn(context: context)
        }
    }

    /// After an answer that later input waited for (a heavy read's, or the router's to a write handed on) or a pause
    /// after a refusal: answers what waited, completes as a read what went on to the pipeline behind, delivers the
    /// events held back once no heavy read or pause is pending, and reads again once nothing is.
    private func goOn(context: ChannelHandlerContext) {
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
        guard !awaitingWorker && !pausedAfterRefusal else { return }
        if !heldEvents.isEmpty {
            // Written out before the handlers behind hear of the events: at shutdown they close the connection at
            // once, which would drop answers still waiting for the tick's flush.
            context.flush()
            let events = heldEvents
            heldEvents = []
            for event in events { userInboundEventTriggered(context: context, event: event) }
        }
        guard !awaitingPipeline else { return }
        if readsPaused {
            readsPaused = false
            try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: true)
        }
        if !passingOn && !closing { context.read() }
    }

    /// Hands the request of the first `length` bytes of `input` to the pipeline behind, alone; the rest waits for its
    /// answer (`pipelineAnswered`). The request's deadline, if its bytes came in pieces, is handed on with it: the
    /// parser behind has it whole and ends it at once.
    private func forwardOne(_ input: inout ByteBuffer, length: Int, context: ChannelHandlerContext) {
        let request = input.readSlice(length: length)!
        awaitingPipeline = true
        timers.requestRead()
        timers.pipelineAnswered = { [weak self] in
            // After the answer's last part was written: on the loop, once that write has returned.
            context.eventLoop.assumeIsolatedUnsafeUnchecked().execute { self?.pipelineAnswered(context: context) }
        }
        if input.readableBytes > 0 { partial = input }
        forwarded = true
        context.fireChannelRead(wrapInboundOut(request))
    }

    /// The router has answered the write handed on: what waited is answered here again.
    private func pipelineAnswered(context: ChannelHandlerContext) {
        guard awaitingPipeline else { return }
        awaitingPipeline = false
        guard context.channel.isActive, !passingOn, !closing else { return }
        goOn(context: context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        // The closure holds this handler and its context: kept, it would keep the closed connection alive.
        timers.pipelineAnswered = nil
        context.fireChannelInactive()
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
        if !closing && !isWaiting { context.read() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        var inputClosed = false
        if case ChannelEvent.inputClosed = event { inputClosed = true }
        // While a heavy read is answered, the handlers behind — which close a connection whose input ended, or with
        // no request in progress at shutdown — would cut its answer off: they hear of either once it is written. So
        // while a refusal's pause runs, or they would answer the requests waiting for it out of turn.
        if (awaitingWorker || pausedAfterRefusal) && (inputClosed || event is ChannelShouldQuiesceEvent) {
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
