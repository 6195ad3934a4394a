import Foundation
import GRDB
import OSM
import TestSupport
import Testing

@testable import Catalog
@testable import Records

/// The mirror's block tables and member rows as change files leave them (`OSMMirror`), read back from the store.
@Suite struct OSMMirrorBlockTests {
    /// Rows of a block table: (first id, count).
    static func blocks(_ store: CatalogStore, _ table: String) throws -> [(first: Int64, count: Int)] {
        try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT first, count FROM \(table) ORDER BY first").map { ($0[0], $0[1]) }
        }
    }

    /// Objects created past the last block (as every new object of a feed is) go into it; at the end of the
    /// transaction a block grown past twice its table's size is split — ways at twice `WayBlock.size`, not at the
    /// nodes' — and every object is still found.
    @Test func aGrownBlockIsSplitAtItsOwnTablesSize() throws {
        let scratch = ScratchDirectory("poi-mirror-blocks")
        let store = try CatalogStore(path: scratch.file("mirror.sqlite"))
        let (ways, nodes) = (5 * WayBlock.size + 3, 5 * NodeBlock.size + 7)
        for batch in 0..<3 {
            _ = try store.updateOSM { mirror in
                for id in Int64(batch * nodes + 1)...Int64((batch + 1) * nodes) {
                    try mirror.setNode(id, latitude: Int32(id), longitude: -Int32(id), number: -1)
                }
                for id in Int64(batch * ways + 1)...Int64((batch + 1) * ways) {
                    try mirror.putWay(id, refs: [id, id + 1], tags: nil)
                }
            }
        }
        for (table, size, total) in [("osm_way_block", WayBlock.size, 3 * ways), ("osm_node_block", NodeBlock.size, 3 * nodes)] {
            let rows = try Self.blocks(store, table)
            #expect(rows.reduce(0) { $0 + $1.count } == total, "\(table): every object kept")
            #expect(rows.allSatisfy { $0.count <= 2 * size }, "\(table): blocks of \(rows.map(\.count)), size \(size)")
        }
        let (foundWays, foundNodes) = try store.updateOSM { mirror in
            (
                try (Int64(1)...Int64(3 * ways)).map { try mirror.way($0)?.refs },
                try (Int64(1)...Int64(3 * nodes)).map { try mirror.node($0)?.latitude }
            )
        }.value
        #expect(foundWays == (Int64(1)...Int64(3 * ways)).map { [$0, $0 + 1] })
        #expect(foundNodes == (Int64(1)...Int64(3 * nodes)).map { Int32($0) })
    }

    /// A multipolygon put again or deleted leaves member rows for exactly its way members now (found by relation
    /// through the index of migration v12), and other relations' rows as they were.
    @Test func aRelationsMemberRowsFollowItsMembers() throws {
        let scratch = ScratchDirectory("poi-mirror-members")
        let store = try CatalogStore(path: scratch.file("mirror.sqlite"))
        func way(_ ref: Int64) -> OSMRelation.Member { OSMRelation.Member(type: .way, ref: ref, role: "outer") }
        let tags = [OSMTag(key: "type", value: "multipolygon")]
        _ = try store.updateOSM { mirror in
            try mirror.putRelation(1, members: [way(10), way(11), OSMRelation.Member(type: .node, ref: 10, role: "")], tags: tags)
            try mirror.putRelation(2, members: [way(11), way(12)], tags: tags)
        }
        _ = try store.updateOSM { mirror in
            try mirror.putRelation(1, members: [way(12), way(13)], tags: tags)
            try mirror.deleteRelation(2)
            try mirror.putRelation(3, members: nil, tags: nil)
        }
        let using = try store.updateOSM { mirror in try (Int64(10)...13).map { try mirror.relations(using: $0) } }.value
        #expect(using == [[], [], [1], [1]], "the relations using ways 10 to 13")
        let plan = try store.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN DELETE FROM osm_member WHERE relation = 1").map { $0["detail"] as String }.joined(
                separator: "; "
            )
        }
        #expect(!plan.contains("SCAN"), "a relation's rows found without a scan: \(plan)")
    }
}
