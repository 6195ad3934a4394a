import GRDB
import Records
import TestSupport
import Testing

@testable import Catalog

@Suite struct CatalogStoreDurabilityTests {
    let scratch = ScratchDirectory("poi-durability")

    /// The connection that commits the writes runs with `synchronous = FULL` (2), so each commit fsyncs the WAL
    /// before a write is acknowledged — on a new file and on one opened again, before and after a commit. GRDB turns
    /// WAL on after the configuration's `prepareDatabase` has run and sets `synchronous = NORMAL` (1) with it, which
    /// syncs only at checkpoints: what the store had from its first version until this test.
    @Test func theWriterFsyncsEveryCommit() throws {
        let path = scratch.file("durable.sqlite")
        for opening in ["new file", "opened again"] {
            let store = try CatalogStore(path: path)
            let before = try store.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
            try store.commit([.put(.poi(POIRecord(id: "p-\(opening)", name: "Kahvila", category: "food.cafe", lat: 60.17, lon: 24.94)))])
            let after = try store.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
            #expect(before == 2, "synchronous on the writer of a \(opening) before a commit (2 is FULL)")
            #expect(after == 2, "synchronous on the writer of a \(opening) after a commit (2 is FULL)")
            #expect(try store.write { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
        }
    }
}
