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
        response.body = ResponseBody(contentLength: response.body.contentLength) { _ in }
        return response
    }
}
