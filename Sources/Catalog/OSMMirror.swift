import Foundation
import GRDB
import GeoCore
import OSM
import Records

extension CatalogStore {
    static let mirrorTablesSQL = """
        CREATE TABLE osm_node_block (first INTEGER PRIMARY KEY, count INTEGER NOT NULL, data BLOB NOT NULL);
        CREATE TABLE osm_way_block (first INTEGER PRIMARY KEY, count INTEGER NOT NULL, data BLOB NOT NULL);
        CREATE TABLE osm_relation (id INTEGER PRIMARY KEY, members BLOB, tags BLOB);
        CREATE TABLE osm_member (way INTEGER NOT NULL, relation INTEGER NOT NULL, PRIMARY KEY (way, relation)) WITHOUT ROWID;
        CREATE TABLE osm_state (id INTEGER PRIMARY KEY CHECK (id = 1), sequence INTEGER, timestamp TEXT, source TEXT);
        """

    /// Replaces the mirror with an import's, in one transaction (beside the POIs and addresses that import wrote),
    /// its blocks as `EncodedOSMMirror`'s thread encodes them (it starts while the POIs are written).
    public func replaceOSMMirror(_ encoded: EncodedOSMMirror) throws(CatalogError) {
        do {
            try pool.write { db in
                for table in ["osm_node_block", "osm_way_block", "osm_relation", "osm_member", "osm_state", "osm_coastline"] {
                    try db.execute(sql: "DELETE FROM \(table)")
                }
                let nodes = try db.makeStatement(sql: "INSERT INTO osm_node_block (first, count, data) VALUES (?, ?, ?)")
                let ways = try db.makeStatement(sql: "INSERT INTO osm_way_block (first, count, data) VALUES (?, ?, ?)")
                try encoded.forEachBlock { table, block in
                    try (table == .nodes ? nodes : ways).execute(arguments: [block.first, block.count, Data(block.bytes)])
                }
                let relation = try db.makeStatement(sql: "INSERT OR REPLACE INTO osm_relation (id, members, tags) VALUES (?, ?, ?)")
                let member = try db.makeStatement(sql: "INSERT OR IGNORE INTO osm_member (way, relation) VALUES (?, ?)")
                for r in encoded.relations {
                    try relation.execute(arguments: [
                        r.id, r.members.map { Data(OSMMirrorCoding.members($0)) }, r.tags.map { Data(OSMMirrorCoding.tags($0)) },
                    ])
                    for m in r.members ?? [] where m.type == .way { try member.execute(arguments: [m.ref, r.id]) }
                }
                let coast = try db.makeStatement(sql: "INSERT OR IGNORE INTO osm_coastline (way) VALUES (?)")
                for way in encoded.coastlineWays { try coast.execute(arguments: [way]) }
                if let state = encoded.state { try OSMMirror.writeState(state, db) }
            }
        } catch {
            throw .storage("\(error)")
        }
    }

    /// Whether the database holds an OpenStreetMap import that change files can be applied to, and where it stands.
    public func osmMirrorState() throws(CatalogError) -> OSMMirrorState? {
        try read { db in try OSMMirror.state(db) }
    }

    /// Runs `body` on the mirror in one write transaction, counted in the change sequence: the mirror, the POIs and
    /// the addresses it changes are committed together or not at all. The transaction's checkpoint is left to
    /// `BackgroundCheckpointer` (it writes ~11 k log frames on the country-shaped database, and SQLite's automatic
    /// checkpoint would copy them into the file inside this call); `waitForCheckpoints` waits for it.
    /// - Returns: what `body` answers, and the change sequence just before and after the transaction.
    public func updateOSM<T>(_ body: (OSMMirror) throws -> T) throws -> (value: T, before: ChangeSequence, after: ChangeSequence) {
        do {
            defer { checkpointer.request() }
            return try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
                defer { try? db.execute(sql: "PRAGMA wal_autocheckpoint = \(CatalogStore.autocheckpointPages)") }
                var result: (value: T, before: ChangeSequence, after: ChangeSequence)?
                try db.inTransaction {
                    let before = try CatalogStore.changeSequence(db)
                    let mirror = OSMMirror(db)
                    let value = try body(mirror)
                    try mirror.flush()
                    try db.execute(sql: "UPDATE store_state SET sequence = sequence + 1 WHERE id = 1")
                    var after = before
                    after.sequence += 1
                    result = (value, before, after)
                    return .commit
                }
                return result!
            }
        } catch let error as DatabaseError {
            throw CatalogError.storage("\(error)")
        }
    }
}

