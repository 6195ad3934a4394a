import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Records
import Synchronization

/// The store of record in PostgreSQL, shared by several `poi serve` replicas (docs/ARCHITECTURE.md, "Consistency").
///
/// Tables `poi` and `pin` hold the records; every write transaction takes the next number of `store_state.sequence`
/// (its row lock orders writers, so numbers commit in order), writes the records, adds one `change` row per changed id
/// under that number, and wakes every follower with `NOTIFY poi_changes`. A follower reads the ids changed after the
/// number it applied, joined to their current rows, in one repeatable-read transaction: the records as the store has
/// them at that transaction's sequence. The wake-up only saves waiting for the next poll: the number is what says what
/// to read, so a dropped connection, a restarted replica or a restarted PostgreSQL loses nothing.
///
/// Two connections: one for reads and writes (one at a time), one for the feed (it LISTENs). Either is reopened on the
/// next call after it is lost; while PostgreSQL is away, calls fail with `CatalogError.unavailable`. Every value
/// reaches SQL as a bound parameter. Calls block their thread until PostgreSQL answers; they must not run on a
/// SwiftNIO event loop (the engine calls them from request tasks and its own threads).
public final class PostgresStore: StoreOfRecord, ChangeFeed {
    public let location: String
    let hosts: HostList
    let logger: Logger
    let main: Session
    let follower: Session
    /// The highest sequence announced by a NOTIFY, and the condition its waiters sleep on.
    let announced = NSCondition()
    /// Seconds the follower gives the rows of a feed read (`changes(after:)`): `feedProbeDeadline` at first and after
    /// every read that came back, doubled (up to 600) after one that did not. A read caught by a partition is given
    /// up within seconds and tried again on a new connection — left waiting, its connection came back only with TCP's
    /// next retransmission, up to 10 s after the network did — while a catch-up too large for the deadline gets
    /// the time it needs within a few tries.
    let feedRowsDeadline = Mutex<Int64>(PostgresStore.feedProbeDeadline)
    nonisolated(unsafe) var announcedSequence: UInt64 = 0  // SAFETY: only read and written under `announced`.
    static let channel = "poi_changes"

    /// Connects to `url` (`postgresql://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]…]/DATABASE[?…]`, libpq's convention:
    /// several hosts for failover, `target_session_attrs`, `sslmode`, `sslrootcert`, `connect_timeout`; see
    /// `StoreURL`) and brings its schema up to date.
    public init(url: String, logger: Logger = Logger(label: "poi.postgres")) throws(CatalogError) {
        let parsed = try StoreURL(url)
        hosts = try HostList(url: parsed)
        location = parsed.location
        var quiet = logger
        quiet.logLevel = .critical
        self.logger = quiet
        // The follower is the session that LISTENs (and reads the feed).
        (main, follower) = Session.pair(hosts: hosts, logger: quiet, names: ("main", "feed"))
        follower.listen(on: PostgresStore.channel) { [weak self] payload in self?.announce(UInt64(payload) ?? 0) }
        do {
            try main.run { connection in try PostgresSchema.migrate(connection, logger: quiet) }
        } catch {
            throw .cannotOpen(path: location, reason: error.description)
        }
    }

    private func announce(_ sequence: UInt64) {
        announced.lock()
        if sequence > announcedSequence { announcedSequence = sequence }
        announced.broadcast()
        announced.unlock()
    }

    /// Closes both connections.
    public func close() {
        main.close()
        follower.close()
    }

    deinit { close() }

    // MARK: Parsing the URL

    /// What is wrong with `url` as a store URL (nil: nothing), without connecting: for a usage error that names
    /// the option before anything is opened.
    public static func problem(with url: String) -> String? {
        do {
            _ = try StoreURL(url)
            return nil
        } catch {
            if case .cannotOpen(_, let reason) = error { return reason }
            return error.description
        }
    }

    // MARK: StoreOfRecord

    public var feed: (any ChangeFeed)? { self }

    public func changeSequence() throws(CatalogError) -> ChangeSequence {
        try main.run { connection in try PostgresStore.sequence(connection, logger: logger) }
    }

    static func sequence(_ connection: PostgresConnection, logger: Logger) throws -> ChangeSequence {
        let rows = try connection.query("SELECT identity, sequence FROM store_state WHERE id = 1", logger: logger).answer(on: connection)
        guard let row = rows.first else { throw CatalogError.storage("store_state has no row") }
        let (identity, sequence) = try row.decode((String, Int64).self)
        return ChangeSequence(identity: identity, sequence: UInt64(sequence))
    }

