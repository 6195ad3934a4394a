import Catalog
import Foundation
import HTTPAPI
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Records
import SearchEngine
import Synchronization
import Testing

/// /v1/fences: making, listing and removing live areas, their events as Server-Sent Events with resume, and
/// webhooks that retry until a flaky receiver has every event, in order.
@Suite struct FenceRouteTests {
    static let zone = #"{"id":"zone","area":{"type":"circle","lat":60.17,"lon":24.94,"radius":300},"detect":["enter","exit","inside"]}"#

    /// The SSE events of a body: (id, event, data).
    static func events(_ body: String) -> [(id: Int64, event: String, data: [String: Any])] {
        body.components(separatedBy: "\n\n").compactMap { block in
            var id: Int64?
            var event = ""
            var data = ""
            for line in block.split(separator: "\n") {
                if line.hasPrefix("id: ") { id = Int64(line.dropFirst(4)) }
                if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
                if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
            }
            guard let id, let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else { return nil }
            return (id, event, object)
        }
    }

    /// A POST of JSON.
    static func post(_ client: some TestClientProtocol, _ uri: String, _ body: ByteBuffer) async throws -> TestResponse {
        try await client.execute(uri: uri, method: .post, headers: [.contentType: "application/json"], body: body)
    }

    static func pin(_ lat: Double, _ lon: Double) -> ByteBuffer {
        ByteBuffer(
            string: #"{"uniqueKey":"u","firstName":"Aino","lastName":"V","mapString":"","mediaURL":"","latitude":\#(lat),"longitude":\#(lon)}"#
        )
    }

    @Test func eventsStreamAndResume() async throws {
        try await app().test(.router) { client in
            let made = try await Self.post(client, "/v1/fences", ByteBuffer(string: Self.zone))
            #expect(made.status == .created)
            #expect(made.headers[.location] == "/v1/fences/zone")
            let again = try await client.execute(
                uri: "/v1/fences",
                method: .post,
                headers: [.contentType: "application/json"],
                body: ByteBuffer(string: Self.zone)
            )
            #expect(again.status == .conflict)
            // In, moved inside, out; and a pin far away, which reports nothing.
            let created = try await Self.post(client, "/v1/pins", Self.pin(60.1701, 24.9401))
            #expect(created.status == .created)
            let id = try json(created)["id"] as! String
            _ = try await client.execute(uri: "/v1/pins", method: .post, headers: [.contentType: "application/json"], body: Self.pin(61.5, 23.7))
            _ = try await client.execute(
                uri: "/v1/pins/\(id)",
                method: .put,
                headers: [.contentType: "application/json"],
                body: Self.pin(60.1702, 24.9402)
            )
            _ = try await client.execute(uri: "/v1/pins/\(id)", method: .put, headers: [.contentType: "application/json"], body: Self.pin(60.2, 24.9))

            let all = try await client.execute(uri: "/v1/fences/zone/events?limit=3&timeout=5", method: .get)
            #expect(all.status == .ok)
            #expect(all.headers[.contentType] == "text/event-stream")
            let events = Self.events(String(buffer: all.body))
            #expect(events.map(\.event) == ["enter", "inside", "exit"])
            #expect(events.allSatisfy { ($0.data["object"] as? [String: Any])?["id"] as? String == id && $0.data["fence"] as? String == "zone" })
            #expect(events.map(\.id) == events.map(\.id).sorted())
            // Resume after the first: the header EventSource sends, or `after`.
            let resumed = try await client.execute(
                uri: "/v1/fences/zone/events?limit=2&timeout=5",
                method: .get,
                headers: [HTTPField.Name("Last-Event-ID")!: String(events[0].id)]
            )
            #expect(Self.events(String(buffer: resumed.body)).map(\.event) == ["inside", "exit"])
            let after = try await client.execute(uri: "/v1/fences/zone/events?limit=1&timeout=5&after=\(events[1].id)", method: .get)
            #expect(Self.events(String(buffer: after.body)).map(\.event) == ["exit"])

            let listed = try json(try await client.execute(uri: "/v1/fences", method: .get))["results"] as? [[String: Any]]
            #expect(listed?.map { $0["id"] as? String } == ["zone"])
            #expect(try await client.execute(uri: "/v1/fences/zone", method: .delete).status == .noContent)
            #expect(try await client.execute(uri: "/v1/fences/zone", method: .get).status == .notFound)
            #expect(try await client.execute(uri: "/v1/fences/zone/events", method: .get).status == .notFound)
        }
    }

