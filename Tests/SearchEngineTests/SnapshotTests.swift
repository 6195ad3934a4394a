import API
import Catalog
import Foundation
import GeoCore
import Records
import SnapshotFile
import Synchronization
import TestSupport
import Testing

@testable import SearchEngine

/// The index snapshot: an engine read from it answers exactly as the engine it was taken from (and as a fresh build
/// from the store), and a snapshot that is missing, damaged, of another format, or behind the store is rebuilt
/// from the store, never served.
@Suite struct SnapshotTests {
    /// This test's files, removed when it ends.
    let scratch = ScratchDirectory("poi-snapshot")

    /// Every kind of query, drawn from `seed`, answered and encoded as the API would: equal arrays mean
    /// byte-identical answers.
    /// A new SQLite database in the scratch directory, its store, and the snapshot policy that keeps the index
    /// snapshot beside it and writes it only when asked (`every: 0`).
    func storeWithSnapshot(_ name: String) throws -> (database: String, store: CatalogStore, policy: SearchEngine.SnapshotPolicy) {
        let database = scratch.url.appendingPathComponent(name).path
        return (database, try CatalogStore(path: database), SearchEngine.SnapshotPolicy.beside(database: database, every: 0))
    }

    static func answers(_ engine: SearchEngine, seed: UInt64, ids: [String]) throws -> [String] {
        var random = SplitMix64(seed: seed)
        let encoder = APIEncoder()
        let words = ["cafe", "java", "kahv", "pizza bar", "咖啡", "中关村", "coffee", "sushii", "harbour market", "university", "星巴克咖啡", "bus stop"]
        let centres = [(60.17, 24.94), (39.98, 116.31), (0.0, 179.99), (-33.87, 151.2)]
        var out: [String] = []
        func text(_ page: Page) -> String { String(decoding: encoder.page(page, next: page.next.map { "\($0)" }), as: UTF8.self) }
        for round in 0..<120 {
            let c = centres[Int(random.next() % UInt64(centres.count))]
            let origin = try Coordinate(latitude: c.0 + random.uniform(-0.1...0.1), longitude: min(180, c.1 + random.uniform(-0.1...0.1)))
            let word = words[Int(random.next() % UInt64(words.count))]
            let kind: KindFilter = [.poi, .pin, .all][round % 3]
            out.append(text(engine.nearby(NearbyQuery(Around(origin, radius: round % 2 == 0 ? 5_000 : nil), kind: kind, limit: 15))))
            out.append(text(engine.nearby(NearbyQuery(Around(origin), text: word, category: round % 4 == 0 ? "food" : nil, kind: kind, limit: 10))))
            out.append(text(try engine.search(SearchQuery(text: word, origin: round % 2 == 0 ? origin : nil, kind: kind, limit: 20))))
            let box = try BoundingBox(
                west: max(-180, origin.longitude - 0.2),
                south: origin.latitude - 0.1,
                east: min(180, origin.longitude + 0.2),
                north: origin.latitude + 0.1
            )
            out.append(text(engine.within(WithinQuery(.box(box), text: round % 3 == 0 ? word : nil, kind: kind, limit: 25))))
            out.append(
                String(decoding: encoder.clusters(try engine.clusters(ClusterQuery(bbox: box, precision: 4 + round % 4, kind: kind))), as: UTF8.self)
            )
            let id = ids[Int(random.next() % UInt64(ids.count))]
            out.append("\(String(describing: engine.poi(id: id))) \(String(describing: engine.pin(id: id)))")
        }
        out.append("\(engine.counts)")
        return out
    }

    /// The `i`th drawn pin, at `p`'s position: fixed timestamps, owned and unowned (the owner must survive the snapshot
    /// and the store).
    static func pin(_ id: String, _ i: Int, at p: POIRecord) -> PinRecord {
        PinRecord(
            id: id,
            uniqueKey: "u\(i % 7)",
            firstName: "Kahvila",
            lastName: "\(i)",
            mapString: "Helsinki",
            mediaURL: "",
            lat: p.lat,
            lon: p.lon,
            createdAt: "2026-01-01T00:00:00.000Z",
            updatedAt: "2026-01-01T00:00:\(String(format: "%02d", i % 60)).000Z",
            owner: i % 3 == 0 ? nil : "user-\(i % 5)"
        )
    }