    public func poiCount() throws(CatalogError) -> Int {
        try main.run { connection in
            let rows = try connection.query("SELECT count(*) FROM poi", logger: logger).answer(on: connection)
            return Int(try rows.first?.decode(Int64.self) ?? 0)
        }
    }

    static let poiColumns = "id, name, category, address, city, country, lat, lon, tags"
    static let pinColumns = "id, unique_key, first_name, last_name, map_string, media_url, lat, lon, created_at, updated_at, owner"

    /// The columns `poi(_:)` or `pin(_:)` decode, in their order (the table is named as the kind).
    static func columns(_ kind: RecordKind) -> String { kind == .poi ? poiColumns : pinColumns }

    static func record(_ kind: RecordKind, _ row: PostgresRow) throws -> ImportedRecord {
        kind == .poi ? .poi(try poi(row)) : .pin(try pin(row))
    }

    public func loadAll(blockSize: Int, pois body: ([POIRecord]) -> Void) throws(CatalogError) -> (pins: [PinRecord], sequence: ChangeSequence) {
        try main.run { connection in
            try PostgresStore.transaction(connection, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger) {
                // The caller builds its indexes between two fetches: this read-only transaction may sit idle a while.
                _ = try connection.query("SET LOCAL idle_in_transaction_session_timeout = '10min'", logger: logger).answer(on: connection)
                let sequence = try PostgresStore.sequence(connection, logger: logger)
                _ = try connection.query(
                    PostgresQuery(unsafeSQL: "DECLARE every_poi NO SCROLL CURSOR FOR SELECT \(PostgresStore.poiColumns) FROM poi ORDER BY ord"),
                    logger: logger
                ).answer(on: connection)
                let fetch = PostgresQuery(unsafeSQL: "FETCH FORWARD \(max(1, blockSize)) FROM every_poi")
                while true {
                    let rows = try connection.query(fetch, logger: logger).answer(on: connection, within: 600)
                    let block = try rows.map(PostgresStore.poi)
                    if block.isEmpty { break }
                    body(block)
                }
                _ = try connection.query("CLOSE every_poi", logger: logger).answer(on: connection)
                let pins = try connection.query(PostgresQuery(unsafeSQL: "SELECT \(PostgresStore.pinColumns) FROM pin ORDER BY ord"), logger: logger)
                    .answer(on: connection, within: 600)
                    .map(PostgresStore.pin)
                return (pins, sequence)
            }
        }
    }

    /// Columns as `poiColumns` selects them.
    static func poi(_ row: PostgresRow) throws -> POIRecord {
        let c = try row.decode((String, String, String, String?, String?, String?, Double, Double, String).self)
        return POIRecord(id: c.0, name: c.1, category: c.2, address: c.3, city: c.4, country: c.5, lat: c.6, lon: c.7, tags: TagsJSON.decode(c.8))
    }

    /// Columns as `pinColumns` selects them.
    static func pin(_ row: PostgresRow) throws -> PinRecord {
        let c = try row.decode((String, String, String, String, String, String, Double, Double, String, String, String?).self)
        return PinRecord(
            id: c.0,
            uniqueKey: c.1,
            firstName: c.2,
            lastName: c.3,
            mapString: c.4,
            mediaURL: c.5,
            lat: c.6,
            lon: c.7,
            createdAt: c.8,
            updatedAt: c.9,
            owner: c.10
        )
    }

    /// The record with this id, as the store has it now (tests and checks).
    public func record(_ kind: RecordKind, id: String) throws(CatalogError) -> ImportedRecord? {
        try main.run { connection in
            var binds = PostgresBindings()
            binds.append(id)
            let query = PostgresQuery(unsafeSQL: "SELECT \(PostgresStore.columns(kind)) FROM \(kind.rawValue) WHERE id = $1", binds: binds)
            return try connection.query(query, logger: logger).answer(on: connection).first.map { try PostgresStore.record(kind, $0) }
        }
    }