    /// A stream resumed from before the events still kept (the retention dropped older segments) is told so first,
    /// with an event that has no id (the client's Last-Event-ID stays), then gets every event kept; one resumed
    /// within what is kept, or new, gets no such event.
    @Test func aResumeFromBeforeTheKeptEventsIsToldOfTheGap() async throws {
        let engine = makeEngine()
        let store = try FenceStore(path: nil, segmentBytes: 600, retention: FenceEventRetention(seconds: nil, bytes: 1_200))
        engine.fences = try FenceBook(store: store)
        try await app(engine: engine).test(.router) { client in
            let made = try await Self.post(client, "/v1/fences", ByteBuffer(string: Self.zone))
            #expect(made.status == .created)
            let created = try await Self.post(client, "/v1/pins", Self.pin(60.1701, 24.9401))
            let id = try json(created)["id"] as! String
            // Moved about inside the zone until the retention has dropped segments.
            var moves = 0
            while try store.keptFrom() == 1 {
                moves += 1
                let moved = try await client.execute(
                    uri: "/v1/pins/\(id)",
                    method: .put,
                    headers: [.contentType: "application/json"],
                    body: Self.pin(60.1701 + Double(moves % 7) * 1e-5, 24.9401)
                )
                #expect(moved.status == .ok)
                try #require(moves < 200, "the retention dropped no segment after \(moves) moves")
            }
            let kept = try store.keptFrom()
            let keptEvents = try store.events(fence: "zone", after: 0, limit: 1000)
            #expect(keptEvents.first?.sequence == kept)
            let resumed = try await client.execute(
                uri: "/v1/fences/zone/events?limit=\(keptEvents.count)&timeout=5",
                method: .get,
                headers: [HTTPField.Name("Last-Event-ID")!: "1"]
            )
            let body = String(buffer: resumed.body)
            let blocks = body.components(separatedBy: "\n\n").filter { !$0.hasPrefix(":") && !$0.isEmpty }
            #expect(blocks.first?.hasPrefix("event: gap\ndata: ") == true, "\(body.prefix(300))")
            #expect(blocks.first?.contains("id: ") == false)
            let gap = try #require(blocks.first.flatMap { $0.split(separator: "\n").last }.map { String($0.dropFirst(6)) })
            let object = try #require(try JSONSerialization.jsonObject(with: Data(gap.utf8)) as? [String: Any])
            #expect(object["after"] as? Int == 1)
            #expect(object["keptFrom"] as? Int == Int(kept))
            #expect(Self.events(body).map(\.id) == keptEvents.map(\.sequence))
            // From within what is kept, or from nothing: no gap.
            for headers: HTTPFields in [[HTTPField.Name("Last-Event-ID")!: String(kept)], [:]] {
                let plain = try await client.execute(uri: "/v1/fences/zone/events?limit=1&timeout=5", method: .get, headers: headers)
                #expect(!String(buffer: plain.body).contains("event: gap"))
            }
        }
    }

