import Foundation
import Logging
import NIOCore
import Parallelism
import PostgresNIO
import Records
import Synchronization

/// Fences, their events and their webhooks' progress in the shared store, so that every server behind a load
/// balancer knows every fence and answers its event stream alike (docs/ARCHITECTURE.md, "Live areas").
///
/// - `fence_state` holds the last event number and the last definition version. An append or a definition change
///   takes the next numbers from that row, whose lock orders them: numbers commit in their order, so a reader that
///   has seen event n has seen every event before it (no gap fills in later).
/// - `fence` keeps a deleted fence as a row without a definition, so that the others learn of the deletion by
///   version like any change.
/// - `fence_delivery` holds each webhook's progress and its lease: the server whose lease runs delivers.
/// - Every change ends with `NOTIFY poi_fences`, which wakes the other servers' followers at once; they poll anyway.
///
/// Two connections of its own (one for statements, one that LISTENs), apart from the records' store, so that event
/// appends never queue behind a record write or a feed read. Every value reaches SQL as a bound parameter.
public final class PostgresFenceLog: SharedFenceLog {
    let logger: Logger
    let main: Session
    let listener: Session
    /// Notifications received, and the condition `waitForNews` sleeps on.
    let news = NSCondition()
    nonisolated(unsafe) var notified: UInt64 = 0  // SAFETY: only read and written under `news`.
    static let channel = "poi_fences"

    /// Opens the fence tables of the store at `url` (the same URL as `PostgresStore`'s), bringing the schema up to date.
    /// With `retention` (seconds), events older than that are dropped every few seconds on a thread of its own (each
    /// server does it; the deletes are the same).
    public convenience init(url: String, retention: Double? = nil, logger: Logger = Logger(label: "poi.postgres.fences")) throws(CatalogError) {
        let parsed = try StoreURL(url)
        try self.init(hosts: try HostList(url: parsed), location: parsed.location, logger: logger)
        if let retention { Self.trimEvery(max(0.05, min(10, retention / 16)), olderThan: retention, self) }
    }

    /// Trims `log` every `seconds` on a thread that ends once the log is gone.
    private static func trimEvery(_ seconds: Double, olderThan age: Double, _ log: PostgresFenceLog) {
        let thread = Thread.named("poi-fence-trim") { [weak log] in
            while true {
                Thread.sleep(forTimeInterval: seconds)
                guard let log else { return }
                _ = try? log.trim(storedBefore: Date().addingTimeInterval(-age))
            }
        }
        thread.start()
    }

    /// Drops the events stored before `cutoff` (all of them up to the last such one, in number order) and moves
    /// `keptFrom` past them; answers how many were dropped.
    @discardableResult
    public func trim(storedBefore cutoff: Date) throws -> Int {
        let seconds = cutoff.timeIntervalSince1970
        return try main.run { connection in
            try PostgresStore.transaction(connection, "BEGIN", logger: logger) {
                let rows = try connection.query("SELECT max(seq) FROM fence_event WHERE at < to_timestamp(\(seconds))", logger: logger)
                    .answer(on: connection)
                guard let row = rows.first, let through = try row.decode(Int64?.self) else { return 0 }
                let deleted = try connection.query("DELETE FROM fence_event WHERE seq <= \(through) RETURNING seq", logger: logger)
                    .answer(on: connection).count
                _ = try connection.query(
                    "UPDATE fence_state SET kept_from = greatest(kept_from, \(through + 1)) WHERE id = 1",
                    logger: logger
                ).answer(on: connection)
                return deleted
            }
        }
    }

    public func keptFrom() throws -> Int64 {
        try main.run { connection in
            let rows = try connection.query("SELECT kept_from FROM fence_state WHERE id = 1", logger: logger).answer(on: connection)
            return try rows.first?.decode(Int64.self) ?? 1
        }
    }

    init(hosts: HostList, location: String, logger: Logger) throws(CatalogError) {
        var quiet = logger
        quiet.logLevel = .critical
        self.logger = quiet
        (main, listener) = Session.pair(hosts: hosts, logger: quiet, names: ("fences", "fence-news"))
        listener.listen(on: PostgresFenceLog.channel) { [weak self] _ in self?.announce() }
        do {
            try main.run { connection in try PostgresSchema.migrate(connection, logger: quiet) }
        } catch {
            throw .cannotOpen(path: location, reason: error.description)
        }
    }

