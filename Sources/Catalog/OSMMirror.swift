import Foundation
import GRDB
import GeoCore
import OSM

/// What an OpenStreetMap import keeps so that change files can be applied to it later: every node's location (in
/// `NodeBlock`s), every way's node ids and the tags of those with output, every relation and the members and tags of
/// multipolygons with output, which ways use a node and which relations a way — the objects as the extract had them.
/// A change file then re-converts only the objects it touches and those built from them (see
/// docs/ARCHITECTURE.md, "OpenStreetMap that stays current").
///
/// Tables (migration v8): `osm_node_block(first, count, data)`, `osm_way(id, refs, tags)`,
/// `osm_relation(id, members, tags)`, `osm_member(way, relation)` and `osm_state` (the replication sequence and the
/// data's timestamp).
public struct OSMMirrorImport: Sendable {
    /// Node ids ascending; latitude and longitude in 1e-7°, interleaved.
    public var nodeIDs: [Int64] = []
    public var coordinates: [Int32] = []
    /// House numbers of nodes (their leading number): ids ascending, beside their numbers.
    public var numberIDs: [Int64] = []
    public var numberValues: [Int] = []
    /// Every way: ids in file order, `starts[i]..<starts[i + 1]` its node ids in `refs`.
    public var wayIDs: [Int64] = []
    public var wayStarts: [Int] = [0]
    public var wayRefs: [Int64] = []
    /// The tags of the ways with output (POIs, houses, streets, interpolation lines), by way id.
    public var wayTags: [Int64: [OSMTag]] = [:]
    /// Every relation: members and tags kept for multipolygons with output, nil for the rest.
    public var relations: [(id: Int64, members: [OSMRelation.Member]?, tags: [OSMTag]?)] = []
    public var state = OSMMirrorState()

    public init() {}
}

/// Where the mirrored data stands in OpenStreetMap's history.
public struct OSMMirrorState: Sendable, Equatable {
    /// The replication sequence number of the last change applied (or the extract's), if known.
    public var sequence: Int?
    /// The newest OSM timestamp of the data (ISO 8601), if known.
    public var timestamp: String?
    /// The replication source followed (a URL or a directory), if any.
    public var source: String?

    public init(sequence: Int? = nil, timestamp: String? = nil, source: String? = nil) {
        (self.sequence, self.timestamp, self.source) = (sequence, timestamp, source)
    }
}

extension CatalogStore {
    static let mirrorTablesSQL = """
        CREATE TABLE osm_node_block (first INTEGER PRIMARY KEY, count INTEGER NOT NULL, data BLOB NOT NULL);
        CREATE TABLE osm_way (id INTEGER PRIMARY KEY, refs BLOB NOT NULL, tags BLOB);
        CREATE TABLE osm_relation (id INTEGER PRIMARY KEY, members BLOB, tags BLOB);
        CREATE TABLE osm_member (way INTEGER NOT NULL, relation INTEGER NOT NULL, PRIMARY KEY (way, relation)) WITHOUT ROWID;
        CREATE TABLE osm_state (id INTEGER PRIMARY KEY CHECK (id = 1), sequence INTEGER, timestamp TEXT, source TEXT);
        """

    /// Replaces the mirror with an import's, in one transaction (beside the POIs and addresses that import wrote).
    public func replaceOSMMirror(_ data: OSMMirrorImport) throws(CatalogError) {
        do {
            try pool.write { db in
                for table in ["osm_node_block", "osm_way", "osm_relation", "osm_member", "osm_state"] {
                    try db.execute(sql: "DELETE FROM \(table)")
                }
                try Self.writeNodes(data, db)
                let way = try db.makeStatement(sql: "INSERT OR REPLACE INTO osm_way (id, refs, tags) VALUES (?, ?, ?)")
                for i in data.wayIDs.indices {
                    let refs = Data(OSMMirrorCoding.refs(Array(data.wayRefs[data.wayStarts[i]..<data.wayStarts[i + 1]])))
                    let tags = data.wayTags[data.wayIDs[i]].map { Data(OSMMirrorCoding.tags($0)) }
                    try way.execute(arguments: [data.wayIDs[i], refs, tags])
                }
                let relation = try db.makeStatement(sql: "INSERT OR REPLACE INTO osm_relation (id, members, tags) VALUES (?, ?, ?)")
                let member = try db.makeStatement(sql: "INSERT OR IGNORE INTO osm_member (way, relation) VALUES (?, ?)")
                for r in data.relations {
                    try relation.execute(arguments: [
                        r.id, r.members.map { Data(OSMMirrorCoding.members($0)) }, r.tags.map { Data(OSMMirrorCoding.tags($0)) },
                    ])
                    for m in r.members ?? [] where m.type == .way { try member.execute(arguments: [m.ref, r.id]) }
                }
                try OSMMirror.writeState(data.state, db)
            }
        } catch {
            throw .storage("\(error)")
        }
    }