    @discardableResult
    public func commit(_ changes: [StoreChange]) throws(CatalogError) -> (before: ChangeSequence, after: ChangeSequence) {
        let prepared: PreparedWrite
        do {
            prepared = try PreparedWrite(PostgresStore.lastChangePerRecord(changes))
        } catch {
            throw .storage("cannot encode the records: \(error)")
        }
        if let statement = PostgresStore.singleRecordStatement(prepared) {
            return try main.run { connection in
                let rows = try connection.query(statement, logger: logger).answer(on: connection)
                guard let row = rows.first else { throw CatalogError.storage("store_state has no row") }
                let (identity, number) = try row.decode((String, Int64).self)
                let after = ChangeSequence(identity: identity, sequence: UInt64(number))
                return (ChangeSequence(identity: identity, sequence: after.sequence - 1), after)
            }
        }
        return try main.run { connection in
            try PostgresStore.transaction(connection, "BEGIN", logger: logger) {
                if prepared.deadline > PostgresStore.statementDeadline {
                    // An import's batch: PostgreSQL's statements take a while, and so may the client's between them.
                    _ = try connection.query("SET LOCAL idle_in_transaction_session_timeout = '60s'", logger: logger).answer(on: connection)
                }
                // The row lock on store_state orders writers: numbers commit in the order they are taken. It is taken
                // first, by every write, so no two writes lock records in opposite orders (a deadlock).
                let rows = try connection.query(
                    "UPDATE store_state SET sequence = sequence + 1 WHERE id = 1 RETURNING identity, sequence",
                    logger: logger
                ).answer(on: connection)
                guard let row = rows.first else { throw CatalogError.storage("store_state has no row") }
                let (identity, number) = try row.decode((String, Int64).self)
                let after = ChangeSequence(identity: identity, sequence: UInt64(number))
                let before = ChangeSequence(identity: identity, sequence: after.sequence - 1)
                try PostgresStore.writeRecords(prepared, connection: connection, logger: logger)
                try PostgresStore.writeChanges(prepared, sequence: number, connection: connection, logger: logger)
                _ = try connection.query("SELECT pg_notify('poi_changes', \(String(number)))", logger: logger).answer(on: connection)
                return (before, after)
            }
        }
    }

    /// One change per record, the last one given for it, in the order of those last changes.
    static func lastChangePerRecord(_ changes: [StoreChange]) -> [StoreChange] {
        var last: [String: Int] = [:]
        for (index, change) in changes.enumerated() {
            switch change {
            case .put(let record): last[key(record.kind, record.id)] = index
            case .delete(let kind, let id): last[key(kind, id)] = index
            }
        }
        return changes.indices.filter { index in
            switch changes[index] {
            case .put(let record): return last[key(record.kind, record.id)] == index
            case .delete(let kind, let id): return last[key(kind, id)] == index
            }
        }.map { changes[$0] }
    }

    static func key(_ kind: RecordKind, _ id: String) -> String { "\(kind.rawValue)\u{0}\(id)" }

    /// A write's statements' payloads, made before its transaction begins: nothing slow happens between a
    /// transaction's statements (PostgreSQL ends a session idle in a transaction after a few seconds, and the
    /// store_state row lock it holds orders every writer).
    struct PreparedWrite {
        var poiJSON: String?
        var pinJSON: String?
        var deleted: [RecordKind: [String]] = [:]
        var poiIDs: [String] = []
        var pinIDs: [String] = []
        /// A client's write (a few records) gets the statement deadline, so a replica cut off mid-write answers within
        /// it; an import's batch of thousands gets a minute.
        var deadline: Int64

        init(_ changes: [StoreChange]) throws {
            deadline = changes.count > 100 ? 60 : statementDeadline
            var pois: [POIRow] = []
            var pins: [PinRow] = []
            for change in changes {
                switch change {
                case .put(.poi(let poi)): pois.append(POIRow(poi))
                case .put(.pin(let pin)): pins.append(PinRow(pin))
                case .delete(let kind, let id): deleted[kind, default: []].append(id)
                }
            }
            let encoder = JSONEncoder()
            if !pois.isEmpty { poiJSON = String(decoding: try encoder.encode(pois), as: UTF8.self) }
            if !pins.isEmpty { pinJSON = String(decoding: try encoder.encode(pins), as: UTF8.self) }
            poiIDs = pois.map(\.id) + (deleted[.poi] ?? [])
            pinIDs = pins.map(\.id) + (deleted[.pin] ?? [])
        }
    }

