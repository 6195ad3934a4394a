import NIOCore
import NIOHTTPTypes

/// The router's side of `ConnectionLimits.refusedWritePause`: after an answer of 401 or 429 — a write without valid
/// credentials or over its rate limit, as the router refuses it when the byte lane is off (`--no-fast-lane`, CORS)
/// or has handed the connection on for good — the connection is not answered for the pause. What arrives meanwhile
/// is held here, in order, and handed on once it has run; and no more is asked of the socket, so a flooding client's
/// next requests wait in its own socket, as after a refusal in the byte lane (`RawFastLaneHandler`).
final class RefusalPause: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What arrived during a pause, handed on after it in the order it came.
    private enum Held {
        case part(NIOAny)
        case readComplete
        case event(Any)
    }

    private let pause: TimeAmount
    private var paused = false
    private var held: [Held] = []
    /// A read was asked for during the pause: asked for once it ends.
    private var readWaiting = false

    init(pause: TimeAmount) { self.pause = pause }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head(let head) = unwrapOutboundIn(data), head.status == .unauthorized || head.status == .tooManyRequests {
            startPause(context)
        }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        guard !paused else {
            readWaiting = true
            return
        }
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !paused else { return held.append(.part(data)) }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard !paused else { return held.append(.readComplete) }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard !paused else { return held.append(.event(event)) }
        context.fireUserInboundEventTriggered(event)
    }

    private func startPause(_ context: ChannelHandlerContext) {
        guard !paused else { return }
        paused = true
        context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: pause) { [self] in
            paused = false
            // Handed on in order; the router answers them in turn, and a refusal among them starts the next pause.
            let waiting = held
            held = []
            for item in waiting {
                switch item {
                case .part(let data): context.fireChannelRead(data)
                case .readComplete: context.fireChannelReadComplete()
                case .event(let event): context.fireUserInboundEventTriggered(event)
                }
            }
            if readWaiting && !paused {
                readWaiting = false
                context.read()
            }
        }
    }
}
