import Dispatch
import HTTPTypes
import Metrics
import Synchronization

/// The counter and timer of each (route, method, status), made once: the metrics factory's lookup by labels is
/// not free. One per server, shared by the middleware and the fast lane.
public final class EndpointMetrics: Sendable {
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

    public init() {}

    public func record(route: String?, method: HTTPRequest.Method, status: HTTPResponse.Status, since start: UInt64) {
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
