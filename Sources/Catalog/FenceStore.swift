import Foundation
import GRDB
import Parallelism
import Records

/// Where live areas (fences) and their events are kept (docs/ARCHITECTURE.md, "Live areas"): a SQLite file of its
/// own beside the database (`DB.fences`) for the definitions, the webhooks' progress and the deleted fences, and the
/// events in segment files beside it (`DB.fences.events/`, `FenceEventSegments`); or memory, for an engine without a
/// store.
///
/// A fence is kept as the JSON of its definition, which the engine reads and writes; an event as the JSON the
/// clients receive, numbered by one sequence over all fences (the SSE `id`, and `Last-Event-ID` to resume). A
/// webhook's progress — the last event it delivered and the events it gave up on — is kept per fence, so that a
/// restart neither repeats nor loses one. Events are kept as long as `retention` says, and dropped by whole
/// segments after that (`keptFrom` says from which number they are still there).
///
/// **Why not a SQLite row per event**, as it was: under 10 000 fences a pin write makes ~70 events, and a row each
/// (with its B-tree page, its statement and its bindings) held a commit's ~460 events to ~3 ms under the writer lock,
/// 1 600 pin writes/s; a segment takes them in one `pwrite` (`benchmarks/RESULTS.md`, "Live areas: events in segment
/// files"). Files of that store open with their events moved into segments.
public final class FenceStore: FenceLog, @unchecked Sendable {
    // SAFETY: @unchecked Sendable because its stored properties are a GRDB DatabaseQueue, which serializes every
    // access, and the segments, which lock their own state.
    private let queue: DatabaseQueue
    private let segments: FenceEventSegments

