import Foundation
import GRDB
import GeoCore
import Records

/// Addresses and street lines of the last OpenStreetMap import, beside the POIs: houses in blocks (`address_block`,
/// see `AddressBlock`), street lines one a row (`street_line`). They are not counted in the change sequence; every
/// replacement gives them a new generation (`address_state`), which the address index's snapshot is keyed by.
extension CatalogStore {
    public var keepsAddresses: Bool { true }

    public var appliesOSMChanges: Bool { true }

    public var databaseFile: String? { path }

    /// The address tables (migration v3).
    static let addressTablesSQL = """
        CREATE TABLE address (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            street TEXT,
            place TEXT,
            housenumber TEXT NOT NULL,
            unit TEXT,
            postcode TEXT,
            city TEXT,
            lat REAL NOT NULL,
            lon REAL NOT NULL
        );
        CREATE TABLE street_line (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            names TEXT NOT NULL,
            city TEXT,
            postcode TEXT,
            points BLOB NOT NULL,
            numbers TEXT NOT NULL DEFAULT ''
        );
        """

    /// Water and building areas (migration v9) in `MapAreaBlock`s (of `areaBlockSize` since migration v11; PostgreSQL
    /// keeps 20 000 a block): a row an area cost a second at 400 k buildings, blocks a tenth of that.
    static let areaTableSQL = """
        CREATE TABLE map_area_block (seq INTEGER PRIMARY KEY, data BLOB NOT NULL);
        """

    /// Every map area, in the order written (the order of the objects they come from, the sea last).
    static func areas(_ db: Database) throws -> AreaList {
        let blocks = try Data.fetchAll(db, sql: "SELECT data FROM map_area_block ORDER BY seq").map { [UInt8]($0) }
        return try AddressBlock.CorruptBlock.reading("the map area blocks are") { () throws(AddressBlock.CorruptBlock) in
            try AreaList(checking: blocks)
        }
    }

    /// Replaces every map area with these, in their order, in blocks of `areaBlockSize` numbered `houseBlockGap`
    /// apart; and, when the areas are OpenStreetMap objects' in `OSMObjectKey` order followed by the sea, the objects
    /// each block spans (`map_area_range`; the sea in blocks of its own, spanning `seaSpan`), so that a change file
    /// rewrites only the blocks it reaches (`replaceAreas`).
    static func writeAreas(_ areas: AreaList, _ db: Database, gap: Int64 = houseBlockGap) throws {
        try db.execute(sql: "DELETE FROM map_area_block")
        try db.execute(sql: "DELETE FROM map_area_range")
        let statement = try db.cachedStatement(sql: "INSERT INTO map_area_block (seq, data) VALUES (?, ?)")
        let range = try db.cachedStatement(sql: "INSERT INTO map_area_range (seq, first, last) VALUES (?, ?, ?)")
        // Each area's key, the sea's `seaSpan`; nil for the whole list when one is neither or the order is not kept.
        var keys: [Int64]? = []
        var previous: (type: Int, id: Int64, part: Int)?
        var inSea = false
        for i in areas.indices {
            let id = areas.id(of: i)
            if id.hasPrefix(MapArea.seaPrefix) {
                inSea = true
                keys?.append(seaSpan)
            } else if !inSea, let key = OSMObjectKey.order(of: id), previous.map({ !OSMObjectKey.precedes(key, 1, $0, 0) }) ?? true {
                previous = key
                keys?.append(OSMObjectKey.packed(key))
            } else {
                keys = nil
                break
            }
        }
        // Blocks of `areaBlockSize`, the sea starting one of its own.
        var seq: Int64 = 0
        var start = 0
        while start < areas.count {
            var end = min(areas.count, start + areaBlockSize)
            if let keys, keys[start] != seaSpan, let sea = keys[start..<end].firstIndex(of: seaSpan) { end = sea }
            try statement.execute(arguments: [seq, Data(areas.block(start..<end))])
            if let keys { try range.execute(arguments: [seq, keys[start], keys[end - 1]]) }
            (seq, start) = (seq + gap, end)
        }
    }