    /// The nodes in blocks, each with the ways that use it: the ways with tags that make output, and the members of
    /// the multipolygons kept.
    static func writeNodes(_ data: OSMMirrorImport, _ db: Database) throws {
        // (node, way) pairs, sorted by node, then merged with the nodes as they are written.
        var memberWays = Set<Int64>()
        for r in data.relations { for m in r.members ?? [] where m.type == .way { memberWays.insert(m.ref) } }
        var pairs: [(node: Int64, way: Int64)] = []
        for i in data.wayIDs.indices where data.wayTags[data.wayIDs[i]] != nil || memberWays.contains(data.wayIDs[i]) {
            for ref in data.wayRefs[data.wayStarts[i]..<data.wayStarts[i + 1]] { pairs.append((ref, data.wayIDs[i])) }
        }
        pairs.sort { $0.node < $1.node || ($0.node == $1.node && $0.way < $1.way) }
        let insert = try db.makeStatement(sql: "INSERT INTO osm_node_block (first, count, data) VALUES (?, ?, ?)")
        var block = NodeBlock()
        var p = 0
        var n = 0
        for (i, id) in data.nodeIDs.enumerated() {
            while p < pairs.count && pairs[p].node < id { p += 1 }
            var ways: [Int64] = []
            while p < pairs.count && pairs[p].node == id {
                if ways.last != pairs[p].way { ways.append(pairs[p].way) }
                p += 1
            }
            while n < data.numberIDs.count && data.numberIDs[n] < id { n += 1 }
            let number = n < data.numberIDs.count && data.numberIDs[n] == id ? Int32(clamping: data.numberValues[n]) : -1
            block.insert(
                at: block.count,
                id: id,
                latitude: data.coordinates[2 * i],
                longitude: data.coordinates[2 * i + 1],
                number: number,
                ways: ways
            )
            if block.count == NodeBlock.size {
                try insert.execute(arguments: [block.ids[0], block.count, Data(block.encoded())])
                block = NodeBlock()
            }
        }
        if block.count > 0 { try insert.execute(arguments: [block.ids[0], block.count, Data(block.encoded())]) }
    }

    /// Whether the database holds an OpenStreetMap import that change files can be applied to, and where it stands.
    public func osmMirrorState() throws(CatalogError) -> OSMMirrorState? {
        try read { db in try OSMMirror.state(db) }
    }

    /// Runs `body` on the mirror in one write transaction, counted in the change sequence: the mirror, the POIs and
    /// the addresses it changes are committed together or not at all.
    /// - Returns: what `body` answers, and the change sequence just before and after the transaction.
    public func updateOSM<T>(_ body: (OSMMirror) throws -> T) throws -> (value: T, before: ChangeSequence, after: ChangeSequence) {
        do {
            return try pool.write { db in
                let before = try CatalogStore.changeSequence(db)
                let mirror = OSMMirror(db)
                let value = try body(mirror)
                try mirror.flush()
                try db.execute(sql: "UPDATE store_state SET sequence = sequence + 1 WHERE id = 1")
                var after = before
                after.sequence += 1
                return (value, before, after)
            }
        } catch let error as DatabaseError {
            throw CatalogError.storage("\(error)")
        }
    }
}

/// The mirror inside one write transaction (`CatalogStore.updateOSM`): node blocks read once and written back at the
/// end, ways and relations read and written as rows, and the outputs (POIs, houses, streets) replaced by object.
public final class OSMMirror {
    let db: Database
    /// Blocks read, by the key their row has in the table (their first id when read).
    private var blocks: [Int64: NodeBlock] = [:]
    private var dirty = Set<Int64>()
    /// A block made for nodes of an empty table, under this key until written.
    private static let newBlockKey = Int64.min

    init(_ db: Database) { self.db = db }

    static func state(_ db: Database) throws -> OSMMirrorState? {
        guard let row = try Row.fetchOne(db, sql: "SELECT sequence, timestamp, source FROM osm_state WHERE id = 1") else { return nil }
        return OSMMirrorState(sequence: row[0], timestamp: row[1], source: row[2])
    }

