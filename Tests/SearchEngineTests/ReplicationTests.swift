import Catalog
import Foundation
import GeoCore
import PostgresStore
import Records
import TestSupport
import Testing

@testable import SearchEngine

/// Several engines over one PostgreSQL store: what one writes, the others apply from the change feed; a replica
/// restarts from its snapshot plus the changes after it, or rebuilds when the log no longer reaches back; a
/// PostgreSQL restart costs writes only while it is down.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, Comment(rawValue: TestPostgres.unavailable ?? ""))) struct ReplicationTests {
    /// This test's files, removed when it ends.
    let scratch = ScratchDirectory("poi-replica")

    static func engine(_ url: String, snapshot: String? = nil) throws -> SearchEngine {
        try SearchEngine(store: PostgresStore(url: url), taxonomy: testTaxonomy, snapshot: snapshot.map { .init(path: $0, every: 0) })
    }

    /// A fence on one replica reports the writes another server makes (they reach it through the store's change feed),
    /// in order; this replica's own writes, read back from the feed after it made them, report once, not twice.
    @Test func fencesOnAReplicaFollowOtherServersWrites() throws {
        let url = try TestPostgres.database("fences")
        let writer = try Self.engine(url)
        let replica = try Self.engine(url)
        replica.fences = try FenceBook(store: FenceStore(path: nil))
        let zone = Fence(
            id: "zone",
            area: .box(BoundingBox(uncheckedWest: 24.9, south: 60.1, east: 25.0, north: 60.2)),
            detect: [.enter, .exit, .inside]
        )
        try replica.fences!.put(zone)
        func pin(_ key: String, _ lat: Double) -> PinInput {
            PinInput(uniqueKey: key, firstName: "A", lastName: "B", mapString: "", mediaURL: "", latitude: lat, longitude: 24.95)
        }
        let outside = try writer.createPin(pin("w", 59.0))
        _ = try writer.updatePin(id: outside.id, pin("w", 60.15))  // enters
        replica.catchUp()
        _ = try writer.updatePin(id: outside.id, pin("w", 60.16))  // moves inside: no event
        _ = try writer.updatePin(id: outside.id, pin("w", 61.0))  // exits
        replica.catchUp()
        let own = try replica.createPin(pin("r", 60.15))  // enters, made here
        replica.catchUp()  // reads its own write back from the feed
        try writer.deletePin(id: outside.id)  // already outside: nothing
        replica.catchUp()
        let events = try replica.fences!.store.events(fence: "zone", after: 0)
        let said = events.map { event -> String in
            let object = (try? JSONSerialization.jsonObject(with: Data(event.json.utf8))) as? [String: Any]
            let record = object?["object"] as? [String: Any]
            return "\(event.detect) \(record?["id"] as? String ?? "?")"
        }
        #expect(said == ["enter \(outside.id)", "exit \(outside.id)", "enter \(own.id)"], "\(events.map(\.json))")
    }

    /// Every POI and pin id of the store, as the store has them.
    static func storeContents(_ url: String) throws -> (pois: [String: POIRecord], pins: [String: PinRecord]) {
        var pois: [String: POIRecord] = [:]
        let store = try PostgresStore(url: url)
        let rest = try store.loadAll(blockSize: 1_000) { block in for poi in block { pois[poi.id] = poi } }
        return (pois, Dictionary(uniqueKeysWithValues: rest.pins.map { ($0.id, $0) }))
    }

    /// The engine holds exactly the store's records, and its spatial index finds exactly the POIs a brute-force scan
    /// of the store finds around random points.
    static func expectMatches(_ engine: SearchEngine, _ url: String, seed: UInt64, _ comment: Comment) throws {
        let (pois, pins) = try storeContents(url)
        #expect(
            engine.counts.pois == pois.count && engine.counts.pins == pins.count,
            "\(comment): counts \(engine.counts) vs store \(pois.count), \(pins.count)"
        )
        for (id, poi) in pois where engine.poi(id: id) != poi {
            Issue.record("\(comment): POI \(id) is \(String(describing: engine.poi(id: id))), the store has \(poi)")
            return
        }
        for (id, pin) in pins where engine.pin(id: id) != pin {
            Issue.record("\(comment): pin \(id) is \(String(describing: engine.pin(id: id))), the store has \(pin)")
            return
        }
        var random = SplitMix64(seed: seed)
        for _ in 0..<40 {
            let origin = try Coordinate(latitude: 60.17 + random.uniform(-0.05...0.05), longitude: 24.94 + random.uniform(-0.1...0.1))
            let radius = random.uniform(200...3_000)
            let page = engine.nearby(NearbyQuery(Around(origin, radius: radius), kind: .poi, limit: 100_000))
            let found = Set(page.results.map(\.id))
            let distance = { (poi: POIRecord) in GreatCircle.distance(origin, try! Coordinate(latitude: poi.lat, longitude: poi.lon)) }
            let expected = Set(pois.values.filter { distance($0) <= radius }.map(\.id))
            let wrong = found.symmetricDifference(expected).sorted()
            #expect(
                wrong.isEmpty,
                "\(comment): nearby \(origin) \(Int(radius)) m: \(found.count) found, \(expected.count) expected; differing: \(wrong.prefix(5).map { "\($0) at \(pois[$0].map(distance) ?? -1) m" })"
            )
        }
    }

    static func poi(_ id: String, _ random: inout SplitMix64, name: String = "Kahvila") -> POIRecord {
        POIRecord(
            id: id,
            name: "\(name) \(random.next() % 1_000)",
            category: "food.cafe",
            address: nil,
            city: "Helsinki",
            country: "FI",
            lat: 60.17 + random.uniform(-0.05...0.05),
            lon: 24.94 + random.uniform(-0.1...0.1),
            tags: ["cuisine": "coffee"]
        )
    }

    @Test func theStoreCommitsNumbersChangesAndFeedsThem() throws {
        let url = try TestPostgres.database()
        let store = try PostgresStore(url: url)
        var random = SplitMix64(seed: 1)
        let start = try store.changeSequence()
        #expect(start.sequence == 0)
        let a = Self.poi("a", &random)
        let b = Self.poi("b", &random)
        let step = try store.commit([.put(.poi(a)), .put(.poi(b)), .delete(.poi, id: "b"), .put(.poi(a))])
        #expect(step.before == start && step.after.sequence == 1 && step.after.identity == start.identity)
        #expect(try store.record(.poi, id: "a") == .poi(a))
        #expect(try store.record(.poi, id: "b") == nil)
        let pin = PinRecord(
            id: "p1",
            uniqueKey: "u",
            firstName: "Ada",
            lastName: "L",
            mapString: "Helsinki",
            mediaURL: "https://example.org/x?'; DROP TABLE pin; --",
            lat: 60.2,
            lon: 24.9,
            createdAt: "2026-01-01T00:00:00.000Z",
            updatedAt: "2026-01-01T00:00:00.000Z"
        )
        try store.commit([.put(.pin(pin))])
        let all = try store.changes(after: 0)
        #expect(all.sequence.sequence == 2)
        #expect(Set(all.records.map(\.id)) == ["a", "p1"])
        #expect(all.deleted.map(\.id) == ["b"])
        let tail = try store.changes(after: 1)
        #expect(tail.records.map(\.id) == ["p1"] && tail.deleted.isEmpty)
        #expect(try store.changes(after: 2).isEmpty)
        // A follower is woken by the commit's NOTIFY (the first call opened its LISTEN connection).
        let woken = Thread.detachNewThreadWithResult { store.waitForChange(after: 2, timeout: 60) }
        usleep(200_000)
        try PostgresStore(url: url).commit([.delete(.pin, id: "p1")])
        #expect(woken.value == true, "no wake-up from NOTIFY within 60 s")
        #expect(try store.changes(after: 2).deleted.map(\.id) == ["p1"])
        // Every replica has applied and snapshotted change 3: the log is trimmed through it, and a follower still
        // at 1 must rebuild.
        try store.report(replica: "r1", applied: 3, snapshot: 3)
        #expect(try store.trim(retention: 3_600) == 3)
        #expect(throws: CatalogError.changesTrimmed(after: 1, trimmedThrough: 3)) { try store.changes(after: 1) }
        #expect(try store.changes(after: 3).isEmpty)
    }

    @Test func aURLThatIsNotPostgreSQLIsRefusedWithTheReason() {
        for (url, reason) in [
            ("mysql://u@h/db", "not a postgresql://"), ("postgresql://u@/db", "no host"), ("postgresql://h:5432/db", "no user"),
            ("postgresql://u@h:5432/", "no database"), ("postgresql://u@h/db?sslmode=require", "sslmode"),
        ] {
            #expect {
                _ = try PostgresStore(url: url)
            } throws: { error in
                "\(error)".contains(reason)
            }
        }
    }

    @Test func writesOnOneReplicaReachTheOthersAndAllMatchTheStore() throws {
        var random = testRandom("writesOnOneReplicaReachTheOthersAndAllMatchTheStore")
        let seed = random.next()
        let url = try TestPostgres.database()
        let replicas = try (0..<3).map { _ in try Self.engine(url) }
        var pins: [String] = []
        for step in 0..<300 {
            let writer = replicas[Int(random.next() % 3)]
            switch random.next() % 7 {
            case 0: try? writer.deletePOI(id: "r\(random.next() % 120)")
            case 1:
                let pin = try writer.createPin(
                    PinInput(
                        uniqueKey: "u\(step % 5)",
                        firstName: "Pin",
                        lastName: "\(step)",
                        mapString: "Helsinki",
                        mediaURL: "",
                        latitude: 60.17 + random.uniform(-0.05...0.05),
                        longitude: 24.94
                    ),
                    owner: step % 3 == 0 ? nil : "user-\(step % 4)"
                )
                pins.append(pin.id)
                // The writer reads its own write at once.
                #expect(writer.pin(id: pin.id) == pin, "SEED=\(seed)")
            case 2 where !pins.isEmpty:
                let id = pins.remove(at: Int(random.next() % UInt64(pins.count)))
                replicas[Int(random.next() % 3)].catchUp()
                try? writer.deletePin(id: id)
            case 3:
                try writer.applyImported((0..<20).map { _ in .poi(Self.poi("r\(random.next() % 120)", &random, name: "Imported")) })
            default:
                let poi = Self.poi("r\(random.next() % 120)", &random)
                try writer.upsertPOI(poi)
                #expect(writer.poi(id: poi.id) == poi, "SEED=\(seed)")
            }
            // Now and then a replica catches up mid-way, so the feed is read from many different points.
            if random.next() % 4 == 0 { replicas[Int(random.next() % 3)].catchUp() }
        }
        for (index, replica) in replicas.enumerated() {
            replica.catchUp()
            #expect(replica.replicationStatus?.applied == (try PostgresStore(url: url).changeSequence().sequence))
            try Self.expectMatches(replica, url, seed: seed, "replica \(index), SEED=\(seed)")
        }
    }

    @Test func aFollowingReplicaAppliesAWriteWithoutBeingAsked() throws {
        let url = try TestPostgres.database()
        let writer = try Self.engine(url)
        let reader = try Self.engine(url)
        // A long poll: only the store's wake-up makes the reader apply the write quickly; still, the test waits
        // for the outcome, not for a deadline.
        reader.startFollowing(as: "reader", timing: .init(poll: 5, report: 0.5))
        defer { reader.stopFollowing() }
        var random = SplitMix64(seed: 7)
        let poi = Self.poi("live", &random)
        try writer.upsertPOI(poi)
        /// Waits until the reader holds `expected` as the POI "live"; false (recorded) after 120 s.
        func readerHolds(_ expected: POIRecord?, after what: String) -> Bool {
            let started = Date()
            while reader.poi(id: "live") != expected {
                guard Date().timeIntervalSince(started) < 120 else {
                    Issue.record("the reader did not apply the \(what) within 120 s; its status: \(String(describing: reader.replicationStatus))")
                    return false
                }
                usleep(10_000)
            }
            return true
        }
        guard readerHolds(poi, after: "write") else { return }
        try writer.deletePOI(id: "live")
        guard readerHolds(nil, after: "delete") else { return }
        #expect(reader.nearby(NearbyQuery(Around(try Coordinate(latitude: poi.lat, longitude: poi.lon), radius: 10), kind: .poi)).results.isEmpty)
    }

    @Test func aReplicaRestartsFromItsSnapshotPlusTheChangesAfterIt() throws {
        var random = testRandom("aReplicaRestartsFromItsSnapshotPlusTheChangesAfterIt")
        let seed = random.next()
        let url = try TestPostgres.database()
        let directory = scratch.url
        let path = directory.appendingPathComponent("replica.snapshot").path
        let other = try Self.engine(url)
        try other.applyImported((0..<400).map { .poi(Self.poi("s\($0)", &random)) })
        do {
            let replica = try Self.engine(url, snapshot: path)
            guard case .rebuilt = replica.startup else {
                Issue.record("expected a build from the store without a snapshot, got \(replica.startup)")
                return
            }
            #expect(try replica.writeSnapshot())
        }
        // Written while the replica is down: updates, deletes, new records.
        for i in 0..<60 {
            if i % 3 == 0 { try other.deletePOI(id: "s\(i)") } else { try other.upsertPOI(Self.poi("s\(i * 7)", &random, name: "Moved")) }
        }
        let restarted = try Self.engine(url, snapshot: path)
        guard case .snapshotAndChanges(let count) = restarted.startup else {
            Issue.record("expected a start from the snapshot plus changes, got \(restarted.startup)")
            return
        }
        #expect(count == 60)
        try Self.expectMatches(restarted, url, seed: seed, "restarted from snapshot, SEED=\(seed)")
        #expect(SearchEngine.tooManyChanges(try PostgresStore(url: url), after: 0) == nil, "400 changed records are few")
        // The log trimmed past the snapshot (every other replica is ahead and the retention is 0): a rebuild.
        let store = try PostgresStore(url: url)
        try store.report(replica: "other", applied: try store.changeSequence().sequence, snapshot: nil)
        try store.trim(retention: 0)
        let rebuilt = try Self.engine(url, snapshot: path)
        guard case .rebuilt(let reason?) = rebuilt.startup, reason.contains("trimmed") else {
            Issue.record("expected a rebuild because the log is trimmed, got \(rebuilt.startup)")
            return
        }
        try Self.expectMatches(rebuilt, url, seed: seed, "rebuilt, SEED=\(seed)")
        // A running replica behind the trimmed log reloads everything.
        let behind = try Self.engine(url)
        try other.upsertPOI(Self.poi("after-trim", &random))
        try store.report(replica: "other", applied: try store.changeSequence().sequence, snapshot: nil)
        try store.trim(retention: 0)
        behind.catchUp()
        #expect(behind.replicationStatus?.reloads == 1)
        try Self.expectMatches(behind, url, seed: seed, "reloaded, SEED=\(seed)")
    }

    @Test func aSnapshotFarBehindTheStoreIsNotPatchedRecordByRecord() throws {
        var random = testRandom("aSnapshotFarBehindTheStoreIsNotPatchedRecordByRecord")
        let seed = random.next()
        let url = try TestPostgres.database()
        let directory = scratch.url
        let path = directory.appendingPathComponent("replica.snapshot").path
        let store = try PostgresStore(url: url)
        try store.commit((0..<100).map { .put(.poi(Self.poi("early\($0)", &random))) })
        #expect(try Self.engine(url, snapshot: path).writeSnapshot())
        // A large import while the replica is down: 60 000 records, more than the 50 000 floor.
        for batch in 0..<12 {
            try store.commit((0..<5_000).map { .put(.poi(Self.poi("bulk\(batch)-\($0)", &random, name: "Bulk"))) })
        }
        let restarted = try Self.engine(url, snapshot: path)
        guard case .rebuilt(let reason?) = restarted.startup, reason.contains("building from the store is faster") else {
            Issue.record("expected a build from the store, got \(restarted.startup)")
            return
        }
        try Self.expectMatches(restarted, url, seed: seed, "rebuilt after a large import, SEED=\(seed)")
    }

    @Test func aPostgreSQLRestartCostsWritesOnlyWhileItIsDown() throws {
        // A server of this test's own, to stop and start on the same port.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("poi-pg-restart-\(UUID().uuidString)").path
        let url = try TestPostgres.shell(TestPostgres.repository + "/scripts/postgres/start", [directory]).trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        let port = try String(contentsOfFile: directory + "/port", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        defer {
            _ = try? TestPostgres.shell(TestPostgres.repository + "/scripts/postgres/stop", [directory])
            try? FileManager.default.removeItem(atPath: directory)
        }
        let a = try Self.engine(url)
        let b = try Self.engine(url)
        var random = SplitMix64(seed: 3)
        let before = Self.poi("before", &random)
        try a.upsertPOI(before)
        try TestPostgres.shell(TestPostgres.repository + "/scripts/postgres/stop", [directory])
        // Reads go on from memory; a write is refused as unavailable (503), not lost silently or answered 500.
        #expect(a.poi(id: "before") == before)
        #expect(throws: SearchError.self) { try a.upsertPOI(Self.poi("during", &random)) }
        do {
            try a.upsertPOI(Self.poi("during", &random))
        } catch {
            guard case .unavailable = error else {
                Issue.record("a write while PostgreSQL is down answered \(error), not .unavailable")
                return
            }
        }
        #expect(a.poi(id: "during") == nil)
        b.catchUp()
        #expect(b.replicationStatus?.connected == false)
        try TestPostgres.shell(TestPostgres.repository + "/scripts/postgres/start", [directory, port])
        let after = Self.poi("after", &random)
        try a.upsertPOI(after)
        b.catchUp()
        #expect(b.replicationStatus?.connected == true)
        #expect(b.poi(id: "after") == after && b.poi(id: "before") == before)
    }
}

extension Thread {
    /// Runs `body` on a new thread; `.value` waits for its result.
    static func detachNewThreadWithResult<T: Sendable>(_ body: @escaping @Sendable () -> T) -> ThreadResult<T> {
        let result = ThreadResult<T>()
        Thread.detachNewThread { result.set(body()) }
        return result
    }
}

final class ThreadResult<T: Sendable>: @unchecked Sendable {
    // SAFETY: `stored` is only touched under `condition`.
    private let condition = NSCondition()
    private var stored: T?

    func set(_ value: T) {
        condition.lock()
        stored = value
        condition.broadcast()
        condition.unlock()
    }

    var value: T {
        condition.lock()
        defer { condition.unlock() }
        while stored == nil { condition.wait() }
        return stored!
    }
}
