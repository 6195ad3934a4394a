import Foundation
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

    /// A change file's transaction (`updateOSM`) leaves its checkpoint to the background instead of paying for it in
    /// the call, and the writer's automatic checkpoint is back for every other write. Once `waitForCheckpoints` returns,
    /// the database file alone holds the transaction (copied without its log, it answers the same), and a later write
    /// on the writer runs with SQLite's automatic checkpoint as before.
    @Test func aChangeFilesCheckpointIsLeftToTheBackground() throws {
        let path = scratch.file("checkpoint.sqlite")
        let store = try CatalogStore(path: path)
        try store.checkpoint()  // the tables in the file: what the copy lacks below is the transaction's
        let records = (0..<400).map { i in
            POIRecord(id: "osm-n\(i)", name: "Kahvila \(i)", category: "food.cafe", lat: 60 + Double(i) / 1000, lon: 24.94)
        }
        let written = try store.updateOSM { mirror in
            #expect(try Int.fetchOne(mirror.db, sql: "PRAGMA wal_autocheckpoint") == 0, "the automatic checkpoint in the transaction")
            try mirror.commit(records.map { .put(.poi($0)) })
            var state = OSMMirrorState()
            state.sequence = 7
            try mirror.setState(state)
        }
        #expect(written.after.sequence == written.before.sequence + 1)
        #expect(try store.write { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") } == CatalogStore.autocheckpointPages)
        let failure = store.waitForCheckpoints()
        #expect(failure == nil, "the background checkpoint failed: \(failure ?? "")")

        let copy = scratch.file("checkpoint-copy.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let copied = try DatabaseQueue(path: copy)
        let count = try copied.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM poi WHERE id LIKE 'osm-n%'") }
        #expect(count == records.count, "the database file alone holds \(count ?? -1) of the transaction's \(records.count) POIs")
        #expect(try copied.read { db in try OSMMirror.state(db)?.sequence } == 7, "the file alone holds the mirror's state")
    }
}