    /// Areas a block holds at most in SQLite: a change file rewrites the blocks it reaches whole, and its few hundred
    /// buildings reach as many blocks (at 250, ~11 kB each, a file rewrote 5 MB of areas; at 50, 1.2 MB).
    static let areaBlockSize = 50

    /// What the sea's blocks span: past every object.
    static let seaSpan = Int64.max

    /// The objects (`OSMObjectKey.packed`) each map area block spans, by its `seq` (migration v11).
    static let areaRangeTableSQL = "CREATE TABLE map_area_range (seq INTEGER PRIMARY KEY, first INTEGER NOT NULL, last INTEGER NOT NULL)"

    /// Takes the areas of the `changed` objects out of the stored blocks and puts `added` (theirs, in `OSMObjectKey`
    /// order) in, and the sea made again (`newSea`) in place of the old, reading and writing only the blocks a
    /// change reaches, as `replaceHouses` does for houses.
    /// - Returns: false, with nothing written, when the store has no spans, an added area is not a changed object's,
    ///   or there is no room between the neighbours' numbers: the caller rewrites the areas whole (`writeAreas`).
    static func replaceAreas(
        changed: Set<Int64>,
        added: AreaList,
        sea newSea: [MapArea]?,
        _ db: Database,
        gap: Int64 = houseBlockGap
    ) throws -> Bool {
        let blockSpans = try BlockSpans(db, table: "map_area_range")
        let spans = blockSpans.rows
        // The objects' blocks first, then the sea's.
        let objectBlocks = blockSpans.objectBlocks
        guard !spans.isEmpty, blockSpans.seaIsLast else { return false }
        var addedKeys: [Int64] = []
        for i in added.indices {
            guard let key = OSMObjectKey.order(of: added.id(of: i)).map(OSMObjectKey.packed), changed.contains(key) else { return false }
            addedKeys.append(key)
        }
        guard objectBlocks > 0 || added.isEmpty, newSea?.allSatisfy({ $0.id.hasPrefix(MapArea.seaPrefix) }) ?? true else { return false }
        let (touched, addedTo) = blockSpans.reached(changed: changed, added: addedKeys)
        // The blocks reached, read and their ids looked at: most that a changed object's span reaches hold none of its
        // areas, and stay as they are.
        var read: [Int: [UInt8]] = [:]
        for i in touched {
            guard let data = try Data.fetchOne(db.cachedStatement(sql: "SELECT data FROM map_area_block WHERE seq = ?"), arguments: [spans[i].seq])
            else {
                throw CatalogError.storage("map area block \(spans[i].seq) has a span but no block")
            }
            let bytes = [UInt8](data)
            var (loses, foreign) = (false, false)
            var failure: AddressBlock.CorruptBlock?
            bytes.withUnsafeBytes { block in
                do throws(AddressBlock.CorruptBlock) {
                    try MapAreaBlock.forEachID(block) { id in
                        guard let key = OSMObjectKey.order(of: id) else {
                            foreign = true
                            return
                        }
                        if changed.contains(OSMObjectKey.packed(key)) { loses = true }
                    }
                } catch {
                    failure = error
                }
            }
            if let failure { throw CatalogError.storage("the map area blocks are corrupt: block \(spans[i].seq): \(failure.reason)") }
            if foreign { return false }
            if loses { read[i] = bytes }
        }
        for i in addedTo where read[i] == nil {
            guard let data = try Data.fetchOne(db.cachedStatement(sql: "SELECT data FROM map_area_block WHERE seq = ?"), arguments: [spans[i].seq])
            else {
                throw CatalogError.storage("map area block \(spans[i].seq) has a span but no block")
            }
            read[i] = [UInt8](data)
        }
        let addedAreas = Array(added)
        // A run with no room between its neighbours' numbers takes them in (`BlockSpans.widened`) and is made again.
        var rewrites: [(from: Int, to: Int, blocks: [[UInt8]], spans: [(first: Int64, last: Int64)], seqs: [Int64])] = []
        var widened = Set<Int>()
        runs: while true {
            rewrites.removeAll(keepingCapacity: true)
            var nextAdded = 0
            for run in BlockSpans.runs(read.keys) {
                let (from, to) = (run.lowerBound, run.upperBound)
                var kept: [MapArea] = []
                for i in from...to {
                    let areas: AreaList
                    do { areas = try AreaList(checking: [read[i]!]) } catch {
                        throw CatalogError.storage("the map area blocks are corrupt: block \(spans[i].seq): \(error.reason)")
                    }
                    for k in areas.indices {
                        guard let key = OSMObjectKey.order(of: areas.id(of: k)) else { return false }
                        if !changed.contains(OSMObjectKey.packed(key)) { kept.append(areas[k]) }
                    }
                }
                var end2 = nextAdded
                while end2 < addedTo.count && addedTo[end2] <= to { end2 += 1 }
                let merged = AreaList(OSMObjectKey.merged(kept, Array(addedAreas[nextAdded..<end2]), id: \.id))
                nextAdded = end2
                var blocks: [[UInt8]] = []
                var made: [(first: Int64, last: Int64)] = []
                for start in stride(from: 0, to: merged.count, by: areaBlockSize) {
                    let end = min(merged.count, start + areaBlockSize)
                    blocks.append(merged.block(start..<end))
                    made.append(
                        (
                            OSMObjectKey.packed(OSMObjectKey.order(of: merged.id(of: start))!),
                            OSMObjectKey.packed(OSMObjectKey.order(of: merged.id(of: end - 1))!)
                        )
                    )
                }
                let placed = try blockSpans.place(blocks.count, replacing: run, gap: gap, read: &read, widened: &widened) { i in
                    let block = try Data.fetchOne(db.cachedStatement(sql: "SELECT data FROM map_area_block WHERE seq = ?"), arguments: [spans[i].seq])
                    guard let block else { throw CatalogError.storage("map area block \(spans[i].seq) has a span but no block") }
                    return [UInt8](block)
                }
                guard case .numbered(let seqs) = placed else {
                    if case .widened = placed { continue runs }
                    return false
                }
                rewrites.append((from, to, blocks, made, seqs))
            }
            break
        }
        let delete = try db.makeStatement(sql: "DELETE FROM map_area_block WHERE seq >= ? AND seq <= ?")
        let deleteSpans = try db.makeStatement(sql: "DELETE FROM map_area_range WHERE seq >= ? AND seq <= ?")
        let insert = try db.makeStatement(sql: "INSERT INTO map_area_block (seq, data) VALUES (?, ?)")
        let insertSpan = try db.makeStatement(sql: "INSERT INTO map_area_range (seq, first, last) VALUES (?, ?, ?)")
        var top = spans[spans.count - 1].seq
        for rewrite in rewrites {
            let bounds: StatementArguments = [spans[rewrite.from].seq, spans[rewrite.to].seq]
            try delete.execute(arguments: bounds)
            try deleteSpans.execute(arguments: bounds)
            for (k, block) in rewrite.blocks.enumerated() {
                try insert.execute(arguments: [rewrite.seqs[k], Data(block)])
                try insertSpan.execute(arguments: [rewrite.seqs[k], rewrite.spans[k].first, rewrite.spans[k].last])
                top = max(top, rewrite.seqs[k])
            }
        }
        if let newSea {
            // The sea made again: its old blocks go, the new ones come after every object's.
            if objectBlocks < spans.count {
                let bounds: StatementArguments = [spans[objectBlocks].seq, spans[spans.count - 1].seq]
                try delete.execute(arguments: bounds)
                try deleteSpans.execute(arguments: bounds)
            }
            for (k, block) in AreaList(newSea).blocks(size: areaBlockSize).enumerated() {
                let seq = top + Int64(k + 1) * gap
                try insert.execute(arguments: [seq, Data(block)])
                try insertSpan.execute(arguments: [seq, seaSpan, seaSpan])
            }
        }
        return true
    }