/// The mirror inside one write transaction (`CatalogStore.updateOSM`): node and way blocks read once and written
/// back at the end, relations read and written as rows, and the outputs (POIs, houses, streets) replaced by object.
public final class OSMMirror {
    let db: Database
    let nodes: BlockTable<NodeBlock>
    let ways: BlockTable<WayBlock>

    init(_ db: Database) {
        self.db = db
        nodes = BlockTable(db)
        ways = BlockTable(db)
    }

    static func state(_ db: Database) throws -> OSMMirrorState? {
        guard let row = try Row.fetchOne(db, sql: "SELECT sequence, timestamp, source, box FROM osm_state WHERE id = 1") else { return nil }
        // The box as "west,south,east,north" (migration v10; none before).
        let edges = (row[3] as String?)?.split(separator: ",").compactMap { Double($0) } ?? []
        let box = edges.count == 4 ? Coastline.Box(west: edges[0], south: edges[1], east: edges[2], north: edges[3]) : nil
        return OSMMirrorState(sequence: row[0], timestamp: row[1], source: row[2], box: box)
    }

    static func writeState(_ state: OSMMirrorState, _ db: Database) throws {
        let box = state.box.map { "\($0.west),\($0.south),\($0.east),\($0.north)" }
        try db.execute(
            sql: "INSERT OR REPLACE INTO osm_state (id, sequence, timestamp, source, box) VALUES (1, ?, ?, ?, ?)",
            arguments: [state.sequence, state.timestamp, state.source, box]
        )
    }

    /// The `natural=coastline` ways, by id.
    public func coastlineWays() throws -> [Int64] { try Int64.fetchAll(db, sql: "SELECT way FROM osm_coastline ORDER BY way") }

    /// Records whether way `id` is a coastline now.
    public func setCoastline(_ id: Int64, _ isCoastline: Bool) throws {
        if isCoastline {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO osm_coastline (way) VALUES (?)").execute(arguments: [id])
        } else {
            try db.cachedStatement(sql: "DELETE FROM osm_coastline WHERE way = ?").execute(arguments: [id])
        }
    }

    public func state() throws -> OSMMirrorState? { try Self.state(db) }
    public func setState(_ state: OSMMirrorState) throws { try Self.writeState(state, db) }

    /// Writes the changed blocks back.
    func flush() throws {
        try nodes.flush()
        try ways.flush()
    }

    /// The blocks of one table, read at most once in a transaction and written back by `flush`: a block covers the
    /// ids from its first to the next block's first (the first block also those below it).
    final class BlockTable<Block: MirrorBlock> {
        let db: Database
        /// Blocks read, by the key their row has in the table (their first id when read).
        private var blocks: [Int64: Block] = [:]
        private var dirty = Set<Int64>()
        /// A block made for the objects of an empty table, under this key until written.
        private static var newBlockKey: Int64 { Int64.min }

        init(_ db: Database) { self.db = db }

        /// The ids each block looked up so far covers, `from..<to` (no lower end for the first block, no upper one for
        /// the last), sorted: a way's nodes are mostly neighbours, and one query per node was a third of a change file
        /// (RESULTS.md, issue 57). The table's keys do not change before `flush`.
        private var covered: [(from: Int64, to: Int64, key: Int64)] = []

