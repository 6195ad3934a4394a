import Catalog
import Foundation
import Gazetteer
import SearchEngine
import TestSupport
import Testing

/// `poi replicate` as a first run takes it: the data imported from an extract that does not say its sequence, `--from`
/// naming it.
@Suite struct ReplicateCommandTests {
    let scratch = ScratchDirectory("poi-replicate-command")

    /// Keeping the feed's state with the data is a write of its own, before the first file's: the index snapshot is
    /// brought past both, with no file to apply or with one, so that the next `poi serve` maps it. Before, a first run
    /// left the snapshot one change behind the store, and the next start built the index from the store.
    @Test(arguments: [0, 1]) func aFirstRunFromASequenceLeavesTheSnapshotCurrent(files: Int) throws {
        let seed = testSeed("aFirstRunFromASequenceLeavesTheSnapshotCurrent") % 1_000_000 + UInt64(files)
        let db = scratch.file("helsinki-\(files).sqlite")
        let imported = try CLI.run(["import", Repository.path("data/Helsinki.osm.pbf"), "--db", db])
        try #require(imported.status == 0, "\(imported.stderr)")
        let feed = scratch.file("feed-\(files)")
        if files > 0 {
            _ = try PythonScript.run([
                "scripts/osm/changes.py", Repository.path("data/Helsinki.osm.pbf"), feed, "--files", "\(files)", "--changes", "100", "--seed",
                "\(seed)",
            ])
        } else {
            try FileManager.default.createDirectory(atPath: feed, withIntermediateDirectories: true)
            try Data("sequenceNumber=0\ntimestamp=2026-01-01T00\\:00\\:00Z\n".utf8).write(to: URL(fileURLWithPath: feed + "/state.txt"))
        }
        let run = try CLI.run(["replicate", feed, "--db", db, "--from", "0", "--catch-up"])
        try #require(run.status == 0, "SEED=\(seed): \(run.stderr)")
        #expect(run.stdout.contains("data at sequence \(files)"), "\(run.stdout)")
        let policy = SearchEngine.SnapshotPolicy.beside(database: db, every: 0)
        let engine = try SearchEngine(store: try CatalogStore(path: db), taxonomy: CategoryTaxonomy(labels: [:]), snapshot: policy)
        // The state write, and the file's records, kept beside the snapshot (`SearchEngine.forwardSnapshot`).
        guard case .snapshotAndKeptChanges = engine.startup else {
            Issue.record("SEED=\(seed): the index was not read from the snapshot and the changes beside it: \(engine.startup); \(run.stdout)")
            return
        }
    }

    /// The bundled Helsinki extract imported into a database named `name`, and a feed of `files` change files of 150
    /// changes drawn against it.
    func importedWithFeed(_ name: String, files: Int, seed: UInt64) throws -> (db: String, feed: String) {
        let db = scratch.file("\(name).sqlite")
        let imported = try CLI.run(["import", Repository.path("data/Helsinki.osm.pbf"), "--db", db])
        try #require(imported.status == 0, "\(imported.stderr)")
        let feed = scratch.file("feed-\(name)")
        _ = try PythonScript.run([
            "scripts/osm/changes.py", Repository.path("data/Helsinki.osm.pbf"), feed, "--files", "\(files)", "--changes", "150", "--seed", "\(seed)",
        ])
        return (db, feed)
    }

    /// Expects every record of `served` to be as an engine built from `store` has it.
    static func expectTheStoresRecords(_ served: SearchEngine, _ store: CatalogStore, _ what: String) throws {
        let fresh = try SearchEngine(store: store, taxonomy: CategoryTaxonomy(labels: [:]), addresses: false)
        var ids: [String] = []
        _ = try store.loadAll(blockSize: 10_000) { block in ids += block.map(\.id) }
        #expect(served.counts == fresh.counts, "\(what): counts")
        #expect(ids.allSatisfy { served.poi(id: $0) == fresh.poi(id: $0) }, "\(what): the POIs")
    }

    /// `poi import x.osc.gz`, one file a run, as a shell loop or a cron job applies a feed: each run keeps what it made
    /// beside the snapshots — the address changes (`SearchEngine.addAddressChanges`) and the records
    /// (`SearchEngine.forwardSnapshot`) — instead of laying them or writing the snapshots whole, and the next start
    /// maps the snapshots and lays them over: the records and addresses the store holds, answered alike.
    @Test func changeFilesImportedOneByOneLeaveSnapshotsTheNextStartMaps() throws {
        let seed = testSeed("changeFilesImportedOneByOneLeaveSnapshotsTheNextStartMaps") % 1_000_000
        let (db, feed) = try importedWithFeed("one-by-one", files: 3, seed: seed)
        let policy = SearchEngine.SnapshotPolicy.beside(database: db, every: 0)
        let taxonomy = CategoryTaxonomy(labels: [:])
        for file in 1...3 {
            let what = "after file \(file) (SEED=\(seed))"
            let run = try CLI.run(["import", feed + String(format: "/000/000/%03d.osc.gz", file), "--db", db])
            try #require(run.status == 0, "\(what): \(run.stderr)")
            #expect(run.stdout.contains("written beside it"), "\(what): \(run.stdout)")
            let store = try CatalogStore(path: db)
            let served = try SearchEngine(store: store, taxonomy: taxonomy, snapshot: policy)
            guard case .snapshotAndKeptChanges = served.startup else {
                Issue.record("\(what): the index was not read from the snapshot and the changes beside it: \(served.startup); \(run.stdout)")
                continue
            }
            #expect(served.addressStartup.contains("laid over it"), "\(what): \(served.addressStartup)")
            try Self.expectTheStoresRecords(served, store, what)
            // The addresses: the store's, answered as a fresh index of them answers.
            let stored = try store.loadAddresses()
            let whole = AddressIndex(stored)
            AddressAnswers.expectSameData(served.addresses.osm.whole, stored, "\(what): the addresses")
            AddressAnswers.expectSameStreets(served.addresses.osm, whole, "\(what): the streets")
            AddressAnswers.expectAlike(AddressBook(osm: served.addresses.osm), whole, stored, seed: seed + UInt64(file), what)
        }
    }