    static func writeState(_ state: OSMMirrorState, _ db: Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO osm_state (id, sequence, timestamp, source) VALUES (1, ?, ?, ?)",
            arguments: [state.sequence, state.timestamp, state.source]
        )
    }

    public func state() throws -> OSMMirrorState? { try Self.state(db) }
    public func setState(_ state: OSMMirrorState) throws { try Self.writeState(state, db) }

    // MARK: Nodes

    /// A node as the mirror has it.
    public struct Node: Equatable {
        public var latitude: Int32
        public var longitude: Int32
        /// The leading number of its house number, or -1.
        public var number: Int32
        public var ways: [Int64]
    }

    /// The key of the block that holds, or would hold, node `id`.
    private func blockKey(for id: Int64) throws -> Int64 {
        if let key = try Int64.fetchOne(db, sql: "SELECT first FROM osm_node_block WHERE first <= ? ORDER BY first DESC LIMIT 1", arguments: [id]) {
            return key
        }
        if let key = try Int64.fetchOne(db, sql: "SELECT first FROM osm_node_block ORDER BY first LIMIT 1") { return key }
        return Self.newBlockKey
    }

    private func loadBlock(_ key: Int64) throws -> NodeBlock {
        if let block = blocks[key] { return block }
        var block = NodeBlock()
        if key != Self.newBlockKey, let data = try Data.fetchOne(db, sql: "SELECT data FROM osm_node_block WHERE first = ?", arguments: [key]) {
            do {
                block = try data.withUnsafeBytes { bytes in try NodeBlock.decode(bytes) }
            } catch let error as AddressBlock.CorruptBlock {
                throw CatalogError.storage("node block \(key) is corrupt: \(error.reason)")
            }
        }
        blocks[key] = block
        return block
    }

    /// Changes the block holding `id` (read first if need be) and marks it for writing.
    private func withBlock<T>(of id: Int64, _ body: (inout NodeBlock) -> T) throws -> T {
        let key = try blockKey(for: id)
        _ = try loadBlock(key)
        dirty.insert(key)
        return body(&blocks[key]!)
    }

    public func node(_ id: Int64) throws -> Node? {
        let block = try loadBlock(try blockKey(for: id))
        let (i, found) = block.slot(of: id)
        guard found else { return nil }
        return Node(latitude: block.latitudes[i], longitude: block.longitudes[i], number: block.numbers[i], ways: block.ways[i])
    }

    /// Creates or moves node `id`, keeping the ways that use it.
    public func setNode(_ id: Int64, latitude: Int32, longitude: Int32, number: Int32) throws {
        try withBlock(of: id) { block in
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
        try withBlock(of: id) { block in
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
            try withBlock(of: ref) { block in
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
            try withBlock(of: ref) { block in
                let (i, found) = block.slot(of: ref)
                guard found else { return }
                block.ways[i].removeAll { $0 == way }
            }
        }
    }

    /// Writes the changed blocks back: a block emptied goes, one grown past twice the size is split.
    func flush() throws {
        for key in dirty where key != Self.newBlockKey { try db.execute(sql: "DELETE FROM osm_node_block WHERE first = ?", arguments: [key]) }
        let insert = try db.makeStatement(sql: "INSERT INTO osm_node_block (first, count, data) VALUES (?, ?, ?)")
        for key in dirty {
            var block = blocks[key]!
            var parts: [NodeBlock] = []
            while block.count > 2 * NodeBlock.size { parts.append(block.split(at: block.count - NodeBlock.size)) }
            parts.append(block)
            for part in parts where part.count > 0 { try insert.execute(arguments: [part.ids[0], part.count, Data(part.encoded())]) }
        }
        blocks = [:]
        dirty = []
    }

    // MARK: Ways and relations

    /// A way's node ids, and its tags when it has output.
    public func way(_ id: Int64) throws -> (refs: [Int64], tags: [OSMTag]?)? {
        guard let row = try Row.fetchOne(db, sql: "SELECT refs, tags FROM osm_way WHERE id = ?", arguments: [id]) else { return nil }
        do {
            let refs = try (row[0] as Data).withUnsafeBytes { bytes in try OSMMirrorCoding.refs(from: bytes) }
            let tags = try (row[1] as Data?).map { data in try data.withUnsafeBytes { bytes in try OSMMirrorCoding.tags(from: bytes) } }
            return (refs, tags)
        } catch let error as AddressBlock.CorruptBlock {
            throw CatalogError.storage("way \(id) in the mirror is corrupt: \(error.reason)")
        }
    }

    public func putWay(_ id: Int64, refs: [Int64], tags: [OSMTag]?) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO osm_way (id, refs, tags) VALUES (?, ?, ?)",
            arguments: [id, Data(OSMMirrorCoding.refs(refs)), tags.map { Data(OSMMirrorCoding.tags($0)) }]
        )
    }

    public func deleteWay(_ id: Int64) throws { try db.execute(sql: "DELETE FROM osm_way WHERE id = ?", arguments: [id]) }

    /// Whether the mirror has relation `id`, with its members and tags when it is a multipolygon with output.
    public func relation(_ id: Int64) throws -> (members: [OSMRelation.Member]?, tags: [OSMTag]?)? {
        guard let row = try Row.fetchOne(db, sql: "SELECT members, tags FROM osm_relation WHERE id = ?", arguments: [id]) else { return nil }
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
            try db.execute(sql: "INSERT OR IGNORE INTO osm_member (way, relation) VALUES (?, ?)", arguments: [m.ref, id])
        }
    }

    public func deleteRelation(_ id: Int64) throws {
        try db.execute(sql: "DELETE FROM osm_relation WHERE id = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM osm_member WHERE relation = ?", arguments: [id])
    }

    /// The kept multipolygons that have way `id` as a member.
    public func relations(using way: Int64) throws -> [Int64] {
        try Int64.fetchAll(db, sql: "SELECT relation FROM osm_member WHERE way = ?", arguments: [way])
    }

    // MARK: Outputs

    public func hasPOI(_ id: String) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT 1 FROM poi WHERE id = ?", arguments: [id]) ?? false
    }

    /// Commits POI changes inside this transaction.
    public func commit(_ changes: [StoreChange]) throws {
        let put = try db.cachedStatement(sql: CatalogStore.upsertPOI)
        for change in changes {
            switch change {
            case .put(.poi(let poi)): try put.execute(arguments: CatalogStore.arguments(poi))
            case .put(.pin): throw CatalogError.storage("an OpenStreetMap change puts no pins")
            case .delete(let kind, let id): try db.execute(sql: "DELETE FROM \(kind == .poi ? "poi" : "pin") WHERE id = ?", arguments: [id])
            }
        }
    }

    /// Replaces the houses and street lines made from the objects `objects` (their ids: `osm-n1`, `osm-w2`; a house
    /// `osm-n1#2` is the object's too) with `added`, keeping the store's order (by object type, then id, as an
    /// extract is sorted), and gives the addresses a new generation.
    /// - Returns: every house and street line after the change, and the new generation.
    public func replaceAddresses(of objects: Set<String>, with added: AddressData) throws -> (data: AddressData, generation: String) {
        var houses = try CatalogStore.houses(db).filter { !objects.contains(OSMObjectKey.object(of: $0.id)) }
        houses.append(contentsOf: added.addresses)
        houses = OSMObjectKey.inOrder(houses, id: \.id)
        try CatalogStore.writeHouses(houses, db)
        for id in objects { try db.execute(sql: "DELETE FROM street_line WHERE id = ?", arguments: [id]) }
        try CatalogStore.insertStreets(added.streets, db)
        let generation = UUID().uuidString
        try db.execute(sql: "UPDATE address_state SET generation = ? WHERE id = 1", arguments: [generation])
        var data = AddressData()
        data.addresses = houses
        data.streets = try CatalogStore.streets(db)
        return (data, generation)
    }
}

