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

    /// Water and building areas (migration v9) in `MapAreaBlock`s of 20 000, as PostgreSQL keeps them: a row an area
    /// cost a second at 400 k buildings, blocks a tenth of that.
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

    /// Replaces every map area with these, in their order.
    static func writeAreas(_ areas: AreaList, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM map_area_block")
        let statement = try db.cachedStatement(sql: "INSERT INTO map_area_block (seq, data) VALUES (?, ?)")
        for (seq, block) in areas.blocks().enumerated() { try statement.execute(arguments: [seq, Data(block)]) }
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

    /// Replaces every house with these, their blocks as they are.
    static func writeHouses(_ houses: HouseList, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM address_block")
        let insert = try db.makeStatement(sql: "INSERT INTO address_block (seq, count, data) VALUES (?, ?, ?)")
        for (seq, block) in houses.blocks.enumerated() {
            try insert.execute(arguments: [seq, block.count, Data(block.bytes)])
        }
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
        try writeHouses(houses, db)
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