    @Test func badFencesAreRefusedByField() async throws {
        try await app().test(.router) { client in
            for (body, field) in [
                (#"{"area":{"type":"circle","lat":60,"lon":24}}"#, "area.radius"), (#"not json"#, "body"),
                (#"{"area":{"type":"bbox","bbox":[1,2,3]}}"#, "area.bbox"),
            ] {
                let response = try await client.execute(
                    uri: "/v1/fences",
                    method: .post,
                    headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: body)
                )
                #expect(response.status == .badRequest, "\(body)")
                #expect((try json(response)["detail"] as? String ?? "").hasPrefix(field + " "), "\(body)")
            }
            _ = try await client.execute(
                uri: "/v1/fences",
                method: .post,
                headers: [.contentType: "application/json"],
                body: ByteBuffer(string: Self.zone)
            )
            for (uri, field) in [
                ("/v1/fences/zone/events?after=-1", "after"), ("/v1/fences/zone/events?limit=0", "limit"),
                ("/v1/fences/zone/events?timeout=0", "timeout"),
            ] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .badRequest, "\(uri)")
                #expect((try json(response)["detail"] as? String ?? "").hasPrefix(field + " "), "\(uri)")
            }
        }
    }

    /// A receiver that fails every other request still gets every event, in order (a repeat only as the retry of the
    /// event just before, which a slow answer can cause).
    @Test func webhooksRetryUntilDelivered() async throws {
        let received = Mutex<[Int64]>([])
        // Every POST's event id and its X-Poi-Delivery-Attempt, failed or not.
        let posts = Mutex<[(id: Int64, attempt: Int?)]>([])
        let calls = Atomic<Int>(0)
        let router = Router()
        router.post("/hook") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 1 << 20)
            let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as! [String: Any]
            let id = (object["id"] as! NSNumber).int64Value
            posts.withLock { $0.append((id, request.headers[HTTPField.Name("X-Poi-Delivery-Attempt")!].flatMap(Int.init))) }
            guard calls.add(1, ordering: .relaxed).newValue % 2 == 0 else { return .internalServerError }
            received.withLock { $0.append(id) }
            return .ok
        }
        let receiver = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await receiver.test(.live) { hook in
            var configuration = ServerConfiguration()
            configuration.webhookPolicy = WebhookPolicy(maximumAttempts: 20, firstRetry: .milliseconds(5), longestRetry: .milliseconds(50))
            let engine = makeEngine()
            try await buildApplication(configuration: configuration, engine: engine, gazetteer: nil, metrics: testRegistry).test(.router) { client in
                let fence = #"{"id":"hooked","area":{"type":"bbox","bbox":[24.9,60.1,25.0,60.2]},"webhook":"http://127.0.0.1:\#(hook.port!)/hook"}"#
                #expect(try await client.execute(uri: "/v1/fences", method: .post, body: ByteBuffer(string: fence)).status == .created)
                var id: String?
                for step in 0..<15 {
                    let inside = step % 2 == 0
                    let body = Self.pin(inside ? 60.15 : 61.0, 24.95)
                    if let id {
                        _ = try await client.execute(uri: "/v1/pins/\(id)", method: .put, body: body)
                    } else {
                        id = try json(try await client.execute(uri: "/v1/pins", method: .post, body: body))["id"] as? String
                    }
                }
                let stored = try engine.fences!.store.events(fence: "hooked", after: 0).map(\.sequence)
                #expect(stored.count == 15)
                // Wait for the deliveries themselves (each retried at most a few times at 5–50 ms). Delivery is at least
                // once: a POST the receiver took but answered after the client's timeout is sent again, so a receiver
                // drops an event id it has seen (X-Poi-Event-Id) — as this one's count does.
                func distinct() -> [Int64] {
                    received.withLock { ids in ids.enumerated().filter { $0.offset == 0 || ids[$0.offset - 1] != $0.element }.map(\.element) }
                }
                let clock = ContinuousClock()
                let start = clock.now
                while distinct().count < stored.count, clock.now - start < .seconds(300) { try await Task.sleep(for: .milliseconds(20)) }
                #expect(distinct() == stored, "the receiver got \(received.withLock { $0 }); the fence stored \(stored)")
                // Each event's POSTs count their attempts from 1, one more each time.
                let sent = posts.withLock { $0 }
                for id in stored {
                    let attempts = sent.filter { $0.id == id }.map(\.attempt)
                    #expect(attempts == (1...max(attempts.count, 1)).map { $0 }, "X-Poi-Delivery-Attempt of event \(id): \(attempts)")
                }
                // The sender records its progress once the receiver's answer is in: after the receiver has the event.
                var state = try json(try await client.execute(uri: "/v1/fences/hooked", method: .get))
                while (state["webhookDelivered"] as? NSNumber)?.int64Value != stored.last, clock.now - start < .seconds(300) {
                    try await Task.sleep(for: .milliseconds(20))
                    state = try json(try await client.execute(uri: "/v1/fences/hooked", method: .get))
                }
                #expect((state["webhookDelivered"] as? NSNumber)?.int64Value == stored.last, "the fence's delivery progress, awaited")
                #expect((state["webhookDeadLetters"] as? NSNumber)?.intValue == 0)
            }
        }
    }
}
