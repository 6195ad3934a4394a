import Foundation
import GeoCore
import PostgresStore
import Records
import Synchronization
import TestSupport
import Testing

@testable import SearchEngine

/// Fences kept in PostgreSQL and shared by every server (`PostgresFenceLog`): a fence made on one is known to the
/// others, each write's events are made once, by the server that made the write, and every server hands the same
/// events out in the same order under the same numbers.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, Comment(rawValue: TestPostgres.unavailable ?? ""))) struct SharedFenceTests {
    static func server(_ url: String) throws -> SearchEngine {
        let engine = try SearchEngine(store: PostgresStore(url: url), taxonomy: testTaxonomy)
        engine.fences = try FenceBook(store: PostgresFenceLog(url: url))
        return engine
    }

    static func pin(_ key: String, _ lat: Double, _ lon: Double) -> PinInput {
        PinInput(uniqueKey: key, firstName: "A", lastName: "B", mapString: "", mediaURL: "", latitude: lat, longitude: lon)
    }

    /// The shared store's retention drops events stored before a time, moves `keptFrom` past them, and the numbers
    /// carry on; events stored after it stay.
    @Test func theRetentionDropsEventsStoredBeforeATime() throws {
        let url = try TestPostgres.database("shared_fence_retention")
        let log = try PostgresFenceLog(url: url)
        #expect(try log.keptFrom() == 1)
        let old = try log.append((0..<5).map { k in (fence: k % 2 == 0 ? "a" : "b", detect: "enter", make: { #"{"id":\#($0)}"# }) })
        #expect(try log.trim(storedBefore: Date().addingTimeInterval(-3_600)) == 0)
        Thread.sleep(forTimeInterval: 0.05)
        let cutoff = Date()
        Thread.sleep(forTimeInterval: 0.05)
        let new = try log.append([(fence: "a", detect: "exit", make: { #"{"id":\#($0)}"# })])
        #expect(try log.trim(storedBefore: cutoff) == old.count)
        #expect(try log.keptFrom() == old.last!.sequence + 1)
        #expect(try log.events(fence: "a", after: 0) == new)
        #expect(try log.events(fence: "b", after: 0).isEmpty)
        #expect(try log.events(after: 0, limit: 100) == new)
        #expect(try log.append([(fence: "b", detect: "enter", make: { _ in "{}" })]).map(\.sequence) == [new[0].sequence + 1])
        // Trimming again drops nothing more, and never moves keptFrom back.
        #expect(try log.trim(storedBefore: cutoff) == 0)
        #expect(try log.keptFrom() == old.last!.sequence + 1)
    }

    @Test func aFenceMadeOnOneServerIsKnownToTheOthers() throws {
        let url = try TestPostgres.database("shared_fence_definitions")
        let (a, b) = (try Self.server(url), try Self.server(url))
        let learned = Mutex<[String]>([])
        b.fences!.watchDefinitions { id, fence in learned.withLock { $0.append("\(id) \(fence == nil ? "gone" : "put")") } }
        let zone = Fence(id: "zone", area: .box(BoundingBox(uncheckedWest: 24.9, south: 60.1, east: 25.0, north: 60.2)))
        try a.fences!.put(zone)
        try b.fences!.readDefinitions()
        #expect(b.fences!.fence(id: "zone") == zone)
        // A server started after the fence was made reads it at start.
        #expect(try Self.server(url).fences!.fence(id: "zone") == zone)
        var wider = zone
        wider.area = .box(BoundingBox(uncheckedWest: 24.0, south: 60.0, east: 25.0, north: 61.0))
        try a.fences!.put(wider)
        try b.fences!.readDefinitions()
        #expect(b.fences!.fence(id: "zone") == wider)
        try b.fences!.delete(id: "zone")
        try a.fences!.readDefinitions()
        try b.fences!.readDefinitions()  // its own deletion, read back: nothing new
        #expect(a.fences!.fence(id: "zone") == nil)
        #expect(learned.withLock { $0 } == ["zone put", "zone put"], "B learns of A's two puts, not of its own deletion")
    }

    /// Pins walk in and out of a fence, written through two servers in turn; the events stored equal a brute-force
    /// replay of the walk (every enter and exit, none extra, in order), and both servers' subscribers got exactly
    /// those, in that order, under the same numbers.
    @Test func eachWriteMakesItsEventsOnceAndEveryServerHandsThemOutAlike() throws {
        let seed = testSeed("SharedFenceTests.eachWriteMakesItsEventsOnce")
        var random = SplitMix64(seed: seed)
        let url = try TestPostgres.database("shared_fence_events")
        let servers = [try Self.server(url), try Self.server(url)]
        let box = BoundingBox(uncheckedWest: 24.9, south: 60.1, east: 25.0, north: 60.2)
        let zone = Fence(id: "zone", area: .box(box), detect: [.enter, .exit])
        try servers[0].fences!.put(zone)
        try servers[1].fences!.readDefinitions()
        // Each server's follower reads every write back from the feed before the write is applied here — the order
        // a busy server meets when the follower takes the writer lock between a commit and its application: the
        // events must still be made, once.
        for server in servers { server.afterCommit = { [weak server] in server?.catchUp() } }
        let handed = Mutex<[[FenceEvent]]>([[], []])
        for (k, server) in servers.enumerated() { _ = server.fences!.subscribe { batch in handed.withLock { $0[k] += batch } } }

        var pins: [String: (lat: Double, lon: Double)] = [:]
        var expected: [String] = []
        func inside(_ p: (lat: Double, lon: Double)?) -> Bool { p.map { box.contains(latitude: $0.lat, longitude: $0.lon) } ?? false }
        func note(_ id: String, _ before: (lat: Double, lon: Double)?, _ after: (lat: Double, lon: Double)?) {
            switch (inside(before), inside(after)) {
            case (false, true): expected.append("enter \(id)")
            case (true, false): expected.append("exit \(id)")
            default: break
            }
        }
        for step in 0..<120 {
            let server = servers[step % 2]
            let at = (lat: 60.15 + random.uniform(-0.08...0.08), lon: 24.95 + random.uniform(-0.08...0.08))
            let choice = random.next() % 10
            if pins.isEmpty || choice < 2 {
                let made = try server.createPin(Self.pin("k\(step)", at.lat, at.lon))
                note(made.id, nil, at)
                pins[made.id] = at
            } else if choice < 3 {
                let id = pins.keys.sorted()[Int(random.next() % UInt64(pins.count))]
                try server.deletePin(id: id)
                note(id, pins[id], nil)
                pins[id] = nil
            } else {
                let id = pins.keys.sorted()[Int(random.next() % UInt64(pins.count))]
                _ = try server.updatePin(id: id, Self.pin("k", at.lat, at.lon))
                note(id, pins[id], at)
                pins[id] = at
            }
            // The other server follows the feed now and then, as its follower thread would.
            if random.next() % 3 == 0 { servers[(step + 1) % 2].catchUp() }
        }
        for server in servers {
            server.catchUp()
            try server.fences!.handEvents(through: .max)
        }
        let stored = try servers[0].fences!.store.events(fence: "zone", after: 0, limit: 10_000)
        func said(_ events: [FenceEvent]) -> [String] {
            events.map { event in
                let object = (try? JSONSerialization.jsonObject(with: Data(event.json.utf8))) as? [String: Any]
                return "\(event.detect) \((object?["object"] as? [String: Any])?["id"] as? String ?? "?")"
            }
        }
        #expect(!expected.isEmpty)
        #expect(said(stored) == expected, "seed \(seed)")
        #expect(stored.map(\.sequence) == stored.map(\.sequence).sorted())
        for k in servers.indices {
            #expect(handed.withLock { $0[k] } == stored, "server \(k)'s subscribers, seed \(seed)")
        }
    }
}