    /// A store in a file (created when missing) with its events in `path.events/`, or in memory (`path` nil).
    /// - Parameters:
    ///   - segmentBytes: how large a segment of events grows before the next is started (the unit the retention drops).
    ///   - retention: how long events are kept; the store checks every few seconds on a thread of its own.
    public init(path: String?, segmentBytes: Int = 64 << 20, retention: FenceEventRetention = .standard) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        // WAL with synchronous = NORMAL: a commit survives the process (a crash, a restart) without an fsync of its
        // own; only a power loss may take the last one. The records' store keeps FULL: a write is acknowledged.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        if let path {
            queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = WAL") }
        } else {
            queue = try DatabaseQueue(configuration: configuration)
        }
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: fences, events, deliveries") { db in
            try db.execute(
                sql: """
                    CREATE TABLE fence (id TEXT PRIMARY KEY NOT NULL, definition TEXT NOT NULL);
                    CREATE TABLE fence_event (sequence INTEGER PRIMARY KEY AUTOINCREMENT, fence TEXT NOT NULL, detect TEXT NOT NULL,
                        json TEXT NOT NULL);
                    CREATE INDEX fence_event_by_fence ON fence_event (fence, sequence);
                    CREATE TABLE fence_delivery (fence TEXT PRIMARY KEY NOT NULL, delivered INTEGER NOT NULL DEFAULT 0,
                        dead INTEGER NOT NULL DEFAULT 0);
                    """
            )
        }
        migrator.registerMigration("v2: a fence's events found by blocks of sequence numbers") { db in
            try db.execute(
                sql: """
                    CREATE TABLE fence_event_block (fence TEXT NOT NULL, last INTEGER NOT NULL, sequences BLOB NOT NULL,
                        PRIMARY KEY (fence, last)) WITHOUT ROWID;
                    CREATE TABLE fence_event_sealed (id INTEGER PRIMARY KEY CHECK (id = 1), through INTEGER NOT NULL);
                    INSERT INTO fence_event_sealed (id, through) VALUES (1, 0);
                    DROP INDEX fence_event_by_fence;
                    """
            )
        }
        migrator.registerMigration("v3: events in segment files; deleted fences") { db in
            try db.execute(
                sql: """
                    DROP TABLE fence_event;
                    DROP TABLE fence_event_block;
                    DROP TABLE fence_event_sealed;
                    CREATE TABLE fence_cleared (fence TEXT PRIMARY KEY NOT NULL, through INTEGER NOT NULL);
                    """
            )
        }
        if try !queue.read({ try migrator.appliedIdentifiers($0) }).contains("v3: events in segment files; deleted fences") {
            try migrator.migrate(queue, upTo: "v2: a fence's events found by blocks of sequence numbers")
        }
        // The events of a store that kept them in rows (or of a new file: none), numbered on from where it was.
        let legacy = try queue.read { db -> (start: Int64, last: Int64, rows: Bool)? in
            guard try db.tableExists("fence_event") else { return nil }
            let first = try Int64.fetchOne(db, sql: "SELECT min(sequence) FROM fence_event")
            let last = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'fence_event'") ?? 0
            return (first ?? last + 1, last, first != nil)
        }
        let now = Date().timeIntervalSince1970
        segments = try FenceEventSegments(
            directory: path.map { $0 + ".events" },
            start: legacy?.start ?? 1,
            segmentBytes: segmentBytes,
            retention: retention,
            now: now
        )
        if let legacy, legacy.rows {
            // Moved over before the rows are dropped; a crash between the two moves only the rows not moved yet.
            try queue.read { db in
                let rows = try Row.fetchCursor(
                    db,
                    sql: "SELECT sequence, fence, detect, json FROM fence_event WHERE sequence >= ? ORDER BY sequence",
                    arguments: [segments.next]
                )
                var batch: [FenceEvent] = []
                while let row = try rows.next() {
                    batch.append(FenceEvent(sequence: row["sequence"], fence: row["fence"], detect: row["detect"], json: row["json"]))
                    if batch.count == 10_000 {
                        try segments.appendNumbered(batch, now: now)
                        batch = []
                    }
                }
                // Numbers handed out whose events went with their fences are not handed out again.
                if (batch.last?.sequence ?? segments.next - 1) < legacy.last {
                    batch.append(FenceEvent(sequence: legacy.last, fence: "", detect: "", json: ""))
                }
                try segments.appendNumbered(batch, now: now)
            }
        }
        try migrator.migrate(queue)
        let cleared = try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT fence, through FROM fence_cleared").map { ($0["fence"] as String, $0["through"] as Int64) }
        }
        segments.restoreCleared(Dictionary(cleared, uniquingKeysWith: max))
        try trim(now: now)
        if retention != .forever { Self.trimEvery(Self.trimInterval(retention), self) }
    }

    /// How often the thread trims: every 10 s, or more often for a retention shorter than 160 s.
    static func trimInterval(_ retention: FenceEventRetention) -> Double { max(0.05, min(10, (retention.seconds ?? 160) / 16)) }

    /// Trims `store` every `seconds` on a thread that ends once the store is gone.
    private static func trimEvery(_ seconds: Double, _ store: FenceStore) {
        let thread = Thread.named("poi-fence-trim") { [weak store] in
            while true {
                Thread.sleep(forTimeInterval: seconds)
                guard let store else { return }
                try? store.trim(now: Date().timeIntervalSince1970)
            }
        }
        thread.start()
    }

    /// Drops the events past the retention (whole segments, oldest first) and forgets deleted fences none of whose
    /// events are left; answers how many segments were dropped.
    @discardableResult
    public func trim(now: Double) throws -> Int {
        let dropped = try segments.trim(now: now)
        if dropped > 0 {
            let kept = segments.keptFrom
            try queue.write { db in try db.execute(sql: "DELETE FROM fence_cleared WHERE through < ?", arguments: [kept]) }
        }
        return dropped
    }

    /// The lowest event number still kept: the ones before it are past the retention.
    public func keptFrom() throws -> Int64 { segments.keptFrom }

    /// The bytes of the events kept, and in how many segments.
    public var eventBytes: (bytes: Int, segments: Int) { (segments.bytes, segments.segmentCount) }

    /// Every fence's definition, by id.
    public func fences() throws -> [(id: String, definition: String)] {
        try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT id, definition FROM fence ORDER BY id").map { ($0["id"], $0["definition"]) }
        }
    }

    public func put(id: String, definition: String) throws {
        try queue.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO fence (id, definition) VALUES (?, ?)", arguments: [id, definition])
        }
    }

    /// Removes a fence with its delivery state; its events are no longer its own (a fence made again with the same id
    /// starts with none), and go with their segments.
    public func delete(id: String) throws {
        let through = segments.clear(fence: id)
        try queue.write { db in
            try db.execute(sql: "DELETE FROM fence WHERE id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM fence_delivery WHERE fence = ?", arguments: [id])
            try db.execute(sql: "INSERT OR REPLACE INTO fence_cleared (fence, through) VALUES (?, ?)", arguments: [id, through])
        }
    }

    /// Appends events in one write; each `json` is made by `make` from its new sequence number.
    public func append(_ events: [(fence: String, detect: String, make: (Int64) -> String)]) throws -> [FenceEvent] {
        guard !events.isEmpty else { return [] }
        let before = segments.segmentCount
        let stored = try segments.append(events, now: Date().timeIntervalSince1970)
        // A segment was sealed: the retention may drop one now rather than at the thread's next round.
        if segments.segmentCount != before { try trim(now: Date().timeIntervalSince1970) }
        return stored
    }

    /// A fence's events after `sequence`, oldest first, at most `limit`.
    public func events(fence: String, after sequence: Int64, limit: Int) throws -> [FenceEvent] {
        try segments.events(fence: fence, after: sequence, limit: limit)
    }

    /// A webhook's progress: the last event delivered (0: none) and how many it gave up on.
    public func delivery(fence: String) throws -> (delivered: Int64, dead: Int) {
        try queue.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT delivered, dead FROM fence_delivery WHERE fence = ?", arguments: [fence]) else {
                return (0, 0)
            }
            return (row["delivered"], row["dead"])
        }
    }

    /// Records that the webhook is done with events up to `sequence`: delivered, or given up on (`dead`).
    public func setDelivered(fence: String, through sequence: Int64, dead: Bool) throws {
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO fence_delivery (fence, delivered, dead) VALUES (?, ?, ?)
                    ON CONFLICT (fence) DO UPDATE SET delivered = excluded.delivered, dead = dead + excluded.dead
                    """,
                arguments: [fence, sequence, dead ? 1 : 0]
            )
        }
    }
}