    /// The upsert of records of `kind` from a JSON array bound as $1, with `filter` (a WHERE clause, or nothing)
    /// on the rows it takes.
    static func upsertSQL(_ kind: RecordKind, filter: String = "") -> String {
        switch kind {
        case .poi:
            return """
                INSERT INTO poi (id, name, category, address, city, country, lat, lon, tags)
                SELECT id, name, category, address, city, country, lat, lon, tags
                FROM jsonb_to_recordset($1::jsonb) AS r(id text, name text, category text, address text, city text,
                    country text, lat float8, lon float8, tags text)\(filter)
                ON CONFLICT (id) DO UPDATE SET name = excluded.name, category = excluded.category, address = excluded.address,
                    city = excluded.city, country = excluded.country, lat = excluded.lat, lon = excluded.lon, tags = excluded.tags
                """
        case .pin:
            return """
                INSERT INTO pin (id, unique_key, first_name, last_name, map_string, media_url, lat, lon, created_at, updated_at, owner)
                SELECT id, unique_key, first_name, last_name, map_string, media_url, lat, lon, created_at, updated_at, owner
                FROM jsonb_to_recordset($1::jsonb) AS r(id text, unique_key text, first_name text, last_name text,
                    map_string text, media_url text, lat float8, lon float8, created_at text, updated_at text, owner text)\(filter)
                ON CONFLICT (id) DO UPDATE SET unique_key = excluded.unique_key, first_name = excluded.first_name,
                    last_name = excluded.last_name, map_string = excluded.map_string, media_url = excluded.media_url,
                    lat = excluded.lat, lon = excluded.lon, updated_at = excluded.updated_at, owner = excluded.owner
                """
        }
    }

    static func payloadQuery(_ sql: String, _ payload: String) -> PostgresQuery {
        var binds = PostgresBindings()
        binds.append(payload)
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }

    /// A write of one record as one statement (autocommit): it takes the next number (the store_state row lock,
    /// first, as every write does: no two writes lock in opposite orders), writes or deletes the record, logs the
    /// change and wakes the followers — one round trip, and no transaction left open between statements for a
    /// partition to strand with the lock every writer queues on. Answers the store's identity and the number.
    static func singleRecordStatement(_ prepared: PreparedWrite) -> PostgresQuery? {
        let kind: RecordKind
        let id: String
        var binds = PostgresBindings()
        var record: String
        let after = "WHERE EXISTS (SELECT 1 FROM number)"
        if prepared.poiIDs.count + prepared.pinIDs.count != 1 { return nil }
        if let json = prepared.poiJSON ?? prepared.pinJSON {
            kind = prepared.poiJSON != nil ? .poi : .pin
            binds.append(json)
            record = upsertSQL(kind, filter: "\n" + after)
            id = (kind == .poi ? prepared.poiIDs : prepared.pinIDs)[0]
        } else {
            kind = prepared.deleted[.poi] != nil ? .poi : .pin
            id = prepared.deleted[kind]![0]
            binds.append(id)
            record = "DELETE FROM \(kind.rawValue) WHERE id = $1 AND EXISTS (SELECT 1 FROM number)"
        }
        binds.append(kind.rawValue)
        binds.append(id)
        let sql = """
            WITH number AS (UPDATE store_state SET sequence = sequence + 1 WHERE id = 1 RETURNING identity, sequence),
            written AS (\(record)),
            logged AS (INSERT INTO change (seq, kind, id) SELECT sequence, $2, $3 FROM number ON CONFLICT DO NOTHING)
            SELECT number.identity, number.sequence FROM number
                CROSS JOIN LATERAL (SELECT pg_notify('poi_changes', number.sequence::text)) AS notified
            """
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }

    static func writeRecords(_ prepared: PreparedWrite, connection: PostgresConnection, logger: Logger) throws {
        let deadline = prepared.deadline
        if let json = prepared.poiJSON {
            _ = try connection.query(PostgresStore.payloadQuery(upsertSQL(.poi), json), logger: logger).answer(on: connection, within: deadline)
        }
        if let json = prepared.pinJSON {
            _ = try connection.query(PostgresStore.payloadQuery(upsertSQL(.pin), json), logger: logger).answer(on: connection, within: deadline)
        }
        if let ids = prepared.deleted[.poi] {
            _ = try connection.query("DELETE FROM poi WHERE id = ANY(\(ids))", logger: logger).answer(on: connection, within: deadline)
        }
        if let ids = prepared.deleted[.pin] {
            _ = try connection.query("DELETE FROM pin WHERE id = ANY(\(ids))", logger: logger).answer(on: connection, within: deadline)
        }
    }

