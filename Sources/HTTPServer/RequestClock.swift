import NIOCore
import NIOHTTPTypes

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
