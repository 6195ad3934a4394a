import Foundation
import Gazetteer
import SearchEngine
import Startup
import TestSupport
import Testing

/// The start-up assembly every process uses (Sources/Startup): what it opens, from where, and its errors.
@Suite struct StartupTests {
    let scratch = ScratchDirectory("poi-startup")

    @Test func aDatabaseOpensFromTheRecordsThenFromItsSnapshot() throws {
        let db = scratch.file("s.sqlite")
        let data = scratch.file("p.jsonl")
        try """
        {"id":"1","name":"Cafe Java","category":"food.cafe","lat":60.1700,"lon":24.9380}
        {"id":"2","name":"Kahvila Kuu","category":"food.cafe","lat":60.1720,"lon":24.9400}
        """.write(toFile: data, atomically: true, encoding: .utf8)
        let imported = try CLI.run(["import", data, "--db", db])
        try #require(imported.status == 0, "\(imported.stderr)")
        let sources = DataSources(db: db)
        #expect(sources.snapshotPath == db + ".snapshot")
        // The gazetteer's snapshot is shared by every database (it depends on the data files alone).
        #expect(sources.gazetteerSnapshotPath == Gazetteer.sharedSnapshotPath(directory: sources.dataDirectory))
        #expect(sources.gazetteerSnapshotPath?.contains("/gazetteer-") == true)
        try? FileManager.default.removeItem(atPath: db + ".snapshot")
        let first = try sources.openEngine(snapshot: .now)
        guard case .rebuilt = first.startup else {
            Issue.record("without a snapshot the indexes are built from the records, not \(first.startup)")
            return
        }
        #expect(first.counts.pois == 2)
        let second = try sources.openEngine(snapshot: .now)
        #expect(second.startup == .snapshot, "the snapshot written by the first open is read by the second")
        #expect(second.poi(id: "2")?.name == "Kahvila Kuu")
    }

    @Test func mistakesAreNamed() throws {
        #expect(throws: StartupError.self) { try DataSources(db: scratch.file("missing.sqlite")).openEngine() }
        do {
            _ = try DataSources.checkedStoreURL(store: "mysql://x/y", db: nil)
            Issue.record("a MySQL URL was taken for a PostgreSQL store")
        } catch {
            if case .usage(let message) = error {
                #expect(message.hasPrefix("--store"), "\(message)")
            } else {
                Issue.record("not a usage error: \(error)")
            }
        }
        #expect(throws: StartupError.self) { try DataSources.checkedStoreURL(store: "postgresql://h/d", db: "x.sqlite") }
        #expect(DataSources(db: "x.sqlite", noSnapshot: true).snapshotPath == nil)
    }
}
