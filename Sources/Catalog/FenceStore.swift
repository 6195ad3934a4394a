import Foundation
import GRDB
import Records

/// Where live areas (fences) and their events are kept (docs/ARCHITECTURE.md, "Live areas"): a SQLite file of its
/// own beside the database (`DB.fences`), or memory for an engine without a store.
///
/// A fence is kept as the JSON of its definition, which the engine reads and writes; an event as the JSON the
/// clients receive, numbered by one sequence over all fences (the SSE `id`, and `Last-Event-ID` to resume). A
/// webhook's progress — the last event it delivered and the events it gave up on — is kept per fence, so that a
/// restart neither repeats nor loses one.
public final class FenceStore: FenceLog, @unchecked Sendable {
    // SAFETY: @unchecked Sendable because its one stored property, a GRDB DatabaseQueue, serializes every access.
    private let queue: DatabaseQueue

    /// A store in a file (created when missing), or in memory (`path` nil).
    public init(path: String?) throws {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        // WAL with synchronous = NORMAL: a commit survives the process (a crash, a restart) without an fsync of its
        // own; only a power loss may take the last events. The records' store keeps FULL: a write is acknowledged.
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
        try migrator.migrate(queue)
    }

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

    /// Removes a fence with its events and delivery state.
    public func delete(id: String) throws {
        try queue.write { db in
            try db.execute(sql: "DELETE FROM fence WHERE id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM fence_event WHERE fence = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM fence_delivery WHERE fence = ?", arguments: [id])
        }
    }

    /// Appends events in one transaction; each `json` is made by `make` from its new sequence number.
    public func append(_ events: [(fence: String, detect: String, make: (Int64) -> String)]) throws -> [FenceEvent] {
        guard !events.isEmpty else { return [] }
        return try queue.write { db in
            var stored: [FenceEvent] = []
            stored.reserveCapacity(events.count)
            let next = (try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'fence_event'") ?? 0) + 1
            let insert = try db.cachedStatement(sql: "INSERT INTO fence_event (sequence, fence, detect, json) VALUES (?, ?, ?, ?)")
            for (offset, event) in events.enumerated() {
                let sequence = next + Int64(offset)
                let json = event.make(sequence)
                try insert.execute(arguments: [sequence, event.fence, event.detect, json])
                stored.append(FenceEvent(sequence: sequence, fence: event.fence, detect: event.detect, json: json))
            }
            return stored
        }
    }

    /// A fence's events after `sequence`, oldest first, at most `limit`.
    public func events(fence: String, after sequence: Int64, limit: Int) throws -> [FenceEvent] {
        try queue.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT sequence, detect, json FROM fence_event WHERE fence = ? AND sequence > ? ORDER BY sequence LIMIT ?",
                arguments: [fence, sequence, limit]
            ).map { FenceEvent(sequence: $0["sequence"], fence: fence, detect: $0["detect"], json: $0["json"]) }
        }
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
