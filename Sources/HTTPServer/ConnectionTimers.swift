import NIOCore

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

    /// Set by the byte lane when it hands one write to the pipeline behind: called once that write's answer has been
    /// written (the last request in progress ended), then cleared.
    var pipelineAnswered: (() -> Void)?

    init(limits: ConnectionLimits) { self.limits = limits }

    /// After an error answer written with `write`: flush, close our side, drop further input, close fully soon.
    func linger(_ context: ChannelHandlerContext, flushed: EventLoopFuture<Void>) {
        lingering = true
        deadline?.cancel()
        deadline = nil
        flushed.assumeIsolated().whenComplete { _ in
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