    static func writeChanges(_ prepared: PreparedWrite, sequence: Int64, connection: PostgresConnection, logger: Logger) throws {
        let deadline = prepared.deadline
        for (kind, ids) in [("poi", prepared.poiIDs), ("pin", prepared.pinIDs)] where !ids.isEmpty {
            _ = try connection.query(
                "INSERT INTO change (seq, kind, id) SELECT \(sequence), \(kind), unnest(\(ids)::text[]) ON CONFLICT DO NOTHING",
                logger: logger
            ).answer(on: connection, within: deadline)
        }
    }

    struct POIRow: Encodable {
        var id, name, category: String
        var address, city, country: String?
        var lat, lon: Double
        var tags: String

        init(_ poi: POIRecord) {
            (id, name, category, address, city, country, lat, lon) = (
                poi.id, poi.name, poi.category, poi.address, poi.city, poi.country, poi.lat, poi.lon
            )
            tags = TagsJSON.encode(poi.tags)
        }
    }

    struct PinRow: Encodable {
        var id, unique_key, first_name, last_name, map_string, media_url: String
        var lat, lon: Double
        var created_at, updated_at: String
        var owner: String?

        init(_ pin: PinRecord) {
            (id, unique_key, first_name, last_name, map_string, media_url) = (
                pin.id, pin.uniqueKey, pin.firstName, pin.lastName, pin.mapString, pin.mediaURL
            )
            (lat, lon, created_at, updated_at, owner) = (pin.lat, pin.lon, pin.createdAt, pin.updatedAt, pin.owner)
        }
    }

    /// Runs `body` between `begin` and COMMIT, rolling back when it throws — unless the connection itself failed:
    /// then PostgreSQL ends the transaction, and the session drops the connection (a statement sent on a broken
    /// connection may never be answered). `seconds` bounds the BEGIN and the COMMIT.
    static func transaction<T>(
        _ connection: PostgresConnection,
        _ begin: String,
        logger: Logger,
        within seconds: Int64 = statementDeadline,
        _ body: () throws -> T
    ) throws -> T {
        _ = try connection.query(PostgresQuery(unsafeSQL: begin), logger: logger).answer(on: connection, within: seconds)
        do {
            let value = try body()
            _ = try connection.query("COMMIT", logger: logger).answer(on: connection, within: seconds)
            return value
        } catch {
            if case .storage = Session.classify(error) {
                _ = try? connection.query("ROLLBACK", logger: logger).answer(on: connection)
            }
            throw error
        }
    }

    // MARK: ChangeFeed

    /// Seconds the follower waits for the store's answer to its first, small statements of a feed read.
    static let feedProbeDeadline: Int64 = 3
    /// Seconds a statement may take before the store counts as unreachable (bulk statements of an import and of a
    /// full load take longer deadlines of their own). A write on a replica cut off from PostgreSQL is so answered 503
    /// within this plus the wait for the writer lock — under 10 s with the cluster's connect_timeout of 2 s.
    static let statementDeadline: Int64 = 5

    public var server: String? { hosts.currentHost.description }

    public func changes(after sequence: UInt64) throws(CatalogError) -> ChangeSet {
        let rowsDeadline = feedRowsDeadline.withLock { $0 }
        do {
            let set = try readChanges(after: sequence, rowsDeadline: rowsDeadline)
            feedRowsDeadline.withLock { $0 = PostgresStore.feedProbeDeadline }
            return set
        } catch {
            if case .unavailable = error { feedRowsDeadline.withLock { $0 = min(600, max($0, rowsDeadline) * 2) } }
            throw error
        }
    }

