import Dispatch
import HTTPServer
import Hummingbird

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
