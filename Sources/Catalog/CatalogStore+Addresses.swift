import Foundation
import GRDB
import GRDBSQLite
import GeoCore

/// Addresses and street lines of the last OpenStreetMap import, in two tables beside the POIs. They are not counted
/// in the change sequence: the in-memory address index is built from them at start-up, not from a snapshot.
extension CatalogStore {
    public var keepsAddresses: Bool { true }

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

    public func poiIDs(prefix: String) throws(CatalogError) -> [String] {
        try read { db in
            // A range on the unique index instead of LIKE, whose wildcards the prefix could contain.
            try String.fetchAll(db, sql: "SELECT id FROM poi WHERE id >= ? AND id < ?", arguments: [prefix, prefix + "\u{10FFFF}"])
        }
    }

    public func loadAddresses() throws(CatalogError) -> AddressData {
        try read { db in
            var data = AddressData()
            let houses = try Row.fetchCursor(
                db,
                sql: "SELECT id, street, place, housenumber, unit, postcode, city, lat, lon FROM address ORDER BY rowid"
            )
            while let row = try houses.next() {
                data.addresses.append(
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
            let lines = try Row.fetchCursor(db, sql: "SELECT id, kind, names, city, postcode, points, numbers FROM street_line ORDER BY rowid")
            while let row = try lines.next() {
                let names = (row[2] as String).split(separator: "\u{1F}").map(String.init)
                let numbers: [NumberedVertex] = (row[6] as String).split(separator: ",").compactMap { pair in
                    let parts = pair.split(separator: ":")
                    guard parts.count == 2, let v = Int(parts[0]), let n = Int(parts[1]) else { return nil }
                    return NumberedVertex(vertex: v, number: n)
                }
                data.streets.append(
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
            return data
        }
    }

    public func replaceAddresses(_ data: AddressData) throws(CatalogError) {
        do {
            try pool.write { db in
                try db.execute(sql: "DELETE FROM address")
                try db.execute(sql: "DELETE FROM street_line")
                // 2.3 M rows for a country: bound straight to SQLite (GRDB's StatementArguments boxed each value and
                // took a third of writing them, by perf).
                let house = try RowInserter(
                    db,
                    "INSERT OR REPLACE INTO address (id, street, place, housenumber, unit, postcode, city, lat, lon) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                )
                for a in data.addresses {
                    try house.insert { row in
                        row.text(1, a.id)
                        row.text(2, a.street)
                        row.text(3, a.place)
                        row.text(4, a.housenumber)
                        row.text(5, a.unit)
                        row.text(6, a.postcode)
                        row.text(7, a.city)
                        row.double(8, a.latitude)
                        row.double(9, a.longitude)
                    }
                }
                let line = try db.makeStatement(
                    sql: "INSERT OR REPLACE INTO street_line (id, kind, names, city, postcode, points, numbers) VALUES (?, ?, ?, ?, ?, ?, ?)"
                )
                for l in data.streets {
                    let numbers = l.numbers.map { "\($0.vertex):\($0.number)" }.joined(separator: ",")
                    try line.execute(arguments: [
                        l.id, l.kind.rawValue, l.names.joined(separator: "\u{1F}"), l.city, l.postcode, Self.encodePoints(l.points), numbers,
                    ])
                }
            }
        } catch {
            throw .storage("\(error)")
        }
    }

    /// Vertices as little-endian Int32 pairs in units of 1e-7° (OSM's own precision): 8 bytes a vertex.
    static func encodePoints(_ points: [Coordinate2]) -> Data {
        var bytes = [UInt8]()
        bytes.reserveCapacity(points.count * 8)
        for p in points {
            for value in [Int32((p.latitude * 1e7).rounded()), Int32((p.longitude * 1e7).rounded())] {
                withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
            }
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

/// A prepared INSERT whose values are bound straight to SQLite, for writing millions of rows in one transaction.
struct RowInserter {
    let db: Database
    let statement: Statement

    init(_ db: Database, _ sql: String) throws {
        self.db = db
        statement = try db.makeStatement(sql: sql)
    }

    /// The values of one row, by 1-based column.
    struct Values {
        let statement: SQLiteStatement

        func text(_ column: Int32, _ value: String?) {
            guard var value else {
                sqlite3_bind_null(statement, column)
                return
            }
            // SQLITE_TRANSIENT: SQLite copies the bytes before this returns.
            value.withUTF8 { bytes in
                guard let base = bytes.baseAddress else {
                    _ = sqlite3_bind_text(statement, column, "", 0, RowInserter.transient)
                    return
                }
                _ = base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    sqlite3_bind_text(statement, column, $0, Int32(bytes.count), RowInserter.transient)
                }
            }
        }

        func double(_ column: Int32, _ value: Double) { sqlite3_bind_double(statement, column, value) }
    }

    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func insert(_ bind: (Values) -> Void) throws {
        let raw = statement.sqliteStatement
        sqlite3_reset(raw)
        bind(Values(statement: raw))
        let code = sqlite3_step(raw)
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: statement.sql)
        }
    }
}
