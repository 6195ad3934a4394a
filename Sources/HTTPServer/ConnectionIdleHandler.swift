import NIOCore
import NIOHTTPTypes

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
                if let answered = timers.pipelineAnswered {
                    timers.pipelineAnswered = nil
                    context.write(data, promise: promise)
                    answered()
                    return
                }
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