    /// Every house, in the order written.
    static func houses(_ db: Database) throws -> HouseList {
        let blocks = try houseBlocks(db)
        return try AddressBlock.CorruptBlock.reading("the address blocks are") { () throws(AddressBlock.CorruptBlock) in
            try HouseList(checking: blocks)
        }
    }

    /// The houses' blocks as stored, in order, not yet checked.
    static func houseBlocks(_ db: Database) throws -> [HouseList.Block] {
        var blocks: [HouseList.Block] = []
        let rows = try Row.fetchCursor(db, sql: "SELECT count, data FROM address_block ORDER BY seq")
        while let row = try rows.next() {
            let data: Data = row[1]
            blocks.append(HouseList.Block(bytes: [UInt8](data), count: row[0]))
        }
        return blocks
    }

    /// Replaces every house with these, their blocks as they are, numbered `houseBlockGap` apart; and, when every
    /// house is an OpenStreetMap object's and the list is in `OSMObjectKey` order, the objects each block spans
    /// (`address_block_range`), so that a change file rewrites only the blocks it reaches (`replaceHouses`).
    /// - Parameter ranges: false for the migration that made the blocks (v5), older than the table of ranges.
    static func writeHouses(_ houses: HouseList, _ db: Database, ranges: Bool = true, gap: Int64 = houseBlockGap) throws {
        try db.execute(sql: "DELETE FROM address_block")
        if ranges { try db.execute(sql: "DELETE FROM address_block_range") }
        let blocks = houses.blocks
        let spans = ranges ? try BlockSpans.ofHouses(blocks) : nil
        let insert = try db.makeStatement(sql: "INSERT INTO address_block (seq, count, data) VALUES (?, ?, ?)")
        let range = ranges ? try db.makeStatement(sql: "INSERT INTO address_block_range (seq, first, last) VALUES (?, ?, ?)") : nil
        for (i, block) in blocks.enumerated() {
            let seq = Int64(i) * gap
            try insert.execute(arguments: [seq, block.count, Data(block.bytes)])
            if let span = spans?[i] { try range?.execute(arguments: [seq, span.first, span.last]) }
        }
    }

