import Foundation
import HTTPAPI
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PostgresStore
import Records
import SearchEngine
import Synchronization
import TestSupport
import Testing

/// Two servers over one PostgreSQL store, as behind a load balancer: a fence made through one is answered by the
/// other, its event stream is the same on both (a client resumes on either with `Last-Event-ID`), and its webhook
/// gets every event once, from whichever server holds the delivery.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, Comment(rawValue: TestPostgres.unavailable ?? ""))) struct SharedFenceRouteTests {
    static func server(_ url: String) throws -> SearchEngine {
        let engine = try SearchEngine(store: PostgresStore(url: url), taxonomy: taxonomy)
        engine.fences = try FenceBook(store: PostgresFenceLog(url: url))
        engine.fences!.follow()
        return engine
    }

    @Test func aFenceAnsweredByEveryServerWithOneStreamAndOneDelivery() async throws {
        let url = try TestPostgres.database("shared_fence_routes")
        let received = Mutex<[Int64]>([])
        let router = Router()
        router.post("/hook") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 1 << 20)
            let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as! [String: Any]
            received.withLock { $0.append((object["id"] as! NSNumber).int64Value) }
            return .ok
        }
        let receiver = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        let engines = [try Self.server(url), try Self.server(url)]
        defer { for engine in engines { engine.fences?.stopFollowing() } }
        var configuration = ServerConfiguration()
        configuration.webhookPolicy = WebhookPolicy(maximumAttempts: 20, firstRetry: .milliseconds(5), longestRetry: .milliseconds(50))
        let apps = engines.map { buildApplication(configuration: configuration, engine: $0, gazetteer: nil, metrics: testRegistry) }
        try await receiver.test(.live) { hook in
            try await apps[0].test(.router) { a in
                try await apps[1].test(.router) { b in
                    let fence =
                        #"{"id":"zone","area":{"type":"bbox","bbox":[24.9,60.1,25.0,60.2]},"detect":["enter","exit","inside"],"webhook":"http://127.0.0.1:\#(hook.port!)/hook"}"#
                    #expect(try await a.execute(uri: "/v1/fences", method: .post, body: ByteBuffer(string: fence)).status == .created)
                    // B learns of it from its follower (notified by PostgreSQL, or its next poll within a second).
                    let clock = ContinuousClock()
                    let start = clock.now
                    while try await b.execute(uri: "/v1/fences/zone", method: .get).status != .ok, clock.now - start < .seconds(60) {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    #expect(try await b.execute(uri: "/v1/fences/zone", method: .get).status == .ok, "server B knows the fence, awaited")
                    #expect(try await b.execute(uri: "/v1/fences", method: .post, body: ByteBuffer(string: fence)).status == .conflict)

                    // One pin moving in and out, written through the two servers in turn.
                    var id: String?
                    for step in 0..<12 {
                        let client = step % 2 == 0 ? a : b
                        let body = FenceRouteTests.pin(step % 3 == 2 ? 61.0 : 60.15, 24.95)
                        if let id {
                            let put = try await client.execute(uri: "/v1/pins/\(id)", method: .put, body: body)
                            #expect(put.status == .ok, "step \(step): \(String(buffer: put.body))")
                        } else {
                            id = try json(try await client.execute(uri: "/v1/pins", method: .post, body: body))["id"] as? String
                        }
                    }
                    let stored = try engines[0].fences!.store.events(fence: "zone", after: 0)
                    #expect(
                        stored.map(\.detect) == [
                            "enter", "inside", "exit", "enter", "inside", "exit", "enter", "inside", "exit", "enter", "inside", "exit",
                        ]
                    )

                    // The same stream from either server, and a resume on the other one.
                    let fromB = FenceRouteTests.events(
                        String(buffer: try await b.execute(uri: "/v1/fences/zone/events?limit=12&timeout=30", method: .get).body)
                    )
                    #expect(fromB.map(\.id) == stored.map(\.sequence))
                    let resumed = try await a.execute(
                        uri: "/v1/fences/zone/events?limit=7&timeout=30",
                        method: .get,
                        headers: [HTTPField.Name("Last-Event-ID")!: String(fromB[4].id)]
                    )
                    #expect(FenceRouteTests.events(String(buffer: resumed.body)).map(\.id) == Array(stored.map(\.sequence).dropFirst(5)))

                    // Every event reached the receiver once, in order, though both servers run a delivery loop.
                    while received.withLock({ $0.count }) < stored.count, clock.now - start < .seconds(300) {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    try await Task.sleep(for: .milliseconds(300))  // time for a second delivery, were there one
                    #expect(received.withLock { $0 } == stored.map(\.sequence))

                    // Deleted through B: gone from A too.
                    #expect(try await b.execute(uri: "/v1/fences/zone", method: .delete).status == .noContent)
                    while try await a.execute(uri: "/v1/fences/zone", method: .get).status != .notFound, clock.now - start < .seconds(360) {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    #expect(try await a.execute(uri: "/v1/fences/zone", method: .get).status == .notFound, "server A forgot the fence, awaited")
                }
            }
        }
    }
}
