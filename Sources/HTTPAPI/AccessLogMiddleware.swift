import Access
import Dispatch
import HTTPServer
import Hummingbird
import Synchronization

/// Writes each request the router answers to the request log (`AccessLog`), as the fast lane does for its reads:
/// outermost, so it sees the answer the client gets — the status after the error middleware and its request id.
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let log: AccessLog

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = DispatchTime.now().uptimeNanoseconds
        let time = AccessLog.now()
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            // The error middleware inside answers every error; one that gets past it is Hummingbird's to answer.
            record(request, context, status: (error as? any HTTPResponseError)?.status.code ?? 500, bytes: 0, requestID: nil, start, time)
            throw error
        }
        let bytes = request.method == .head ? 0 : (response.body.contentLength ?? 0)
        record(request, context, status: response.status.code, bytes: bytes, requestID: response.headers[RequestID.header], start, time)
        return response
    }

    private func record(
        _ request: Request,
        _ context: Context,
        status: Int,
        bytes: Int,
        requestID: String?,
        _ start: UInt64,
        _ time: Int64
    ) {
        log.record(
            AccessLog.Entry(
                time: time,
                requestID: requestID ?? RequestID.of(request.headers[RequestID.header]),
                method: request.method,
                route: context.endpointPath ?? "unmatched",
                status: status,
                bytes: bytes,
                durationNanoseconds: DispatchTime.now().uptimeNanoseconds - start,
                caller: context.caller.value,
                client: context.remoteAddress?.ipAddress
            )
        )
    }
}

/// Who a request proved to be, set by the handler that checked its credentials and read by the request log: a
/// reference, because the middleware outside and the handler inside hold copies of one context.
public final class CallerRecord: Sendable {
    private let caller = Mutex<AccessLog.Caller?>(nil)

    init() {}

    public var value: AccessLog.Caller? { caller.withLock { $0 } }

    func set(_ principal: Principal) {
        guard let named = principal.caller else { return }
        caller.withLock { $0 = named }
    }
}

extension Principal {
    /// Whom the request log names: a user or a key; nil for an anonymous writer.
    var caller: AccessLog.Caller? {
        switch self {
        case .user(let subject): .user(subject)
        case .key(let name, _): .key(name)
        case .anonymous: nil
        }
    }
}
