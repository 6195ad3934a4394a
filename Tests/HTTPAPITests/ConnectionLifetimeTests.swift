import Logging
import NIOCore
import NIOEmbedded
import Testing

@testable import HTTPAPI
@testable import HTTPServer

/// A closed connection gives back everything it held. The request deadline's closure once kept the connection's
/// handler context — and with it the whole pipeline — alive through `ConnectionTimers` (a retain cycle): about 400
/// bytes per connection, never freed, found by a soak that opened a connection per request.
@Suite struct ConnectionLifetimeTests {
    /// A lane that answers `GET /health`, so the whole-request case runs the lane's answer path.
    static let lane: FastLane = {
        var reads = ReadRoutes()
        reads.add(operationId: "health", path: "/health", pattern: "/health", cost: .light) { _ in .json(Array(#"{"status":"ok"}"#.utf8)) }
        return FastLane(reads: reads, metrics: nil, serverName: "poi", logger: Logger(label: "test"), problem: { _ in nil })
    }()

    enum Scenario: String, CaseIterable {
        case silent, wholeRequest, partialRequest, passedOn
    }

    /// Builds the front of a connection's pipeline (byte lane, request clock) on an embedded channel, runs the
    /// scenario, closes, and reports whether the connection's timers outlived it.
    static func timersOutliveTheConnection(_ scenario: Scenario) throws -> Bool {
        weak var weakTimers: ConnectionTimers?
        try {
            let channel = EmbeddedChannel()
            let timers = ConnectionTimers(limits: ConnectionLimits())
            weakTimers = timers
            try channel.pipeline.syncOperations.addHandler(RawFastLaneHandler(lane: lane, timers: timers))
            try channel.pipeline.syncOperations.addHandler(RequestClock(timers: timers))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            switch scenario {
            case .silent: break
            case .wholeRequest: try channel.writeInbound(ByteBuffer(string: "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
            case .partialRequest: try channel.writeInbound(ByteBuffer(string: "GET /health HTTP/1.1\r\nHo"))
            case .passedOn: try channel.writeInbound(ByteBuffer(string: "POST /v1/pins HTTP/1.1\r\nContent-Length: 2\r\n\r\n{"))
            }
            if scenario == .wholeRequest {
                // The lane answered it (the state under test was in use), not passed it on.
                channel.embeddedEventLoop.run()
                let answer = try channel.readOutbound(as: ByteBuffer.self)
                let head = answer.map { String(String(buffer: $0).prefix(15)) }
                #expect(head == "HTTP/1.1 200 OK", "the byte lane did not answer GET /health: \(String(describing: head))")
            }
            try channel.close().wait()
            _ = try? channel.finish()
            // Scheduled tasks (cancelled or not) are let go of once their time has passed.
            channel.embeddedEventLoop.advanceTime(by: .seconds(120))
        }()
        return weakTimers != nil
    }

    @Test(arguments: Scenario.allCases) func closedConnectionsFreeTheirState(_ scenario: Scenario) throws {
        #expect(try !Self.timersOutliveTheConnection(scenario), "\(scenario): the connection's timers are still referenced after close")
    }
}
