import Hummingbird

/// `HEAD` wherever `GET` is (RFC 9110 §9.3.2): the request is answered as a GET and the body dropped, keeping its
/// headers and Content-Length. It wraps the router because Hummingbird matches a route by method before any router
/// middleware runs.
struct HeadAsGet<Builder: HTTPResponderBuilder>: HTTPResponderBuilder {
    let router: Builder

    func buildResponder() -> HeadAsGetResponder<Builder.Responder> { HeadAsGetResponder(inner: router.buildResponder()) }
}

struct HeadAsGetResponder<Inner: HTTPResponder>: HTTPResponder {
    typealias Context = Inner.Context
    let inner: Inner

    func respond(to request: Request, context: Context) async throws -> Response {
        guard request.method == .head else { return try await inner.respond(to: request, context: context) }
        var head = request.head
        head.method = .get
        var response = try await inner.respond(to: Request(head: head, body: RequestBody(buffer: ByteBuffer())), context: context)
        // No body, but the answer must still end: without `finish` the connection's handlers never see the answer's
        // end (a pipelined `Connection: close` after a HEAD lost its header, and the connection never went idle).
        response.body = ResponseBody(contentLength: response.body.contentLength) { writer in try await writer.finish(nil) }
        return response
    }
}
