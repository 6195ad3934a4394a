import Catalog
import Foundation
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
        #expect(engine.startup == .snapshot, "SEED=\(seed): \(engine.startup); \(run.stdout)")
    }
}
