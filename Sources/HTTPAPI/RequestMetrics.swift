import Dispatch
import Hummingbird
import Metrics
import Synchronization

/// Counts and times every request per route pattern, method and status (`poi_http_requests_total`,
/// `poi_http_request_duration_seconds`), through swift-metrics.
///
/// Hummingbird's own `MetricsMiddleware` records after the body is written by wrapping the body in a closure,
/// which turns a one-buffer response into a streamed one; under wrk that cost a third of the server's throughput
/// (RESULTS.md). Here the handler's time is recorded when the response is ready and the body stays a plain buffer.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let cache: EndpointMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = DispatchTime.now().uptimeNanoseconds
        do {
            let response = try await next(request, context)
            cache.record(route: context.endpointPath, method: request.method, status: response.status, since: start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            cache.record(route: context.endpointPath, method: request.method, status: status, since: start)
            throw error
        }
    }
}

/// The counter and timer of each (route, method, status), made once: the metrics factory's lookup by labels is
/// not free. One per server, shared by the middleware and the fast lane.
final class EndpointMetrics: Sendable {
    private struct Key: Hashable {
        let route: String
        let method: HTTPRequest.Method
        let status: Int
    }

    private struct Instruments: Sendable {
        let requests: Counter
        let duration: Timer
    }

    private let instruments = Mutex<[Key: Instruments]>([:])

    func record(route: String?, method: HTTPRequest.Method, status: HTTPResponse.Status, since start: UInt64) {
        let key = Key(route: route ?? "unmatched", method: method, status: status.code)
        let found = instruments.withLock { table in
            if let found = table[key] { return found }
            let dimensions = [("route", key.route), ("method", key.method.rawValue), ("status", String(key.status))]
            let made = Instruments(
                requests: Counter(label: "poi_http_requests_total", dimensions: dimensions),
                duration: Timer(label: "poi_http_request_duration_seconds", dimensions: dimensions, preferredDisplayUnit: .seconds)
            )
            table[key] = made
            return made
        }
        found.requests.increment()
        found.duration.recordNanoseconds(DispatchTime.now().uptimeNanoseconds - start)
    }
}