    /// `poi replicate --catch-up` whose changes pass the layer's limit (set low here) at the first file: no file's step
    /// builds the whole address index; it is built once after the files, and the next start reads it from its
    /// snapshot with the records and addresses the store holds.
    @Test func changesPastTheLimitBuildTheWholeIndexOnceAfterTheFiles() throws {
        let seed = testSeed("changesPastTheLimitBuildTheWholeIndexOnceAfterTheFiles") % 1_000_000
        let (db, feed) = try importedWithFeed("past-the-limit", files: 3, seed: seed)
        let what = "SEED=\(seed)"
        let run = try CLI.run(["replicate", feed, "--db", db, "--from", "0", "--catch-up"], environment: ["POI_TEST_ADDRESS_LIMIT": "1"])
        try #require(run.status == 0, "\(what): \(run.stderr)")
        #expect(run.stdout.components(separatedBy: "past the layer's limit").count == 2, "\(what): only the first file passes it: \(run.stdout)")
        #expect(run.stdout.components(separatedBy: "the whole index built again after the files").count == 2, "\(what): built once: \(run.stdout)")
        #expect(!run.stdout.contains("written beside it"), "\(what): no changes written over the base: \(run.stdout)")
        let store = try CatalogStore(path: db)
        let served = try SearchEngine(store: store, taxonomy: CategoryTaxonomy(labels: [:]), snapshot: .beside(database: db, every: 0))
        #expect(served.addressStartup.hasPrefix("read from the snapshot"), "\(what): \(served.addressStartup)")
        try Self.expectTheStoresRecords(served, store, what)
        let stored = try store.loadAddresses()
        AddressAnswers.expectSameData(served.addresses.osm.whole, stored, "\(what): the addresses")
        AddressAnswers.expectSameStreets(served.addresses.osm, AddressIndex(stored), "\(what): the streets")
    }

    /// `poi replicate` following a feed (no `--once`, no `--catch-up`): once it has applied every file there is, it
    /// keeps the records beside the index snapshot and, the changes past the trigger (set low here), builds the whole
    /// address index while it waits — so a stop then (a signal, which runs no clean-up) leaves snapshots the next start
    /// maps, with the records and addresses the store holds.
    @Test func aFollowerStoppedWhileItWaitsLeavesSnapshotsTheNextStartMaps() throws {
        let seed = testSeed("aFollowerStoppedWhileItWaitsLeavesSnapshotsTheNextStartMaps") % 1_000_000
        let (db, feed) = try importedWithFeed("follower", files: 2, seed: seed)
        let policy = SearchEngine.SnapshotPolicy.beside(database: db, every: 0)
        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = ["replicate", feed, "--db", db, "--from", "0", "--interval", "1"]
        process.environment = ProcessInfo.processInfo.environment.merging(["POI_TEST_ADDRESS_TRIGGER": "1"]) { $1 }
        let log = scratch.file("follower.log")
        FileManager.default.createFile(atPath: log, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        (process.standardOutput, process.standardError) = (output, output)
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        // Awaited: both files applied, and the address snapshot written again at the store's addresses with no changes
        // beside it (read without opening an engine, which would write snapshots of its own).
        let store = try CatalogStore(path: db)
        let clock = ContinuousClock()
        let started = clock.now
        func ready() throws -> Bool {
            guard try store.osmMirrorState()?.sequence == 2, let generation = try store.addressGeneration() else { return false }
            guard !FileManager.default.fileExists(atPath: SearchEngine.changesPath(policy.addressPath)) else { return false }
            return (try? AddressIndex.readSnapshot(policy.addressPath, generation: generation)) != nil
        }
        while try !ready() {
            guard process.isRunning, clock.now - started < .seconds(600) else {
                Issue.record(
                    """
                    awaited both files applied and the address index built again between files for \(clock.now - started) \
                    (running: \(process.isRunning), SEED=\(seed)); its output:
                    \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
                    """
                )
                return
            }
            usleep(200_000)
        }
        // Looks at the feed that has nothing new, a few times: the records kept beside the snapshot are not added to.
        let kept = policy.path + ".changes"
        let keptBefore = try Data(contentsOf: URL(fileURLWithPath: kept))
        usleep(3_500_000)
        #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == keptBefore, "the kept records grew while no file came")
        // SIGKILL: no clean-up runs (and a child of the test runner's threads inherits SIGTERM blocked).
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let taxonomy = CategoryTaxonomy(labels: [:])
        let served = try SearchEngine(store: store, taxonomy: taxonomy, snapshot: policy)
        guard case .snapshotAndKeptChanges = served.startup else {
            Issue.record("SEED=\(seed): the index was not read from the snapshot and the changes beside it: \(served.startup)")
            return
        }
        #expect(served.addressStartup == "read from the snapshot", "\(served.addressStartup)")
        try Self.expectTheStoresRecords(served, store, "SEED=\(seed)")
        let stored = try store.loadAddresses()
        AddressAnswers.expectSameData(served.addresses.osm.whole, stored, "the addresses (SEED=\(seed))")
    }
}
