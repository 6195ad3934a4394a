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

    /// The ids of the events a webhook receiver got, in the order they came, and those of the POSTs that said they
    /// were a retry (`X-Poi-Delivery-Attempt` over 1).
    final class Received: Sendable {
        let ids = Mutex<[Int64]>([])
        let retried = Mutex<[Int64]>([])
        func withLock<T>(_ body: (inout [Int64]) -> T) -> T { ids.withLock { body(&$0) } }

        /// The ids once each, an immediate repeat taken once — when every repeat was sent as a retry (a POST whose
        /// answer the sender did not get in time is sent again, right after: `WebhookPolicy.leaseSeconds`). A repeat
        /// sent as a first attempt (a second server delivering the same event, or a loop that forgot what it had
        /// delivered) is kept, and so fails the comparison with the stored events.
        var once: [Int64] {
            let got = withLock { $0 }
            var retries = retried.withLock { $0 }
            return got.enumerated().filter { index, id in
                guard index > 0, got[index - 1] == id, let retry = retries.firstIndex(of: id) else { return true }
                retries.remove(at: retry)
                return false
            }.map(\.element)
        }
    }

    /// A webhook receiver for a live socket: `POST /hook` records each event's id.
    static func receiver(_ received: Received) -> some ApplicationProtocol {
        let router = Router()
        router.post("/hook") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 1 << 20)
            let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as! [String: Any]
            let id = (object["id"] as! NSNumber).int64Value
            if let attempt = request.headers[HTTPField.Name("X-Poi-Delivery-Attempt")!].flatMap(Int.init), attempt > 1 {
                received.retried.withLock { $0.append(id) }
            }
            received.withLock { $0.append(id) }
            return .ok
        }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    @Test func aFenceAnsweredByEveryServerWithOneStreamAndOneDelivery() async throws {
        let url = try TestPostgres.database("shared_fence_routes")
        let received = Received()
        let receiver = Self.receiver(received)
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
                    // B's /health says how following the shared fences goes: every stored event handed out.
                    let health = try json(try await b.execute(uri: "/health", method: .get))
                    let following = health["fences"] as? [String: Any] ?? [:]
                    #expect((following["handed"] as? Int ?? 0) >= Int(stored.last?.sequence ?? 1), "\(health)")
                    #expect(following["failures"] as? Int == 0 && following["lastError"] == nil, "\(health)")

                    // Every event reached the receiver once, in order, though both servers run a delivery loop.
                    while received.withLock({ $0.count }) < stored.count, clock.now - start < .seconds(300) {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    try await Task.sleep(for: .milliseconds(300))  // time for a second delivery, were there one
                    // Delivery is at least once: the ids in order, a retry of the one before taken once, are the
                    // stored events; a second server delivering the stream as well shows as repeats not sent as retries.
                    let got = received.withLock { $0 }
                    #expect(received.once == stored.map(\.sequence), "received \(got), retries \(received.retried.withLock { $0 })")
                    if received.once.count != got.count { print("aFenceAnsweredByEveryServer: a retried delivery repeated: \(got)") }

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

    /// A server that stops hands its webhooks over: the other one, started while the lease was still held, is woken
    /// by its lease watch once the lease runs out (no claim per fence meanwhile) and delivers the rest, in order.
    @Test func aStoppedServersWebhookIsTakenOverWhenItsLeaseRunsOut() async throws {
        let url = try TestPostgres.database("shared_fence_takeover")
        let received = Received()
        let receiver = Self.receiver(received)
        let engines = [try Self.server(url), try Self.server(url)]
        defer { for engine in engines { engine.fences?.stopFollowing() } }
        var configuration = ServerConfiguration()
        configuration.webhookPolicy = WebhookPolicy(
            maximumAttempts: 20,
            firstRetry: .milliseconds(5),
            longestRetry: .milliseconds(50),
            timeout: .seconds(1),
            leaseSeconds: 2
        )
        let policy = configuration
        let pin = Mutex<String?>(nil)
        try await receiver.test(.live) { hook in
            let first = buildApplication(configuration: policy, engine: engines[0], gazetteer: nil, metrics: testRegistry)
            try await first.test(.router) { a in
                let fence =
                    #"{"id":"zone","area":{"type":"bbox","bbox":[24.9,60.1,25.0,60.2]},"detect":["enter","exit"],"webhook":"http://127.0.0.1:\#(hook.port!)/hook"}"#
                #expect(try await a.execute(uri: "/v1/fences", method: .post, body: ByteBuffer(string: fence)).status == .created)
                for step in 0..<4 { try await Self.move(a, pin, step: step) }
                _ = try await Self.awaitDelivery(engines[0], received, "server A's deliveries")
            }
            // A has stopped; its lease runs for up to two seconds more. B starts now and waits for it.
            let second = buildApplication(configuration: policy, engine: engines[1], gazetteer: nil, metrics: testRegistry)
            try await second.test(.router) { b in
                for step in 4..<8 { try await Self.move(b, pin, step: step) }
                let stored = try await Self.awaitDelivery(engines[0], received, "server B taking the webhook over")
                try await Task.sleep(for: .milliseconds(300))  // time for a second delivery, were there one
                #expect(stored.count == 8)
                // Every event once, in order, but for a POST sent again after its timeout (at least once).
                let got = received.withLock { $0 }
                #expect(received.once == stored.map(\.sequence), "received \(got), retries \(received.retried.withLock { $0 })")
            }
        }
    }

    /// The pin in or out of the fence by turns: created at the first step, moved after.
    static func move(_ client: some TestClientProtocol, _ pin: borrowing Mutex<String?>, step: Int) async throws {
        let body = FenceRouteTests.pin(step % 2 == 0 ? 60.15 : 61.0, 24.95)
        if let id = pin.withLock({ $0 }) {
            #expect(try await client.execute(uri: "/v1/pins/\(id)", method: .put, body: body).status == .ok)
        } else {
            let id = try json(try await client.execute(uri: "/v1/pins", method: .post, body: body))["id"] as? String
            pin.withLock { $0 = id }
        }
    }

    /// Waits until the receiver has as many events as the store and their delivery is recorded, or fails saying what
    /// was awaited; the stored events.
    static func awaitDelivery(_ engine: SearchEngine, _ received: Received, _ what: String) async throws -> [FenceEvent] {
        let clock = ContinuousClock()
        let start = clock.now
        var stored: [FenceEvent] = []
        while clock.now - start < .seconds(300) {
            stored = try engine.fences!.store.events(fence: "zone", after: 0)
            let recorded = try engine.fences!.store.delivery(fence: "zone").delivered
            if received.withLock({ $0.count }) >= stored.count, recorded >= stored.last?.sequence ?? 0 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(received.withLock { $0.count } >= stored.count, "awaited \(what): \(received.withLock { $0 }) of \(stored.map(\.sequence))")
        return stored
    }
}