    /// How far apart a whole write numbers the house blocks: room for the blocks a change file's rewrite of a few
    /// adjacent ones makes between their neighbours.
    static let houseBlockGap: Int64 = 1 << 16

    /// The objects (`OSMObjectKey.packed`) each house block spans, by its `seq` (migration v11).
    static let houseRangeTableSQL = "CREATE TABLE address_block_range (seq INTEGER PRIMARY KEY, first INTEGER NOT NULL, last INTEGER NOT NULL)"

    /// Takes the houses of the `changed` objects (`OSMObjectKey.packed` keys) out of the stored blocks and puts
    /// `added` (theirs, in `OSMObjectKey.inOrder`'s order) in, reading and writing only the blocks whose span
    /// (`address_block_range`) holds a changed object or an added house's place: a change file's cost grows with the
    /// file, not with the country (issue 57). Consecutive blocks reached are decoded, merged and encoded together, and
    /// take numbers between their neighbours'.
    /// - Returns: the blocks written anew and how many there are after; nil, with nothing written, when the store
    ///   has no spans (a database older than them, or houses that are not OpenStreetMap objects'), an added house is
    ///   not of a changed object, or there is no room between the neighbours' numbers: the caller rewrites the list
    ///   whole (`writeHouses`, which numbers the blocks apart again).
    /// - Parameter gap: as far past the first or last block as new ones are numbered (`houseBlockGap`; tests make it small).
    static func replaceHouses(
        changed: Set<Int64>,
        added: HouseList,
        _ db: Database,
        gap: Int64 = houseBlockGap
    ) throws -> (encoded: Int, of: Int)? {
        let blockSpans = try BlockSpans(db, table: "address_block_range")
        let spans = blockSpans.rows
        guard !spans.isEmpty, blockSpans.objectBlocks == spans.count else { return nil }
        let addedHouses = Array(added)
        var addedKeys: [(type: Int, id: Int64, part: Int)?] = []
        addedKeys.reserveCapacity(addedHouses.count)
        for house in addedHouses {
            guard let key = OSMObjectKey.order(of: house.id), changed.contains(OSMObjectKey.packed(key)) else { return nil }
            addedKeys.append(key)
        }
        let (touched, addedTo) = blockSpans.reached(changed: changed, added: addedKeys.map { OSMObjectKey.packed($0!) })
        // The blocks reached, read and their ids looked at: most that a changed object's span reaches (an untagged
        // way node among the houses, say) hold none of its houses, and stay as they are.
        var read: [Int: HouseList.Block] = [:]
        let gains = Set(addedTo)
        for i in touched {
            guard
                let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT count, data FROM address_block WHERE seq = ?"), arguments: [spans[i].seq])
            else {
                throw CatalogError.storage("house block \(spans[i].seq) has a span but no block")
            }
            let block = HouseList.Block(bytes: [UInt8](row[1] as Data), count: row[0])
            var (loses, foreign) = (false, false)
            var failure: AddressBlock.CorruptBlock?
            block.bytes.withUnsafeBytes { bytes in
                do throws(AddressBlock.CorruptBlock) {
                    try AddressBlock.forEachID(bytes, count: block.count) { id in
                        guard let key = OSMObjectKey.order(of: id.assumingMemoryBound(to: UInt8.self)) else {
                            foreign = true
                            return
                        }
                        if changed.contains(OSMObjectKey.packed(key)) { loses = true }
                    }
                } catch {
                    failure = error
                }
            }
            if let failure { throw CatalogError.storage("the address blocks are corrupt: block \(spans[i].seq): \(failure.reason)") }
            if foreign { return nil }
            if loses || gains.contains(i) { read[i] = block }
        }
        // Runs of consecutive blocks that change, each made again in memory before anything is written. A run with no
        // room between its neighbours' numbers takes them in (`BlockSpans.widened`) and is made again.
        var rewrites: [(from: Int, to: Int, blocks: [HouseList.Block], spans: [(first: Int64, last: Int64)], seqs: [Int64])] = []
        var widened = Set<Int>()
        var kept: [AddressPoint] = []
        var keptKeys: [(type: Int, id: Int64, part: Int)?] = []
        var merged: [AddressPoint] = []
        runs: while true {
            rewrites.removeAll(keepingCapacity: true)
            var nextAdded = 0
            for run in BlockSpans.runs(read.keys) {
                let (from, to) = (run.lowerBound, run.upperBound)
                kept.removeAll(keepingCapacity: true)
                keptKeys.removeAll(keepingCapacity: true)
                for i in from...to {
                    let houses: [AddressPoint]
                    do { houses = try HouseList.decode(read[i]!) } catch {
                        throw CatalogError.storage("the address blocks are corrupt: block \(spans[i].seq): \(error.reason)")
                    }
                    for house in houses {
                        guard let key = OSMObjectKey.order(of: house.id) else { return nil }
                        if !changed.contains(OSMObjectKey.packed(key)) {
                            kept.append(house)
                            keptKeys.append(key)
                        }
                    }
                }
                var end2 = nextAdded
                while end2 < addedTo.count && addedTo[end2] <= to { end2 += 1 }
                merged.removeAll(keepingCapacity: true)
                OSMObjectKey.merge(kept[...], keptKeys[...], addedHouses[nextAdded..<end2], addedKeys[nextAdded..<end2], into: &merged)
                nextAdded = end2
                let blocks = HouseList(merged).blocks
                var made: [(first: Int64, last: Int64)] = []
                var at = 0
                for block in blocks {
                    let first = OSMObjectKey.packed(OSMObjectKey.order(of: merged[at].id)!)
                    let last = OSMObjectKey.packed(OSMObjectKey.order(of: merged[at + block.count - 1].id)!)
                    made.append((first, last))
                    at += block.count
                }
                let placed = try blockSpans.place(blocks.count, replacing: run, gap: gap, read: &read, widened: &widened) { i in
                    let row = try Row.fetchOne(
                        db.cachedStatement(sql: "SELECT count, data FROM address_block WHERE seq = ?"),
                        arguments: [spans[i].seq]
                    )
                    guard let row else { throw CatalogError.storage("house block \(spans[i].seq) has a span but no block") }
                    return HouseList.Block(bytes: [UInt8](row[1] as Data), count: row[0])
                }
                guard case .numbered(let seqs) = placed else {
                    if case .widened = placed { continue runs }
                    return nil
                }
                rewrites.append((from, to, blocks, made, seqs))
            }
            break
        }
        let delete = try db.makeStatement(sql: "DELETE FROM address_block WHERE seq >= ? AND seq <= ?")
        let deleteSpans = try db.makeStatement(sql: "DELETE FROM address_block_range WHERE seq >= ? AND seq <= ?")
        let insert = try db.makeStatement(sql: "INSERT INTO address_block (seq, count, data) VALUES (?, ?, ?)")
        let insertSpan = try db.makeStatement(sql: "INSERT INTO address_block_range (seq, first, last) VALUES (?, ?, ?)")
        var encoded = 0
        var count = spans.count
        for rewrite in rewrites {
            let bounds: StatementArguments = [spans[rewrite.from].seq, spans[rewrite.to].seq]
            try delete.execute(arguments: bounds)
            try deleteSpans.execute(arguments: bounds)
            for (k, block) in rewrite.blocks.enumerated() {
                try insert.execute(arguments: [rewrite.seqs[k], block.count, Data(block.bytes)])
                try insertSpan.execute(arguments: [rewrite.seqs[k], rewrite.spans[k].first, rewrite.spans[k].last])
            }
            encoded += rewrite.blocks.count
            count += rewrite.blocks.count - (rewrite.to - rewrite.from + 1)
        }
        return (encoded, count)
    }

