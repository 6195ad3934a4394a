import Catalog
import Foundation
import GeoCore
import Records
import Synchronization
import TestSupport
import Testing

@testable import SearchEngine

/// Group commit (docs/ARCHITECTURE.md, "The walk of a write"): writes queued while a commit runs are committed together by
/// the next one; their checks see the writes queued before them; a commit that fails fails its writes and those
/// queued behind them, and leaves nothing of them in memory. Each test holds the first commit open (in `afterCommit`,
/// after the store's commit and before the state has the write) until the writes it needs are queued, so what is
/// gathered does not depend on timing.
@Suite struct GroupCommitTests {
    let scratch = ScratchDirectory("poi-group-commit")

    static func pin(_ i: Int, latitude: Double = 60.17) -> PinInput {
        PinInput(uniqueKey: "u\(i)", firstName: "F\(i)", lastName: "L", mapString: "", mediaURL: "", latitude: latitude, longitude: 24.94)
    }

    static func poi(_ id: String, name: String = "Cafe") -> POIRecord {
        POIRecord(id: id, name: name, category: "food.cafe", address: nil, city: nil, country: nil, lat: 60.17, lon: 24.94, tags: [:])
    }

    /// Blocks until `condition` holds, polling; records an issue naming what was awaited if it never does (two
    /// minutes: a machine under load is slow, a broken queue never gets there).
    static func await(_ what: String, _ condition: () -> Bool) {
        let deadline = ContinuousClock.now + .seconds(120)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("gave up waiting for \(what)")
                return
            }
            usleep(1_000)
        }
    }

    /// The first commit, held in `afterCommit` until `release` is set.
    final class Gate: Sendable {
        let entered = Atomic<Bool>(false)
        let release = Atomic<Bool>(false)
        let once = Atomic<Bool>(false)

        func hold() {
            guard !once.exchange(true, ordering: .relaxed) else { return }
            entered.store(true, ordering: .releasing)
            GroupCommitTests.await("the test to release the first commit") { release.load(ordering: .acquiring) }
        }
    }

    /// Runs `body` on a thread of its own; the returned group is left when it returns.
    static func spawn(_ body: @escaping @Sendable () -> Void) -> DispatchGroup {
        let group = DispatchGroup()
        group.enter()
        Thread.detachNewThread {
            body()
            group.leave()
        }
        return group
    }

    @Test func writesQueuedDuringACommitAreCommittedTogether() throws {
        let store = try CatalogStore(path: scratch.file("g.sqlite"))
        let engine = try SearchEngine(store: store, taxonomy: testTaxonomy)
        let gate = Gate()
        engine.afterCommit = { gate.hold() }
        let start = try store.changeSequence().sequence
        let made = Mutex<[PinRecord]>([])
        let failures = Mutex<[String]>([])
        @Sendable func create(_ i: Int) {
            do throws(SearchError) {
                let pin = try engine.createPin(Self.pin(i))
                made.withLock { $0.append(pin) }
            } catch {
                failures.withLock { $0.append("pin \(i): \(error)") }
            }
        }
        let first = Self.spawn { create(0) }
        Self.await("the first commit to reach afterCommit") { gate.entered.load(ordering: .acquiring) }
        let behind = (1...7).map { i in Self.spawn { create(i) } }
        Self.await("seven writes to queue behind the first commit") { engine.waitingWrites == 7 }
        gate.release.store(true, ordering: .releasing)
        for group in [first] + behind { group.wait() }

        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        // Two transactions for eight writes: the first, then the seven that waited for it.
        #expect(try store.changeSequence().sequence == start + 2)
        #expect(engine.storeSequence == (try store.changeSequence()), "the state stands at the store's sequence")
        let stored = try store.allPins()
        let pins = made.withLock { $0 }
        #expect(pins.count == 8 && stored.count == 8)
        for pin in pins {
            #expect(engine.pin(id: pin.id) == pin && stored.contains(pin), "pin \(pin.id) is in memory and in the store")
        }
        // Server timestamps follow the order writes were checked in: all distinct.
        #expect(Set(pins.map(\.createdAt)).count == 8)
    }

    @Test func aWriteIsCheckedAgainstTheWritesQueuedBeforeIt() throws {
        let store = try CatalogStore(path: scratch.file("c.sqlite"))
        let engine = try SearchEngine(store: store, taxonomy: testTaxonomy)
        let owned = try engine.createPin(Self.pin(0), owner: "ann")
        let gate = Gate()
        engine.afterCommit = { gate.hold() }
        let first = Self.spawn { _ = try? engine.upsertPOI(Self.poi("other")) }
        Self.await("the first commit to reach afterCommit") { gate.entered.load(ordering: .acquiring) }

        // Each write below queues behind the held commit; the next is checked only once it has.
        let created = Mutex<[Bool]>([])
        let outcomes = Mutex<[String]>([])
        var groups = [first]
        func queue(_ what: String, _ write: @escaping @Sendable () throws(SearchError) -> Void) {
            let before = engine.waitingWrites
            groups.append(
                Self.spawn {
                    do throws(SearchError) {
                        try write()
                        outcomes.withLock { $0.append("\(what): ok") }
                    } catch {
                        outcomes.withLock { $0.append("\(what): \(error)") }
                    }
                }
            )
            Self.await("\(what) to queue") { engine.waitingWrites == before + 1 }
        }
        queue("create x") { () throws(SearchError) in _ = try engine.upsertPOI(Self.poi("x")) }
        // The POI x is only queued: deleting it must find it.
        queue("delete x") { () throws(SearchError) in try engine.deletePOI(id: "x") }
        // And writing it again creates it again.
        queue("create x again") { () throws(SearchError) in
            let (_, wasCreated) = try engine.upsertPOI(Self.poi("x", name: "Second"))
            created.withLock { $0.append(wasCreated) }
        }
        // Ann has one stored pin and one queued: a third is over a quota of two, refused before it queues.
        queue("ann's second pin") { () throws(SearchError) in _ = try engine.createPin(Self.pin(1), owner: "ann", maximumPerOwner: 2) }
        do {
            _ = try engine.createPin(Self.pin(2), owner: "ann", maximumPerOwner: 2)
            Issue.record("a third pin of ann's was taken over a quota of two")
        } catch {
            guard case .quota = error else { throw error }
        }
        // A queued move of ann's first pin keeps its createdAt and owner.
        queue("move ann's pin") { () throws(SearchError) in _ = try engine.updatePin(id: owned.id, Self.pin(0, latitude: 61)) }

        gate.release.store(true, ordering: .releasing)
        for group in groups { group.wait() }
        #expect(
            outcomes.withLock { $0 }.sorted() == ["ann's second pin: ok", "create x again: ok", "create x: ok", "delete x: ok", "move ann's pin: ok"]
        )
        #expect(created.withLock { $0 }.last == true, "x was deleted by a queued write, so writing it again creates it")
        #expect(try engine.poi(id: "x")?.name == "Second" && store.poi(id: "x")?.name == "Second")
        #expect(engine.pinCount(owner: "ann") == 2)
        let moved = try #require(engine.pin(id: owned.id))
        #expect(moved.lat == 61 && moved.createdAt == owned.createdAt && moved.owner == "ann")
        #expect(try store.allPins().contains(moved))
    }

    /// A store whose next commit fails once `failNext` is set, after waiting for a write to queue behind it; the
    /// commits after it succeed.
    final class FailingStore: StoreOfRecord, @unchecked Sendable {
        // SAFETY: `engine` is set once before the writes start.
        let inner: CatalogStore
        let failNext = Atomic<Bool>(false)
        var engine: SearchEngine?

        init(_ inner: CatalogStore) { self.inner = inner }

        var location: String { inner.location }
        var feed: (any ChangeFeed)? { nil }
        func changeSequence() throws(CatalogError) -> ChangeSequence { try inner.changeSequence() }
        func poiCount() throws(CatalogError) -> Int { try inner.poiCount() }
        func loadAll(blockSize: Int, pois: ([POIRecord]) -> Void) throws(CatalogError) -> (pins: [PinRecord], sequence: ChangeSequence) {
            try inner.loadAll(blockSize: blockSize, pois: pois)
        }

        func commit(_ changes: [StoreChange]) throws(CatalogError) -> (before: ChangeSequence, after: ChangeSequence) {
            if failNext.exchange(false, ordering: .acquiringAndReleasing) {
                GroupCommitTests.await("a write to queue behind the failing commit") { engine!.waitingWrites == 1 }
                throw .storage("the disk is full (a test's store)")
            }
            return try inner.commit(changes)
        }
    }

    @Test func aFailedCommitFailsItsWritesAndThoseQueuedBehindThem() throws {
        let catalog = try CatalogStore(path: scratch.file("f.sqlite"))
        let store = FailingStore(catalog)
        let engine = try SearchEngine(store: store, taxonomy: testTaxonomy)
        store.engine = engine
        let gate = Gate()
        engine.afterCommit = { gate.hold() }
        let outcomes = Mutex<[String: String]>([:])
        @Sendable func upsert(_ id: String) {
            do throws(SearchError) {
                _ = try engine.upsertPOI(Self.poi(id))
                outcomes.withLock { $0[id] = "ok" }
            } catch {
                outcomes.withLock { $0[id] = "\(error)" }
            }
        }
        let first = Self.spawn { upsert("a") }
        Self.await("the first commit to reach afterCommit") { gate.entered.load(ordering: .acquiring) }
        let b = Self.spawn { upsert("b") }
        Self.await("b to queue") { engine.waitingWrites == 1 }
        let c = Self.spawn { upsert("c") }
        Self.await("c to queue") { engine.waitingWrites == 2 }
        // b and c are committed together, and that commit fails once d has queued behind them: d was checked
        // against them, so it fails too, though the store would take its own commit.
        store.failNext.store(true, ordering: .releasing)
        gate.release.store(true, ordering: .releasing)
        Self.await("the commit of b and c to start") { engine.waitingWrites == 0 }
        let d = Self.spawn { upsert("d") }
        for group in [first, b, c, d] { group.wait() }

        let seen = outcomes.withLock { $0 }
        #expect(seen["a"] == "ok")
        for id in ["b", "c", "d"] {
            #expect(seen[id]?.contains("the disk is full") == true, "\(id): \(seen[id] ?? "no outcome")")
            #expect(try engine.poi(id: id) == nil && catalog.poi(id: id) == nil, "\(id) is neither in memory nor stored")
        }
        #expect(try engine.poi(id: "a") != nil && catalog.poi(id: "a") != nil)
        // The queue works again, and the state still stands at the store's sequence.
        upsert("e")
        #expect(outcomes.withLock { $0["e"] } == "ok" && engine.poi(id: "e") != nil)
        #expect(engine.storeSequence == (try catalog.changeSequence()))
    }
}
