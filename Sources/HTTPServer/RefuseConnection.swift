import NIOCore

/// The only handler of a connection over the maximum: answers 503 and closes.
final class RefuseConnection: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    let maximum: Int

    init(maximum: Int) { self.maximum = maximum }

    /// Answers at once and closes at once: a refused connection must give its descriptor back immediately, or a
    /// flood would hold them in lingering closes.
    func channelActive(context: ChannelHandlerContext) {
        let problem = Problem(.serviceUnavailable, "the server is at its limit of \(maximum) open connections; retry shortly", retryAfter: 1)
        context.writeAndFlush(NIOAny(problem.rawResponse())).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