    /// Migration v5: the `address` table's rows (one a house) become blocks (`AddressBlock`), and the table goes.
    static func moveAddressesIntoBlocks(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE address_block (seq INTEGER PRIMARY KEY, count INTEGER NOT NULL, data BLOB NOT NULL)")
        var houses = HouseList()
        let rows = try Row.fetchCursor(db, sql: "SELECT id, street, place, housenumber, unit, postcode, city, lat, lon FROM address ORDER BY rowid")
        while let row = try rows.next() {
            houses.append(
                AddressPoint(
                    id: row[0],
                    street: row[1],
                    place: row[2],
                    housenumber: row[3],
                    unit: row[4],
                    postcode: row[5],
                    city: row[6],
                    latitude: row[7],
                    longitude: row[8]
                )
            )
        }
        try writeHouses(houses, db, ranges: false)
        try db.execute(sql: "DROP TABLE address")
    }

    /// The houses POIs carry in their own `addr:*` tags (`AddressPoint.houses`), by POI id, for the CLI (a server
    /// keeps them in its state): through the partial index of the POIs whose tags name `addr:housenumber`
    /// (migration v7).
    public func poiHouses() throws(CatalogError) -> [String: [AddressPoint]] {
        try read { db in
            var houses: [String: [AddressPoint]] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT id, city, lat, lon, tags FROM poi WHERE \(Self.namesHouseNumber)")
            while let row = try rows.next() {
                let id: String = row[0]
                let found = AddressPoint.houses(id: id, tags: TagsJSON.decode(row[4]), city: row[1], latitude: row[2], longitude: row[3])
                if !found.isEmpty { houses[id] = found }
            }
            return houses
        }
    }

