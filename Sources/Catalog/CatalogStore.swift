import Foundation
import GRDB
import Records

/// The durable home of POIs and pins: one SQLite database through GRDB.
///
/// WAL mode with `synchronous = FULL`: every committed transaction is fsynced before `write` returns, so an
/// acknowledged write survives a crash of the process and of the machine. (NORMAL would survive a killed process
/// too — the WAL is in the OS cache — but not a power cut.) The fsync (~0.34 ms here) is paid once per group commit,
/// not per write (`SearchEngine.submit`): pin writes under load kept their rate with it (RESULTS.md, "Commits
/// fsynced as documented"). Every write is one transaction, and untrusted text reaches SQL only as bound arguments.
public final class CatalogStore: StoreOfRecord {
    public let path: String
    public var location: String { path }
    /// One process owns the file: there is no feed to follow.
    public var feed: (any ChangeFeed)? { nil }
    let pool: DatabasePool
    /// Checkpoints after the transactions that leave them to it (`updateOSM`).
    let checkpointer: BackgroundCheckpointer

    public init(path: String) throws(CatalogError) {
        self.path = path
        checkpointer = BackgroundCheckpointer(path: path)
        var configuration = Configuration()
        // Another process on the same file (a CLI command beside the server, or beside another command) may hold a
        // lock for a moment — every opener checks the migrations in a write transaction: wait for it, do not fail
        // with "database is locked".
        configuration.busyMode = .timeout(CatalogStore.busyTimeout)
        do {
            let directory = (path as NSString).deletingLastPathComponent
            if !directory.isEmpty { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            pool = try DatabasePool(path: path, configuration: configuration)
            // Set on the writer once the pool is open: GRDB turns WAL on after `prepareDatabase` has run and sets
            // `synchronous = NORMAL` with it, so the pragma set there was undone and no commit was fsynced.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            try CatalogStore.migrator.migrate(pool)
        } catch {
            throw .cannotOpen(path: path, reason: "\(error)")
        }
    }

    /// How long an open or a write waits for another process's lock on the file, in seconds.
    static let busyTimeout: TimeInterval = 30
    /// SQLite's automatic checkpoint: after a commit that leaves this many pages in the log (its default).
    static let autocheckpointPages = 1000

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: poi and pin tables") { db in
            try db.execute(
                sql: """
                    CREATE TABLE poi (
                        rowid INTEGER PRIMARY KEY,
                        id TEXT NOT NULL UNIQUE,
                        name TEXT NOT NULL,
                        category TEXT NOT NULL,
                        address TEXT,
                        city TEXT,
                        country TEXT,
                        lat REAL NOT NULL,
                        lon REAL NOT NULL,
                        tags TEXT NOT NULL DEFAULT '{}'
                    );
                    CREATE TABLE pin (
                        rowid INTEGER PRIMARY KEY,
                        id TEXT NOT NULL UNIQUE,
                        uniqueKey TEXT NOT NULL,
                        firstName TEXT NOT NULL,
                        lastName TEXT NOT NULL,
                        mapString TEXT NOT NULL,
                        mediaURL TEXT NOT NULL,
                        lat REAL NOT NULL,
                        lon REAL NOT NULL,
                        createdAt TEXT NOT NULL,
                        updatedAt TEXT NOT NULL
                    );
                    CREATE INDEX pin_updatedAt ON pin(updatedAt);
                    CREATE INDEX pin_uniqueKey ON pin(uniqueKey);
                    """
            )
        }
        migrator.registerMigration("v2: change sequence") { db in
            try db.execute(sql: "CREATE TABLE store_state (id INTEGER PRIMARY KEY CHECK (id = 1), identity TEXT NOT NULL, sequence INTEGER NOT NULL)")
            try db.execute(sql: "INSERT INTO store_state (id, identity, sequence) VALUES (1, ?, 0)", arguments: [UUID().uuidString])
        }
        migrator.registerMigration("v3: addresses and street lines") { db in try db.execute(sql: addressTablesSQL) }
        migrator.registerMigration("v4: pin owner") { db in
            // Pins placed before ownership was recorded have none: only keys with the pins:write scope change them.
            try db.execute(sql: "ALTER TABLE pin ADD COLUMN owner TEXT")
            try db.execute(sql: "CREATE INDEX pin_owner ON pin(owner)")
        }
        migrator.registerMigration("v5: houses in blocks") { db in try moveAddressesIntoBlocks(db) }
        migrator.registerMigration("v6: address generation") { db in
            try db.execute(sql: "CREATE TABLE address_state (id INTEGER PRIMARY KEY CHECK (id = 1), generation TEXT NOT NULL)")
            try db.execute(sql: "INSERT INTO address_state (id, generation) VALUES (1, ?)", arguments: [UUID().uuidString])
        }
        migrator.registerMigration("v7: POIs with house numbers") { db in
            try db.execute(sql: "CREATE INDEX poi_housenumber ON poi(id) WHERE \(namesHouseNumber)")
        }
        migrator.registerMigration("v8: OpenStreetMap mirror") { db in try db.execute(sql: mirrorTablesSQL) }
        migrator.registerMigration("v9: map areas") { db in try db.execute(sql: areaTableSQL) }
        migrator.registerMigration("v10: the extract's box and its coastline ways") { db in
            try db.execute(sql: "ALTER TABLE osm_state ADD COLUMN box TEXT")
            try db.execute(sql: "CREATE TABLE osm_coastline (way INTEGER PRIMARY KEY)")
        }
        // Empty at first: the next whole write of the houses fills it (`writeHouses`), and change files then rewrite
        // only the blocks they reach (`replaceHouses`).
        migrator.registerMigration("v11: the objects each house and area block spans") { db in
            try db.execute(sql: houseRangeTableSQL)
            try db.execute(sql: areaRangeTableSQL)
        }
        // A relation's member rows found by the relation, not by a scan of every member row: each multipolygon a
        // change file put or deleted scanned the table, a quarter of a file's transaction on the 5 M-node extract and
        // growing with the extract (RESULTS.md, "Change files: the mirror's members by relation, smaller blocks").
        migrator.registerMigration("v12: the mirror's members by relation") { db in
            try db.execute(sql: "CREATE INDEX osm_member_relation ON osm_member (relation)")
        }
        return migrator
    }

    // MARK: POIs

    static let upsertPOI = """
        INSERT INTO poi (id, name, category, address, city, country, lat, lon, tags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET name = excluded.name, category = excluded.category, address = excluded.address,
            city = excluded.city, country = excluded.country, lat = excluded.lat, lon = excluded.lon, tags = excluded.tags
        """

    static func arguments(_ poi: POIRecord) -> StatementArguments {
        [poi.id, poi.name, poi.category, poi.address, poi.city, poi.country, poi.lat, poi.lon, TagsJSON.encode(poi.tags)]
    }

    /// Inserts or replaces one POI in its own transaction; durable when it returns.
    public func upsert(_ poi: POIRecord) throws(CatalogError) {
        try commit([.put(.poi(poi))])
    }

    /// Every record and the change sequence they stand at, read in one transaction (a consistent view even while
    /// another process writes): POIs in insertion order, handed over `size` at a time, so a loader never holds them
    /// all at once; then all pins.
    public func loadAll(blockSize size: Int, pois body: ([POIRecord]) -> Void) throws(CatalogError) -> (pins: [PinRecord], sequence: ChangeSequence) {
        try read { db in
            let sequence = try CatalogStore.changeSequence(db)
            var block: [POIRecord] = []
            block.reserveCapacity(size)
            let cursor = try Row.fetchCursor(db, sql: "SELECT id, name, category, address, city, country, lat, lon, tags FROM poi ORDER BY rowid")
            while let row = try cursor.next() {
                block.append(CatalogStore.poi(row))
                if block.count == size {
                    body(block)
                    block.removeAll(keepingCapacity: true)
                }
            }
            if !block.isEmpty { body(block) }
            let pins = try Row.fetchAll(
                db,
                sql: "SELECT id, uniqueKey, firstName, lastName, mapString, mediaURL, lat, lon, createdAt, updatedAt, owner FROM pin ORDER BY rowid"
            )
            .map(CatalogStore.pin)
            return (pins, sequence)
        }
    }

    public func poi(id: String) throws(CatalogError) -> POIRecord? {
        try read { db in
            try Row.fetchOne(db, sql: "SELECT id, name, category, address, city, country, lat, lon, tags FROM poi WHERE id = ?", arguments: [id])
                .map(CatalogStore.poi)
        }
    }

    /// Moves the write-ahead log into the database file and empties it (before the file is moved or copied, and at the
    /// end of `poi import`: SQLite's automatic checkpoints leave the last pages in the log — 33 541 pages, 131 MB, after
    /// importing a 5 M-node extract — so the file alone did not hold the import, and the next opener copied them in).
    /// Another process's readers make it wait at most `busyTimeout`; a log it could not empty stays as it is.
    public func checkpoint() throws(CatalogError) {
        do { try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") } } catch {
            throw .storage("\(error)")
        }
    }

    /// Waits until the checkpoints left to the background (`updateOSM`) are done.
    /// - Returns: the last one's error if it failed; the log then waits for the next checkpoint, nothing is lost.
    @discardableResult
    public func waitForCheckpoints() -> String? { checkpointer.wait() }

    public func poiCount() throws(CatalogError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM poi") ?? 0 }
    }

    static func poi(_ row: Row) -> POIRecord {
        let tagsJSON: String = row[8]
        let tags = TagsJSON.decode(tagsJSON)
        return POIRecord(
            id: row[0],
            name: row[1],
            category: row[2],
            address: row[3],
            city: row[4],
            country: row[5],
            lat: row[6],
            lon: row[7],
            tags: tags
        )
    }

    // MARK: Pins

    static let upsertPin = """
        INSERT INTO pin (id, uniqueKey, firstName, lastName, mapString, mediaURL, lat, lon, createdAt, updatedAt, owner)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET uniqueKey = excluded.uniqueKey, firstName = excluded.firstName,
            lastName = excluded.lastName, mapString = excluded.mapString, mediaURL = excluded.mediaURL,
            lat = excluded.lat, lon = excluded.lon, updatedAt = excluded.updatedAt, owner = excluded.owner
        """

    static func arguments(_ pin: PinRecord) -> StatementArguments {
        [pin.id, pin.uniqueKey, pin.firstName, pin.lastName, pin.mapString, pin.mediaURL, pin.lat, pin.lon, pin.createdAt, pin.updatedAt, pin.owner]
    }

    public func allPins() throws(CatalogError) -> [PinRecord] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT id, uniqueKey, firstName, lastName, mapString, mediaURL, lat, lon, createdAt, updatedAt, owner FROM pin ORDER BY rowid"
            )
            .map(CatalogStore.pin)
        }
    }

    static func pin(_ row: Row) -> PinRecord {
        PinRecord(
            id: row[0],
            uniqueKey: row[1],
            firstName: row[2],
            lastName: row[3],
            mapString: row[4],
            mediaURL: row[5],
            lat: row[6],
            lon: row[7],
            createdAt: row[8],
            updatedAt: row[9],
            owner: row[10]
        )
    }

    // MARK: Transactions

    /// The store's identity and change sequence now.
    public func changeSequence() throws(CatalogError) -> ChangeSequence {
        try read { db in try CatalogStore.changeSequence(db) }
    }

    static func changeSequence(_ db: Database) throws -> ChangeSequence {
        guard let row = try Row.fetchOne(db, sql: "SELECT identity, sequence FROM store_state WHERE id = 1") else {
            throw CatalogError.storage("store_state has no row")
        }
        return ChangeSequence(identity: row[0], sequence: UInt64(row[1] as Int64))
    }

    /// Commits the changes in one write transaction (fsynced when this returns), counted in the change sequence.
    @discardableResult
    public func commit(_ changes: [StoreChange]) throws(CatalogError) -> (before: ChangeSequence, after: ChangeSequence) {
        let result = try sequencedWrite { db in
            let poiStatement = try db.cachedStatement(sql: CatalogStore.upsertPOI)
            let pinStatement = try db.cachedStatement(sql: CatalogStore.upsertPin)
            for change in changes {
                switch change {
                case .put(.poi(let poi)): try poiStatement.execute(arguments: CatalogStore.arguments(poi))
                case .put(.pin(let pin)): try pinStatement.execute(arguments: CatalogStore.arguments(pin))
                case .delete(let kind, let id): try db.execute(sql: "DELETE FROM \(kind == .poi ? "poi" : "pin") WHERE id = ?", arguments: [id])
                }
            }
        }
        return (result.before, result.after)
    }

    /// Runs `body` in one write transaction (committed and fsynced when this returns), counted in the change
    /// sequence.
    func write<T>(_ body: (Database) throws -> T) throws(CatalogError) -> T {
        try sequencedWrite(body).value
    }

    /// `write`, also answering the change sequence just before and just after this transaction: when `before` is
    /// what a reader of the store last saw, nobody else wrote in between.
    func sequencedWrite<T>(_ body: (Database) throws -> T) throws(CatalogError) -> (value: T, before: ChangeSequence, after: ChangeSequence) {
        do {
            return try pool.write { db in
                let before = try CatalogStore.changeSequence(db)
                let value = try body(db)
                try db.execute(sql: "UPDATE store_state SET sequence = sequence + 1 WHERE id = 1")
                var after = before
                after.sequence += 1
                return (value, before, after)
            }
        } catch let error as CatalogError {
            throw error
        } catch {
            throw .storage("\(error)")
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws(CatalogError) -> T {
        do {
            return try pool.read(body)
        } catch let error as CatalogError {
            // Already phrased for users (a corrupt block says which): not wrapped a second time.
            throw error
        } catch {
            throw .storage("\(error)")
        }
    }
}
