import Gazetteer
import HTTPAPI
import HTTPServer
import NIOCore
import Prometheus
import SearchEngine

/// The fast lane outside any connection, for `poi bench wire`: the user-space cost of a read request — parsing,
/// the engine's answer, encoding, the response's bytes and the request metrics — without the sockets.
public struct WireBench: Sendable {
    private let lane: FastLane

    public init(configuration: ServerConfiguration, engine: SearchEngine, gazetteer: Gazetteer?, metrics: PrometheusCollectorRegistry?) {
        lane = buildReadLane(configuration: configuration, engine: engine, gazetteer: gazetteer, metrics: metrics)
    }

    /// The response to one GET of `target` (path and query) as the server writes it; nil when the fast lane does not
    /// take it.
    public func respond(to target: String) -> ByteBuffer? {
        var input = ByteBuffer(string: "GET \(target) HTTP/1.1\r\nHost: localhost\r\n\r\n")
        var output = ByteBuffer()
        switch lane.answer(&input, maximumHeadSize: ConnectionLimits().maximumHeadSize, into: &output) {
        case .answered(close: false): return output
        case .heavy(let read):
            lane.respond(read, into: &output)
            return output
        default: return nil
        }
    }
}