    /// The condition of the partial index `poi_housenumber`: the tags' JSON has the key `addr:housenumber` (a
    /// superset: a value with that text is let through, and `AddressPoint.houses` decides).
    static let namesHouseNumber = #"instr(tags, '"addr:housenumber"') > 0"#

    public func poiIDs(prefix: String) throws(CatalogError) -> [String] {
        try read { db in
            // A range on the unique index instead of LIKE, whose wildcards the prefix could contain.
            try String.fetchAll(db, sql: "SELECT id FROM poi WHERE id >= ? AND id < ?", arguments: [prefix, prefix + "\u{10FFFF}"])
        }
    }

    public func loadAddresses() throws(CatalogError) -> AddressData {
        try read { db in
            var data = AddressData()
            data.addresses = try Self.houses(db)
            data.streets = try Self.streets(db)
            data.areas = try Self.areas(db)
            return data
        }
    }

    /// Every street and interpolation line, in the order of the ways they come from (`OSMObjectKey`): the order
    /// written by an import, and kept when a change file replaces some.
    static func streets(_ db: Database) throws -> [StreetLine] {
        var streets: [StreetLine] = []
        let lines = try Row.fetchCursor(db, sql: "SELECT id, kind, names, city, postcode, points, numbers FROM street_line ORDER BY rowid")
        while let row = try lines.next() {
            let names = (row[2] as String).split(separator: "\u{1F}").map(String.init)
            let numbers: [NumberedVertex] = (row[6] as String).split(separator: ",").compactMap { pair in
                let parts = pair.split(separator: ":")
                guard parts.count == 2, let v = Int(parts[0]), let n = Int(parts[1]) else { return nil }
                return NumberedVertex(vertex: v, number: n)
            }
            streets.append(
                StreetLine(
                    id: row[0],
                    kind: StreetLine.Kind(rawValue: row[1]) ?? .street,
                    names: names,
                    points: Self.decodePoints(row[5]),
                    numbers: numbers,
                    city: row[3],
                    postcode: row[4]
                )
            )
        }
        return OSMObjectKey.inOrder(streets, id: \.id)
    }