        /// The key of the block that holds, or would hold, `id`.
        private func key(for id: Int64) throws -> Int64 {
            var (low, high) = (0, covered.count)
            while low < high {
                let mid = (low + high) / 2
                if covered[mid].to <= id { low = mid + 1 } else { high = mid }
            }
            if low < covered.count && covered[low].from <= id { return covered[low].key }
            let below = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT first FROM \(Block.table) WHERE first <= ? ORDER BY first DESC LIMIT 1"),
                arguments: [id]
            )
            let above = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT first FROM \(Block.table) WHERE first > ? ORDER BY first LIMIT 1"),
                arguments: [id]
            )
            let key: Int64
            let from: Int64
            if let below {
                (key, from) = (below, below)
            } else if let above {
                (key, from) = (above, Int64.min)  // below every block: the first holds it
            } else {
                return Self.newBlockKey
            }
            // Past the first block's start, the first block covers up to the second's; below it, up to its own start.
            let to = below == nil ? above! : (above ?? Int64.max)
            covered.insert((from, to, key), at: low)
            return key
        }

        private func load(_ key: Int64) throws -> Block {
            if let block = blocks[key] { return block }
            var block = Block()
            if key != Self.newBlockKey,
                let data = try Data.fetchOne(db.cachedStatement(sql: "SELECT data FROM \(Block.table) WHERE first = ?"), arguments: [key])
            {
                do {
                    block = try data.withUnsafeBytes { bytes in try Block.decode(bytes) }
                } catch let error as AddressBlock.CorruptBlock {
                    throw CatalogError.storage("\(Block.table) \(key) is corrupt: \(error.reason)")
                }
            }
            blocks[key] = block
            return block
        }

        /// The block that holds, or would hold, `id`.
        func block(of id: Int64) throws -> Block { try load(try key(for: id)) }

        /// Changes the block holding `id` and marks it for writing.
        func change<T>(_ id: Int64, _ body: (inout Block) -> T) throws -> T {
            let key = try key(for: id)
            _ = try load(key)
            dirty.insert(key)
            return body(&blocks[key]!)
        }

        /// Writes the changed blocks back: a block emptied goes, one grown past twice the size is split.
        func flush() throws {
            for key in dirty where key != Self.newBlockKey {
                try db.cachedStatement(sql: "DELETE FROM \(Block.table) WHERE first = ?").execute(arguments: [key])
            }
            let insert = try db.makeStatement(sql: "INSERT INTO \(Block.table) (first, count, data) VALUES (?, ?, ?)")
            for key in dirty {
                var block = blocks[key]!
                var parts: [Block] = []
                // Each table at its own size: ways split at twice the nodes' size grew to 512 (~50 kB), and the last
                // block, where every new way goes, was written again by every file.
                while block.count > 2 * Block.size { parts.append(block.split(at: block.count - Block.size)) }
                parts.append(block)
                for part in parts where part.count > 0 { try insert.execute(arguments: [part.ids[0], part.count, Data(part.encoded())]) }
            }
            blocks = [:]
            dirty = []
            covered = []
        }
    }

    // MARK: Nodes

    /// A node as the mirror has it.
    public struct Node: Equatable {
        public var latitude: Int32
        public var longitude: Int32
        /// The leading number of its house number, or -1.
        public var number: Int32
        public var ways: [Int64]
    }

    public func node(_ id: Int64) throws -> Node? {
        let block = try nodes.block(of: id)
        let (i, found) = block.slot(of: id)
        guard found else { return nil }
        return Node(latitude: block.latitudes[i], longitude: block.longitudes[i], number: block.numbers[i], ways: block.ways[i])
    }

    /// Creates or moves node `id`, keeping the ways that use it.
    public func setNode(_ id: Int64, latitude: Int32, longitude: Int32, number: Int32) throws {
        try nodes.change(id) { block in
            let (i, found) = block.slot(of: id)
            if found {
                (block.latitudes[i], block.longitudes[i], block.numbers[i]) = (latitude, longitude, number)
            } else {
                block.insert(at: i, id: id, latitude: latitude, longitude: longitude, number: number, ways: [])
            }
        }
    }

    /// Deletes node `id`; answers the ways that used it.
    @discardableResult
    public func deleteNode(_ id: Int64) throws -> [Int64] {
        try nodes.change(id) { block in
            let (i, found) = block.slot(of: id)
            guard found else { return [] }
            let ways = block.ways[i]
            block.remove(at: i)
            return ways
        }
    }

    /// Records that `way` uses the nodes `refs` (those the mirror has).
    public func addWay(_ way: Int64, to refs: some Sequence<Int64>) throws {
        for ref in Set(refs) {
            try nodes.change(ref) { block in
                let (i, found) = block.slot(of: ref)
                guard found else { return }
                let w = block.ways[i].firstIndex { $0 >= way } ?? block.ways[i].count
                if w == block.ways[i].count || block.ways[i][w] != way { block.ways[i].insert(way, at: w) }
            }
        }
    }

    /// Records that `way` no longer uses the nodes `refs`.
    public func removeWay(_ way: Int64, from refs: some Sequence<Int64>) throws {
        for ref in Set(refs) {
            try nodes.change(ref) { block in
                let (i, found) = block.slot(of: ref)
                guard found else { return }
                block.ways[i].removeAll { $0 == way }
            }
        }
    }

    // MARK: Ways and relations

    /// A way's node ids, and its tags when it has output.
    public func way(_ id: Int64) throws -> (refs: [Int64], tags: [OSMTag]?)? {
        let block = try ways.block(of: id)
        let (i, found) = block.slot(of: id)
        return found ? (block.refs[i], block.tags[i]) : nil
    }

    public func putWay(_ id: Int64, refs: [Int64], tags: [OSMTag]?) throws {
        try ways.change(id) { block in
            let (i, found) = block.slot(of: id)
            if found {
                (block.refs[i], block.tags[i]) = (refs, tags)
            } else {
                block.ids.insert(id, at: i)
                block.refs.insert(refs, at: i)
                block.tags.insert(tags, at: i)
            }
        }
    }

    public func deleteWay(_ id: Int64) throws {
        try ways.change(id) { block in
            let (i, found) = block.slot(of: id)
            guard found else { return }
            block.ids.remove(at: i)
            block.refs.remove(at: i)
            block.tags.remove(at: i)
        }
    }

    /// Whether the mirror has relation `id`, with its members and tags when it is a multipolygon with output.
    public func relation(_ id: Int64) throws -> (members: [OSMRelation.Member]?, tags: [OSMTag]?)? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT members, tags FROM osm_relation WHERE id = ?"), arguments: [id]) else {
            return nil
        }
        do {
            let members = try (row[0] as Data?).map { data in try data.withUnsafeBytes { bytes in try OSMMirrorCoding.members(from: bytes) } }
            let tags = try (row[1] as Data?).map { data in try data.withUnsafeBytes { bytes in try OSMMirrorCoding.tags(from: bytes) } }
            return (members, tags)
        } catch let error as AddressBlock.CorruptBlock {
            throw CatalogError.storage("relation \(id) in the mirror is corrupt: \(error.reason)")
        }
    }

    public func putRelation(_ id: Int64, members: [OSMRelation.Member]?, tags: [OSMTag]?) throws {
        try deleteRelation(id)
        try db.execute(
            sql: "INSERT INTO osm_relation (id, members, tags) VALUES (?, ?, ?)",
            arguments: [id, members.map { Data(OSMMirrorCoding.members($0)) }, tags.map { Data(OSMMirrorCoding.tags($0)) }]
        )
        for m in members ?? [] where m.type == .way {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO osm_member (way, relation) VALUES (?, ?)").execute(arguments: [m.ref, id])
        }
    }

    public func deleteRelation(_ id: Int64) throws {
        try db.cachedStatement(sql: "DELETE FROM osm_relation WHERE id = ?").execute(arguments: [id])
        try db.cachedStatement(sql: "DELETE FROM osm_member WHERE relation = ?").execute(arguments: [id])
    }

    /// The kept multipolygons that have way `id` as a member.
    public func relations(using way: Int64) throws -> [Int64] {
        try Int64.fetchAll(db.cachedStatement(sql: "SELECT relation FROM osm_member WHERE way = ?"), arguments: [way])
    }

    // MARK: Outputs

    public func hasPOI(_ id: String) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM poi WHERE id = ?"), arguments: [id]) ?? false
    }

    /// Commits POI changes inside this transaction.
    public func commit(_ changes: [StoreChange]) throws {
        let put = try db.cachedStatement(sql: CatalogStore.upsertPOI)
        for change in changes {
            switch change {
            case .put(.poi(let poi)): try put.execute(arguments: CatalogStore.arguments(poi))
            case .put(.pin): throw CatalogError.storage("an OpenStreetMap change puts no pins")
            case .delete(let kind, let id):
                try db.cachedStatement(sql: "DELETE FROM \(kind == .poi ? "poi" : "pin") WHERE id = ?").execute(arguments: [id])
            }
        }
    }

    /// Replaces the houses, street lines and map areas made from the objects `objects` (their ids: `osm-n1`, `osm-w2`; a house
    /// `osm-n1#2` is the object's too) with `added`, keeping the store's order (by object type, then id, as an
    /// extract is sorted), and gives the addresses a new generation.
    ///
    /// Only the house blocks that hold a changed object or an added house's place are read and written
    /// (`CatalogStore.replaceHouses`); a store without the blocks' spans has its list rewritten whole once, block by
    /// block (`OSMObjectKey.replacingHouses`), which gives it the spans.
    /// - Returns: with `returningAll`, every house, street line and area after the change (for a store that takes
    ///   them whole, PostgreSQL); the new generation; how many of the houses' blocks were encoded again (of how many
    ///   after the change).
    /// - Parameters:
    ///   - sea: the sea made again (nil: the sea stays as it is).
    ///   - generation: the addresses' generation after the change (chosen by the caller, who may have laid the
    ///     change over the address index already under it: `OSMImporter.apply(…addressesMade:)`).
    public func replaceAddresses(
        of objects: Set<String>,
        with added: AddressData,
        sea newSea: [MapArea]? = nil,
        generation: String = UUID().uuidString,
        returningAll: Bool = false
    ) throws -> (
        data: AddressData?, generation: String, houseBlocks: (encoded: Int, of: Int)
    ) {
        // By (type, id) keys, not strings: millions of houses are looked at, a few thousand objects changed.
        var changed = Set<Int64>()
        var allKeyed = true
        for id in objects {
            if let key = OSMObjectKey.order(of: id) { changed.insert(OSMObjectKey.packed(key)) } else { allKeyed = false }
        }
        let addedHouses = OSMObjectKey.inOrder(added.addresses)
        let houseBlocks: (encoded: Int, of: Int)
        if allKeyed, let done = try CatalogStore.replaceHouses(changed: changed, added: addedHouses, db) {
            houseBlocks = done
        } else {
            let blocks = try CatalogStore.houseBlocks(db)
            let houses: HouseList
            var encoded = 0
            let replaced = try AddressBlock.CorruptBlock.reading("the address blocks are") { () throws(AddressBlock.CorruptBlock) in
                try OSMObjectKey.replacingHouses(in: blocks, changed: changed, added: addedHouses)
            }
            if let replaced {
                (houses, encoded) = (replaced.houses, replaced.encodedAgain)
            } else {
                // Ids that are not OpenStreetMap objects' (a database older than the mirror's own houses): merged whole.
                let stored = try AddressBlock.CorruptBlock.reading("the address blocks are") { () throws(AddressBlock.CorruptBlock) in
                    try HouseList(checking: blocks)
                }
                let kept = stored.filter { house in
                    guard let key = OSMObjectKey.order(of: house.id) else { return !objects.contains(OSMObjectKey.object(of: house.id)) }
                    return !changed.contains(OSMObjectKey.packed(key))
                }
                houses = HouseList(OSMObjectKey.merged(kept, Array(addedHouses), id: \.id))
                encoded = blocks.count
            }
            try CatalogStore.writeHouses(houses, db)
            houseBlocks = (encoded, houses.blocks.count)
        }
        let deleteLine = try db.cachedStatement(sql: "DELETE FROM street_line WHERE id = ?")
        for id in objects { try deleteLine.execute(arguments: [id]) }
        try CatalogStore.insertStreets(added.streets, db)
        // The areas of the objects replaced, in object order; the sea (no object's) stays last. Only the blocks
        // reached when the store has their spans; else the areas are rewritten whole, which gives it them.
        let addedAreas = OSMObjectKey.inOrder(added.areas)
        let areasReplaced = try allKeyed && CatalogStore.replaceAreas(changed: changed, added: addedAreas, sea: newSea, db)
        if !areasReplaced {
            let keptAreas = try CatalogStore.areas(db).filter { !objects.contains($0.id) }
            let (objectAreas, sea) = (
                keptAreas.filter { !$0.id.hasPrefix(MapArea.seaPrefix) }, keptAreas.filter { $0.id.hasPrefix(MapArea.seaPrefix) }
            )
            try CatalogStore.writeAreas(AreaList(OSMObjectKey.merged(objectAreas, Array(addedAreas), id: \.id) + (newSea ?? sea)), db)
        }
        try db.execute(sql: "UPDATE address_state SET generation = ? WHERE id = 1", arguments: [generation])
        guard returningAll else { return (nil, generation, houseBlocks) }
        var data = AddressData()
        data.addresses = try CatalogStore.houses(db)
        data.streets = try CatalogStore.streets(db)
        data.areas = try CatalogStore.areas(db)
        return (data, generation, houseBlocks)
    }
}
