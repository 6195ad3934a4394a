import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Right after the HTTP decoder: parser errors and oversized bodies as problem+json, HTTP/1.0 closes after its answer.
final class HTTPGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let timers: ConnectionTimers, limits: ConnectionLimits
    /// The path whose POST body is streamed to disk (a live import): `maximumImportSize`, and a deadline in
    /// proportion to its declared length.
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