    private func announce() {
        news.lock()
        notified &+= 1
        news.broadcast()
        news.unlock()
    }

    public func close() {
        main.close()
        listener.close()
    }

    deinit { close() }

    // MARK: FenceLog

    public func fences() throws -> [(id: String, definition: String)] {
        try main.run { connection in
            try connection.query("SELECT id, definition FROM fence WHERE definition IS NOT NULL ORDER BY id", logger: logger)
                .answer(on: connection)
                .map { row in try row.decode((String, String).self) }
                .map { (id: $0.0, definition: $0.1) }
        }
    }

    public func put(id: String, definition: String) throws {
        try changeDefinition { connection, version in
            _ = try connection.query(
                """
                INSERT INTO fence (id, definition, version) VALUES (\(id), \(definition), \(version))
                ON CONFLICT (id) DO UPDATE SET definition = excluded.definition, version = excluded.version
                """,
                logger: logger
            ).answer(on: connection)
        }
    }

    public func delete(id: String) throws {
        try changeDefinition { connection, version in
            _ = try connection.query("UPDATE fence SET definition = NULL, version = \(version) WHERE id = \(id)", logger: logger)
                .answer(on: connection)
            _ = try connection.query("DELETE FROM fence_event WHERE fence = \(id)", logger: logger).answer(on: connection)
            _ = try connection.query("DELETE FROM fence_delivery WHERE fence = \(id)", logger: logger).answer(on: connection)
        }
    }

    /// A definition change in one transaction, under the next version, announced to the other servers.
    private func changeDefinition(_ body: (PostgresConnection, Int64) throws -> Void) throws {
        try main.run { connection in
            try PostgresStore.transaction(connection, "BEGIN", logger: logger) {
                let rows = try connection.query("UPDATE fence_state SET version = version + 1 WHERE id = 1 RETURNING version", logger: logger)
                    .answer(on: connection)
                guard let version = try rows.first?.decode(Int64.self) else { throw CatalogError.storage("fence_state has no row") }
                try body(connection, version)
                _ = try connection.query("SELECT pg_notify('poi_fences', '')", logger: logger).answer(on: connection)
            }
        }
    }

    public func append(_ events: [(fence: String, detect: String, make: (Int64) -> String)]) throws -> [FenceEvent] {
        guard !events.isEmpty else { return [] }
        let count = Int64(events.count)
        return try main.run { connection in
            try PostgresStore.transaction(connection, "BEGIN", logger: logger) {
                let rows = try connection.query(
                    "UPDATE fence_state SET sequence = sequence + \(count) WHERE id = 1 RETURNING sequence",
                    logger: logger
                ).answer(on: connection)
                guard let last = try rows.first?.decode(Int64.self) else { throw CatalogError.storage("fence_state has no row") }
                let stored = events.enumerated().map { k, event in
                    let sequence = last - count + 1 + Int64(k)
                    return FenceEvent(sequence: sequence, fence: event.fence, detect: event.detect, json: event.make(sequence))
                }
                let (sequences, fences, detects, jsons) = (stored.map(\.sequence), stored.map(\.fence), stored.map(\.detect), stored.map(\.json))
                _ = try connection.query(
                    """
                    INSERT INTO fence_event (seq, fence, detect, json)
                    SELECT * FROM unnest(\(sequences)::bigint[], \(fences)::text[], \(detects)::text[], \(jsons)::text[])
                    """,
                    logger: logger
                ).answer(on: connection)
                _ = try connection.query("SELECT pg_notify('poi_fences', '')", logger: logger).answer(on: connection)
                return stored
            }
        }
    }

    public func events(fence: String, after sequence: Int64, limit: Int) throws -> [FenceEvent] {
        try events(of: fence, after: sequence, limit: limit)
    }

    /// The events of one fence, or of all (nil), after `sequence`, oldest first.
    private func events(of fence: String?, after sequence: Int64, limit: Int) throws -> [FenceEvent] {
        let limit = Int64(limit)
        let query: PostgresQuery =
            if let fence {
                "SELECT seq, fence, detect, json FROM fence_event WHERE fence = \(fence) AND seq > \(sequence) ORDER BY seq LIMIT \(limit)"
            } else {
                "SELECT seq, fence, detect, json FROM fence_event WHERE seq > \(sequence) ORDER BY seq LIMIT \(limit)"
            }
        return try main.run { connection in try connection.query(query, logger: logger).answer(on: connection).map(Self.event) }
    }