/// The OpenStreetMap object an output id comes from, and the order an extract has them in.
public enum OSMObjectKey {
    /// "osm-n12" of "osm-n12#3"; any other id is its own object.
    public static func object(of id: String) -> String {
        guard let hash = id.firstIndex(of: "#") else { return id }
        return String(id[..<hash])
    }

    /// (type, id, part) of an output id: nodes, then ways, then relations, each by id, then the part after "#";
    /// nil for an id that is not an OpenStreetMap object's.
    public static func order(of id: String) -> (type: Int, id: Int64, part: Int)? {
        let utf8 = Array(id.utf8)
        guard utf8.count > 5, utf8.starts(with: Array("osm-".utf8)) else { return nil }
        let type: Int
        switch utf8[4] {
        case UInt8(ascii: "n"): type = 0
        case UInt8(ascii: "w"): type = 1
        case UInt8(ascii: "r"): type = 2
        default: return nil
        }
        let rest = utf8[5...].split(separator: UInt8(ascii: "#"), maxSplits: 1, omittingEmptySubsequences: false)
        guard let number = Int64(String(decoding: rest[0], as: UTF8.self)) else { return nil }
        let part = rest.count > 1 ? Int(String(decoding: rest[1], as: UTF8.self)) ?? 0 : 1
        return (type, number, part)
    }

    /// `items` by `order` of their ids (stable; items with other ids first, in their order); as they are when they
    /// already are in that order (an extract's output, read from a sorted file).
    public static func inOrder<T>(_ items: [T], id: (T) -> String) -> [T] {
        let keys = items.map { order(of: id($0)) }
        func before(_ a: Int, _ b: Int) -> Bool {
            switch (keys[a], keys[b]) {
            case (nil, nil): return a < b
            case (nil, _): return true
            case (_, nil): return false
            case (let x?, let y?):
                if x.type != y.type { return x.type < y.type }
                if x.id != y.id { return x.id < y.id }
                if x.part != y.part { return x.part < y.part }
                return a < b
            }
        }
        if !items.indices.dropFirst().contains(where: { before($0, $0 - 1) }) { return items }
        return items.indices.sorted(by: before).map { items[$0] }
    }
}