    private func readChanges(after sequence: UInt64, rowsDeadline: Int64) throws(CatalogError) -> ChangeSet {
        try follower.run { connection in
            // The first two statements are small: a store that does not answer them within `feedProbeDeadline` is
            // taken as unreachable (a partition shows in /health within seconds, not the 10 s of a write's bound).
            try PostgresStore.transaction(
                connection,
                "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                logger: logger,
                within: PostgresStore.feedProbeDeadline
            ) {
                let state = try connection.query("SELECT identity, sequence, trimmed_through FROM store_state WHERE id = 1", logger: logger).answer(
                    on: connection,
                    within: PostgresStore.feedProbeDeadline
                )
                guard let row = state.first else { throw CatalogError.storage("store_state has no row") }
                let (identity, current, trimmed) = try row.decode((String, Int64, Int64).self)
                let now = ChangeSequence(identity: identity, sequence: UInt64(current))
                if sequence < UInt64(trimmed) { throw CatalogError.changesTrimmed(after: sequence, trimmedThrough: UInt64(trimmed)) }
                if sequence > now.sequence { throw CatalogError.storeBehind(applied: sequence, storeAt: now.sequence) }
                guard now.sequence > sequence else { return ChangeSet(sequence: now) }
                var set = ChangeSet(sequence: now)
                for kind in RecordKind.allCases {
                    // Every id of this kind changed after `sequence`, once, joined to its row now (none: deleted).
                    let columns = PostgresStore.columns(kind).split(separator: ",").dropFirst().map { "p.\($0.trimmingCharacters(in: .whitespaces))" }
                    var binds = PostgresBindings()
                    binds.append(Int64(sequence))
                    binds.append(kind.rawValue)
                    let query = PostgresQuery(
                        unsafeSQL: """
                            SELECT c.id, \(columns.joined(separator: ", "))
                            FROM (SELECT DISTINCT id FROM change WHERE seq > $1 AND kind = $2) c LEFT JOIN \(kind.rawValue) p ON p.id = c.id
                            ORDER BY p.ord NULLS LAST
                            """,
                        binds: binds
                    )
                    for row in try connection.query(query, logger: logger).answer(on: connection, within: rowsDeadline) {
                        // The second column is NOT NULL in the table: null here means no row.
                        let (id, present) = try row.decode((String, String?).self)
                        if present == nil { set.deleted.append((kind, id)) } else { set.records.append(try PostgresStore.record(kind, row)) }
                    }
                }
                return set
            }
        }
    }

    public func changedRecordCount(after sequence: UInt64) throws(CatalogError) -> Int {
        try follower.run { connection in
            let rows = try connection.query(
                "SELECT count(*) FROM (SELECT DISTINCT kind, id FROM change WHERE seq > \(Int64(sequence))) c",
                logger: logger
            ).answer(on: connection, within: 600)
            return Int(try rows.first?.decode(Int64.self) ?? 0)
        }
    }

    @discardableResult
    public func waitForChange(after sequence: UInt64, timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: max(0, timeout))
        announced.lock()
        defer { announced.unlock() }
        while announcedSequence <= sequence {
            if !announced.wait(until: deadline) { return announcedSequence > sequence }
        }
        return true
    }

    public func report(replica: String, applied: UInt64, snapshot: UInt64?) throws(CatalogError) {
        try main.run { connection in
            let snapshotValue = snapshot.map { Int64($0) }
            _ = try connection.query(
                """
                INSERT INTO replica (name, applied, snapshot, seen_at) VALUES (\(replica), \(Int64(applied)), \(snapshotValue), now())
                ON CONFLICT (name) DO UPDATE SET applied = excluded.applied, snapshot = excluded.snapshot, seen_at = now()
                """,
                logger: logger
            ).answer(on: connection)
        }
    }

    @discardableResult
    public func trim(retention: Double) throws(CatalogError) -> UInt64 {
        try main.run { connection in
            try PostgresStore.transaction(connection, "BEGIN", logger: logger) {
                let seconds = max(0, retention)
                // Behind every replica seen within the retention window: what each has applied and, for one that
                // restarts from a snapshot, what its snapshot holds. Past the window, changes go whatever replicas say
                // (a replica older than that rebuilds from the tables).
                let rows = try connection.query(
                    """
                    SELECT
                      (SELECT min(least(applied, coalesce(snapshot, applied))) FROM replica
                       WHERE seen_at > now() - make_interval(secs => \(seconds))),
                      (SELECT max(seq) FROM change WHERE at < now() - make_interval(secs => \(seconds))),
                      (SELECT trimmed_through FROM store_state WHERE id = 1)
                    """,
                    logger: logger
                ).answer(on: connection)
                guard let row = rows.first else { return 0 }
                let (behindReplicas, expired, trimmed) = try row.decode((Int64?, Int64?, Int64).self)
                let through = max(trimmed, behindReplicas ?? 0, expired ?? 0)
                if through > trimmed {
                    _ = try connection.query("DELETE FROM change WHERE seq <= \(through)", logger: logger).answer(on: connection, within: 600)
                    _ = try connection.query("UPDATE store_state SET trimmed_through = \(through) WHERE id = 1", logger: logger).answer(
                        on: connection
                    )
                    _ = try connection.query("DELETE FROM replica WHERE seen_at < now() - make_interval(secs => \(seconds))", logger: logger).answer(
                        on: connection
                    )
                }
                return UInt64(through)
            }
        }
    }
}

extension ImportedRecord {
    var kind: RecordKind {
        if case .pin = self { return .pin }
        return .poi
    }
}