    public func delivery(fence: String) throws -> (delivered: Int64, dead: Int) {
        try main.run { connection in
            let rows = try connection.query("SELECT delivered, dead FROM fence_delivery WHERE fence = \(fence)", logger: logger)
                .answer(on: connection)
            guard let row = rows.first else { return (0, 0) }
            let (delivered, dead) = try row.decode((Int64, Int32).self)
            return (delivered, Int(dead))
        }
    }

    /// Never moves a webhook's progress back: a server whose lease ran out while it waited on a receiver may finish
    /// a delivery after the next holder went past it.
    public func setDelivered(fence: String, through sequence: Int64, dead: Bool) throws {
        let dead: Int32 = dead ? 1 : 0
        try main.run { connection in
            _ = try connection.query(
                """
                INSERT INTO fence_delivery (fence, delivered, dead) VALUES (\(fence), \(sequence), \(dead))
                ON CONFLICT (fence) DO UPDATE SET delivered = greatest(fence_delivery.delivered, excluded.delivered),
                    dead = fence_delivery.dead + excluded.dead
                """,
                logger: logger
            ).answer(on: connection)
        }
    }

    // MARK: SharedFenceLog

    public func latest() throws -> (sequence: Int64, version: Int64) {
        try main.run { connection in
            let rows = try connection.query("SELECT sequence, version FROM fence_state WHERE id = 1", logger: logger).answer(on: connection)
            guard let row = rows.first else { throw CatalogError.storage("fence_state has no row") }
            return try row.decode((Int64, Int64).self)
        }
    }

    public func events(after sequence: Int64, limit: Int) throws -> [FenceEvent] { try events(of: nil, after: sequence, limit: limit) }

    public func definitions(after version: Int64) throws -> (changes: [(id: String, definition: String?)], version: Int64) {
        try main.run { connection in
            let rows = try connection.query(
                "SELECT id, definition, version FROM fence WHERE version > \(version) ORDER BY version",
                logger: logger
            ).answer(on: connection)
            var changes: [(id: String, definition: String?)] = []
            var last = version
            for row in rows {
                let (id, definition, at) = try row.decode((String, String?, Int64).self)
                changes.append((id, definition))
                last = at
            }
            return (changes, last)
        }
    }

    public func waitForNews(seconds: Double) {
        news.lock()
        let seen = notified
        news.unlock()
        // The listening connection is opened (again, after a failover) here; without it only the timeout wakes.
        if (try? listener.run({ _ in () })) == nil {
            Thread.sleep(forTimeInterval: seconds)
            return
        }
        news.lock()
        defer { news.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while notified == seen, news.wait(until: deadline) {}
    }

    public func claimDelivery(fence: String, holder: String, seconds: Int) throws -> Bool {
        let seconds = Double(seconds)
        return try main.run { connection in
            let rows = try connection.query(
                """
                INSERT INTO fence_delivery (fence, holder, lease_until) VALUES (\(fence), \(holder), now() + make_interval(secs => \(seconds)))
                ON CONFLICT (fence) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
                WHERE fence_delivery.holder IS NULL OR fence_delivery.holder = excluded.holder OR fence_delivery.lease_until < now()
                RETURNING holder
                """,
                logger: logger
            ).answer(on: connection)
            return rows.first != nil
        }
    }

    public func deliveriesWaiting(for holder: String) throws -> Set<String> {
        try main.run { connection in
            let rows = try connection.query(
                """
                SELECT f.id FROM fence f LEFT JOIN fence_delivery d ON d.fence = f.id
                WHERE f.definition IS NOT NULL
                    AND (d.fence IS NULL OR d.holder IS NULL OR d.holder = \(holder) OR d.lease_until < now())
                    AND EXISTS (SELECT 1 FROM fence_event e WHERE e.fence = f.id AND e.seq > coalesce(d.delivered, 0))
                """,
                logger: logger
            ).answer(on: connection)
            var held = Set<String>()
            for row in rows { held.insert(try row.decode(String.self)) }
            return held
        }
    }

    static func event(_ row: PostgresRow) throws -> FenceEvent {
        let (sequence, fence, detect, json) = try row.decode((Int64, String, String, String).self)
        return FenceEvent(sequence: sequence, fence: fence, detect: detect, json: json)
    }
}