    /// Adds street lines (one with the id of a line already stored replaces it).
    static func insertStreets(_ streets: [StreetLine], _ db: Database) throws {
        let line = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO street_line (id, kind, names, city, postcode, points, numbers) VALUES (?, ?, ?, ?, ?, ?, ?)"
        )
        for l in streets {
            let numbers = l.numbers.map { "\($0.vertex):\($0.number)" }.joined(separator: ",")
            try line.execute(arguments: [
                l.id, l.kind.rawValue, l.names.joined(separator: "\u{1F}"), l.city, l.postcode, Self.encodePoints(l.points), numbers,
            ])
        }
    }

    /// The OpenStreetMap state is the mirror's (`updateOSM`): `osm` is not kept here.
    @discardableResult
    public func replaceAddresses(_ data: AddressData, osm: OSMMirrorState?) throws(CatalogError) -> String {
        let generation = UUID().uuidString
        do {
            try pool.write { db in
                try db.execute(sql: "DELETE FROM street_line")
                try Self.writeHouses(data.addresses, db)
                try Self.insertStreets(data.streets, db)
                try Self.writeAreas(data.areas, db)
                try db.execute(sql: "UPDATE address_state SET generation = ? WHERE id = 1", arguments: [generation])
            }
        } catch {
            throw .storage("\(error)")
        }
        return generation
    }

    public func addressGeneration() throws(CatalogError) -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT generation FROM address_state WHERE id = 1") }
    }

    /// Vertices as little-endian Int32 pairs in units of 1e-7° (OSM's own precision): 8 bytes a vertex.
    static func encodePoints(_ points: [Coordinate2]) -> Data {
        var bytes = [UInt8]()
        bytes.reserveCapacity(points.count * 8)
        func append(_ value: Int32) {
            let bits = UInt32(bitPattern: value)  // low byte first: little-endian on any host
            bytes.append(UInt8(truncatingIfNeeded: bits))
            bytes.append(UInt8(truncatingIfNeeded: bits >> 8))
            bytes.append(UInt8(truncatingIfNeeded: bits >> 16))
            bytes.append(UInt8(truncatingIfNeeded: bits >> 24))
        }
        for p in points {
            append(AddressData.storedUnits(p.latitude))
            append(AddressData.storedUnits(p.longitude))
        }
        return Data(bytes)
    }

    static func decodePoints(_ data: Data) -> [Coordinate2] {
        let bytes = [UInt8](data)
        var out: [Coordinate2] = []
        out.reserveCapacity(bytes.count / 8)
        func int32(_ at: Int) -> Int32 {
            Int32(bitPattern: UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24)
        }
        var i = 0
        while i + 8 <= bytes.count {
            out.append(Coordinate2(Double(int32(i)) / 1e7, Double(int32(i + 4)) / 1e7))
            i += 8
        }
        return out
    }
}