    /// Random writes of every kind (creates, moves, renames, deletes of POIs and pins), the same for a given seed.
    static func write(_ engine: SearchEngine, seed: UInt64, count: Int, pins: inout [String]) throws {
        var random = SplitMix64(seed: seed)
        let fresh = randomPOIs(count, &random)
        for (i, p) in fresh.enumerated() {
            switch random.next() % 6 {
            case 0: try? engine.deletePOI(id: "t\(random.next() % 2_000)")
            case 1:
                // Through the import path, so that ids and timestamps are the same for the same seed.
                let pin = pin("pin-\(seed % 1_000)-\(i)", i, at: p)
                try engine.applyImported([.pin(pin)])
                pins.append(pin.id)
            case 2 where !pins.isEmpty:
                try? engine.deletePin(id: pins.removeFirst())
            default:
                var moved = p
                moved.id = "t\(random.next() % 2_500)"
                try engine.upsertPOI(moved)
            }
        }
    }

    @Test func aRestoredStateAnswersAndChangesLikeTheOriginal() throws {
        var random = testRandom("aRestoredStateAnswersAndChangesLikeTheOriginal")
        let seed = random.next()
        let original = SearchEngine(pois: randomPOIs(2_000, &random), taxonomy: testTaxonomy)
        var pins: [String] = []
        // Live writes first, so the snapshot holds deltas too: unsorted terms, moved and removed grid entries,
        // freed R-tree slots, pins.
        try SnapshotTests.write(original, seed: seed, count: 600, pins: &pins)
        let directory = scratch.url
        let path = directory.appendingPathComponent("s.snapshot").path
        let sequence = ChangeSequence(identity: "test", sequence: 7)
        var state = original.read { $0 }
        state.sequence = sequence
        try state.writeSnapshot(to: path)
        let restored = SearchEngine(state: try EngineState.readSnapshot(from: path, expecting: sequence), taxonomy: testTaxonomy)
        let restoredState = restored.read { $0 }
        // Served from the file's mapping, not copied (until a write copies what it changes).
        #expect(restoredState.records.isMapped && restoredState.meta.isMapped)
        #expect((0..<Int32(restoredState.text.terms.count)).contains { restoredState.text.postings(of: $0).isMapped })
        try restoredState.poiSpatial.tree.checkInvariants()
        try restoredState.pinSpatial.tree.checkInvariants()
        try restoredState.text.checkInvariants()
        let ids = (0..<2_600).map { "t\($0)" } + pins
        #expect(try SnapshotTests.answers(restored, seed: seed, ids: ids) == SnapshotTests.answers(original, seed: seed, ids: ids), "SEED=\(seed)")
        // The same writes to both: the restored dictionaries and deltas must take them as the original does.
        var pinsA = pins
        var pinsB = pins
        try SnapshotTests.write(original, seed: seed &+ 1, count: 400, pins: &pinsA)
        try SnapshotTests.write(restored, seed: seed &+ 1, count: 400, pins: &pinsB)
        let after = ids + pinsA
        #expect(
            try SnapshotTests.answers(restored, seed: seed &+ 2, ids: after) == SnapshotTests.answers(original, seed: seed &+ 2, ids: after),
            "SEED=\(seed)"
        )
    }

    @Test func startUpUsesTheSnapshotOnlyWhileItMatchesTheStore() throws {
        var random = testRandom("startUpUsesTheSnapshotOnlyWhileItMatchesTheStore")
        let seed = random.next()
        let directory = scratch.url
        let (database, store, policy) = try storeWithSnapshot("s.sqlite")
        let first = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        #expect(first.startup == .rebuilt(reason: "no snapshot at \(policy.path)"))
        try first.applyImported(randomPOIs(1_500, &random).map { .poi($0) })
        var pins: [String] = []
        try SnapshotTests.write(first, seed: seed, count: 300, pins: &pins)
        #expect(first.storeSequence == (try store.changeSequence()))
        let built = try SnapshotTests.answers(first, seed: seed, ids: (0..<2_600).map { "t\($0)" } + pins)
        #expect(!first.read { $0.records.isMapped })
        #expect(try first.writeSnapshot())
        #expect(first.read { $0.records.isMapped }, "once written, the snapshot is what the engine serves")
        #expect(try SnapshotTests.answers(first, seed: seed, ids: (0..<2_600).map { "t\($0)" } + pins) == built, "SEED=\(seed)")
        #expect(try first.writeSnapshot() == false, "an unchanged state is not written again")

        let fromSnapshot = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        #expect(fromSnapshot.startup == .snapshot)
        let ids = (0..<2_600).map { "t\($0)" } + pins
        #expect(try SnapshotTests.answers(fromSnapshot, seed: seed, ids: ids) == SnapshotTests.answers(first, seed: seed, ids: ids), "SEED=\(seed)")

        // A fresh build from the store, and a snapshot of that build: byte-identical answers.
        let fresh = try SearchEngine(store: store, taxonomy: testTaxonomy)
        #expect(fresh.startup == .rebuilt(reason: nil))
        let freshPolicy = SearchEngine.SnapshotPolicy(path: directory.appendingPathComponent("fresh.snapshot").path, every: 0)
        let rebuilt = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: freshPolicy)
        #expect(try rebuilt.writeSnapshot())
        let reread = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: freshPolicy)
        #expect(reread.startup == .snapshot)
        #expect(try SnapshotTests.answers(reread, seed: seed, ids: ids) == SnapshotTests.answers(fresh, seed: seed, ids: ids), "SEED=\(seed)")

        // One more write through an engine: the old snapshot is behind the store and is not used.
        try fromSnapshot.upsertPOI(poi("late", "Late Cafe", "food.cafe", 60.2, 24.9))
        let behind = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        guard case .rebuilt(let reason?) = behind.startup else {
            Issue.record("a stale snapshot was read: \(behind.startup)")
            return
        }
        #expect(reason.contains("out of date"), "\(reason)")
        #expect(behind.poi(id: "late") != nil)

        // A write by someone else (another process's import): the engine no longer knows where it stands and writes
        // no snapshot that would claim it.
        try store.upsert(poi("behind-its-back", "Other", "food.cafe", 61, 25))
        try behind.upsertPOI(poi("own", "Own", "food.cafe", 60.3, 24.9))
        #expect(behind.storeSequence == nil)
        #expect(try behind.writeSnapshot() == false)

        // Background writes after `every` transactions.
        let eager = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: .beside(database: database, every: 3))
        #expect(try eager.writeSnapshot())
        for i in 0..<2 { try eager.upsertPOI(poi("bg\(i)", "Background \(i)", "food.cafe", 60.1, 24.8)) }
        eager.waitForSnapshot()
        #expect(try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy).startup != .snapshot, "written before 3 writes")
        try eager.upsertPOI(poi("bg2", "Background 2", "food.cafe", 60.1, 24.8))
        eager.waitForSnapshot()
        let next = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        #expect(next.startup == .snapshot)
        #expect(next.poi(id: "bg2") != nil && next.poi(id: "behind-its-back") != nil)
    }

    /// A background snapshot waits out its pause after the last one (`SnapshotPolicy.pause` times as long as that one
    /// took), however many transactions are due; with no pause, the next due transaction starts one. The pause is
    /// made long (a million times the last snapshot's time) so that the test does not depend on the clock.
    @Test func aBackgroundSnapshotWaitsOutItsPause() throws {
        for (pause, expectsSecond) in [(1e6, false), (0.0, true)] {
            let (database, store, policy) = try storeWithSnapshot("pause-\(expectsSecond).sqlite")
            var eager = policy
            (eager.every, eager.pause) = (1, pause)
            let engine = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: eager)
            try engine.upsertPOI(poi("first", "First", "food.cafe", 60.1, 24.8))
            engine.waitForSnapshot()
            #expect(try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy).startup == .snapshot, "pause \(pause): the first")
            try engine.upsertPOI(poi("second", "Second", "food.cafe", 60.2, 24.8))
            engine.waitForSnapshot()
            let restarted = try SearchEngine(store: CatalogStore(path: database), taxonomy: testTaxonomy, snapshot: policy)
            #expect((restarted.startup == .snapshot) == expectsSecond, "pause \(pause): the second write \(expectsSecond ? "snapshotted" : "waits")")
        }
    }

    /// The background snapshot's thread lowers its own priority to nice 19, and only its own: the thread that made
    /// it keeps its nice value (on Linux the nice value is a thread's).
    @Test func theSnapshotThreadAloneRunsAtNice19() throws {
        #if os(Linux)
        let before = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        let seen = Mutex<Int32?>(nil)
        let thread = Thread {
            SearchEngine.lowerCallingThreadPriority()
            seen.withLock { $0 = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
        }
        thread.start()
        while seen.withLock({ $0 }) == nil { usleep(1_000) }
        #expect(seen.withLock { $0 } == 19)
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == before)
        #endif
    }

    /// A change file applied by the CLI brings the index snapshot forward by the records it committed
    /// (`SearchEngine.forwardSnapshot`) instead of leaving it behind the store: kept beside it while they are few, and
    /// the snapshot written whole again with them past the limit. The next start maps it, and it answers as the old
    /// snapshot does with the same writes made through an engine, and holds every record the store holds.
    @Test func aSnapshotBroughtForwardByCommittedChangesIsTheStoresState() throws {
        var random = testRandom("aSnapshotBroughtForwardByCommittedChangesIsTheStoresState")
        let seed = random.next()
        let directory = scratch.url
        let (_, store, policy) = try storeWithSnapshot("f.sqlite")
        try store.commit(randomPOIs(2_000, &random).map { .put(.poi($0)) })
        #expect(try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy).writeSnapshot())
        let first = try store.changeSequence()
        let aside = directory.appendingPathComponent("before.snapshot").path
        try FileManager.default.copyItem(atPath: policy.path, toPath: aside)
        let written = SearchEngine(state: try EngineState.readSnapshot(from: aside, expecting: first), taxonomy: testTaxonomy)
        let ids = (0..<2_500).map { "t\($0)" } + (0..<1_200).map { "pin-\($0)" }
        var pins: [String] = []
        var kept = 0
        // Three files' changes committed behind the snapshot's back, as a change file commits them: POIs made, moved
        // and deleted, pins put and deleted. The first two are kept beside the snapshot; the third passes the limit.
        for (file, limit) in [(0, 1_000), (1, 1_000), (2, 1_000)] {
            var changes: [StoreChange] = []
            for (i, p) in randomPOIs(400, &random).enumerated() {
                switch random.next() % 5 {
                case 0: changes.append(.delete(.poi, id: "t\(random.next() % 2_000)"))
                case 1:
                    let pin = Self.pin("pin-\(file * 400 + i)", i, at: p)
                    changes.append(.put(.pin(pin)))
                    pins.append(pin.id)
                case 2 where !pins.isEmpty: changes.append(.delete(.pin, id: pins.removeFirst()))
                default:
                    var moved = p
                    moved.id = "t\(random.next() % 2_500)"
                    changes.append(.put(.poi(moved)))
                }
            }
            let sequences = try store.commit(changes)
            let how = try SearchEngine.forwardSnapshot(at: policy.path, by: changes, from: sequences.before, to: sequences.after, limit: limit)
            kept += changes.count
            let folded = kept > limit
            #expect(how?.hasPrefix(folded ? "written again" : "\(kept) changed records kept") == true, "\(String(describing: how))")
            let forward = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
            #expect(forward.startup == (folded ? .snapshot : .snapshotAndKeptChanges(kept)), "file \(file): \(forward.startup)")
            // The same writes made through an engine over the old snapshot: the same answers, byte for byte.
            for change in changes {
                switch change {
                case .put(let record): try written.applyImported([record])
                case .delete(.poi, let id): try? written.deletePOI(id: id)
                case .delete(.pin, let id): try? written.deletePin(id: id)
                }
            }
            #expect(
                try SnapshotTests.answers(forward, seed: seed, ids: ids) == SnapshotTests.answers(written, seed: seed, ids: ids),
                "file \(file), SEED=\(seed)"
            )
            // And every record as the store has it.
            let fresh = try SearchEngine(store: store, taxonomy: testTaxonomy)
            for id in ids {
                #expect(forward.poi(id: id) == fresh.poi(id: id) && forward.pin(id: id) == fresh.pin(id: id), "file \(file), SEED=\(seed) \(id)")
            }
            #expect(forward.counts == fresh.counts)
        }
        // Changes that do not start where the snapshot stands are not kept: the store moved behind its back.
        let late = try store.commit([.delete(.poi, id: "t1")])
        let sequences = try store.commit([.delete(.poi, id: "t2")])
        #expect(try SearchEngine.forwardSnapshot(at: policy.path, by: [.delete(.poi, id: "t2")], from: sequences.before, to: sequences.after) == nil)
        #expect(try SearchEngine.forwardSnapshot(at: policy.path, by: [], from: first, to: late.after) == nil)
        let behind = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        guard case .rebuilt = behind.startup else {
            Issue.record("a snapshot behind the store with no changes to bring it there was served: \(behind.startup)")
            return
        }
        #expect(behind.poi(id: "t1") == nil && behind.poi(id: "t2") == nil)
    }

    /// Changes kept beside a snapshot are applied only over the snapshot they were kept for, and only when they bring
    /// it to the store: not again over a snapshot written since, nor when the store has moved past them.
    @Test func changesKeptBesideASnapshotAreUsedOnlyWhenTheyBringItToTheStore() throws {
        var random = testRandom("changesKeptBesideASnapshotAreUsedOnlyWhenTheyBringItToTheStore")
        let (_, store, policy) = try storeWithSnapshot("k.sqlite")
        try store.commit(randomPOIs(300, &random).map { .put(.poi($0)) })
        #expect(try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy).writeSnapshot())
        var made = randomPOIs(1, &random)[0]
        made.id = "made"
        let changes: [StoreChange] = [.delete(.poi, id: "t5"), .put(.poi(made))]
        let sequences = try store.commit(changes)
        #expect(try SearchEngine.forwardSnapshot(at: policy.path, by: changes, from: sequences.before, to: sequences.after) != nil)
        // A line cut short, as a stop while appending leaves it: the file is not used.
        let file = policy.path + ".changes"
        let whole = try Data(contentsOf: URL(fileURLWithPath: file))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"after":{"identity":"#.utf8))
        try handle.close()
        guard case .rebuilt = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy).startup else {
            Issue.record("changes kept beside the snapshot with a line cut short were used")
            return
        }
        try whole.write(to: URL(fileURLWithPath: file))
        let kept = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        #expect(kept.startup == .snapshotAndKeptChanges(2), "\(kept.startup)")
        #expect(kept.poi(id: "t5") == nil && kept.poi(id: "made") == made)
        // A server writes its snapshot at the store's sequence: the changes beside it, kept for the one before, are
        // not applied again.
        #expect(try kept.writeSnapshot())
        let again = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        #expect(again.startup == .snapshot, "\(again.startup)")
        #expect(again.counts == kept.counts && again.poi(id: "made") == made)
        // A write the changes do not hold: the start builds the index from the store.
        try store.commit([.delete(.poi, id: "t6")])
        let behind = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        guard case .rebuilt = behind.startup else {
            Issue.record("expected a build from the store, got \(behind.startup)")
            return
        }
        #expect(behind.poi(id: "t6") == nil && behind.poi(id: "made") == made)
    }

    @Test func damagedOrForeignSnapshotsAreRebuiltNotServed() throws {
        var random = testRandom("damagedOrForeignSnapshotsAreRebuiltNotServed")
        let (_, store, policy) = try storeWithSnapshot("d.sqlite")
        let engine = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        try engine.applyImported(randomPOIs(800, &random).map { .poi($0) })
        _ = try engine.createPin(PinInput(uniqueKey: "u", firstName: "A", lastName: "B", mapString: "", mediaURL: "", latitude: 1, longitude: 2))
        var state = engine.read { $0 }
        let regions = try state.writeSnapshot(to: policy.path)
        let good = try Data(contentsOf: URL(fileURLWithPath: policy.path))
        let expected = try SnapshotTests.answers(engine, seed: 1, ids: ["t1", "t2"])

        func opensRebuilt(_ bytes: Data, _ what: String, because phrase: String) throws {
            try bytes.write(to: URL(fileURLWithPath: policy.path))
            let opened = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
            guard case .rebuilt(let reason?) = opened.startup else {
                Issue.record("\(what): the snapshot was read (\(opened.startup))")
                return
            }
            #expect(reason.contains(phrase), "\(what): \(reason)")
            #expect(try SnapshotTests.answers(opened, seed: 1, ids: ["t1", "t2"]) == expected, "\(what)")
        }

        // Cut at every region boundary (and inside the header, and one byte short).
        let header = SnapshotLayout.headerSize
        for cut in [0, 8, header - 1, good.count - 1] + regions.map({ header + $0 }) + regions.map({ header + $0 + 5 }) where cut < good.count {
            try opensRebuilt(good.prefix(cut), "truncated to \(cut) bytes", because: cut < header ? "shorter than the header" : "payload bytes")
        }
        var flipped = good
        flipped[header + regions[regions.count / 2] + 3] ^= 0x40
        try opensRebuilt(flipped, "one byte flipped", because: "checksum")
        var magic = good
        magic[0] = UInt8(ascii: "X")
        try opensRebuilt(magic, "bad magic", because: "another format")
        var version = good
        version[8] &+= 1
        try opensRebuilt(version, "another format version", because: "format version")

        // A snapshot of another database with the same change count.
        state.sequence = ChangeSequence(identity: "someone-else", sequence: state.sequence!.sequence)
        try state.writeSnapshot(to: policy.path)
        try opensRebuilt(try Data(contentsOf: URL(fileURLWithPath: policy.path)), "another database", because: "another database")

        // A writer killed before its rename leaves only its temporary file: the target is missing (rebuild), and the
        // next writer removes the leftover.
        try? FileManager.default.removeItem(atPath: policy.path)
        let leftover = policy.path + ".tmp-999999"
        try good.prefix(good.count / 2).write(to: URL(fileURLWithPath: leftover))
        let afterCrash = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        #expect(afterCrash.startup == .rebuilt(reason: "no snapshot at \(policy.path)"))
        #expect(try afterCrash.writeSnapshot())
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy).startup == .snapshot)
    }
}
