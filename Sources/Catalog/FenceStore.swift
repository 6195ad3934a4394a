import Foundation
import GRDB
import Records
import Synchronization

/// Where live areas (fences) and their events are kept (docs/ARCHITECTURE.md, "Live areas"): a SQLite file of its
/// own beside the database (`DB.fences`), or memory for an engine without a store.
///
/// A fence is kept as the JSON of its definition, which the engine reads and writes; an event as the JSON the
/// clients receive, numbered by one sequence over all fences (the SSE `id`, and `Last-Event-ID` to resume). A
/// webhook's progress — the last event it delivered and the events it gave up on — is kept per fence, so that a
/// restart neither repeats nor loses one.
///
/// **Which events are a fence's.** Events are appended in sequence order, so the table grows at its end. An index
/// on (fence, sequence) would put each new event on the page of its fence's last one — a page written for every
/// event, which held 10 000 fences to ~30 k events/s (`benchmarks/RESULTS.md`, "Live areas: group commit and the
/// fence store's blocks"). Instead a fence's sequence numbers gather in memory (`open`) and are written as one row of
/// up to `blockSize` of them (`fence_event_block`, delta-encoded), in the transaction of the event that fills it.
/// Every `sealEvery` events all open lists are written and `fence_event_sealed` records that every event up to there
/// is in a block, so opening the file reads only the events after that mark to make the open lists again.
public final class FenceStore: FenceLog, @unchecked Sendable {
    // SAFETY: @unchecked Sendable because its stored properties are a GRDB DatabaseQueue, which serializes every
    // access, settings, and `open`, used only inside the queue's closures (and behind a mutex besides).
    private let queue: DatabaseQueue
    private let blockSize: Int
    private let sealEvery: Int64
    /// Per fence, its events' sequence numbers not yet written in a block, oldest first; and the last sequence of the
    /// blocks written when all were last sealed.
    private struct Open {
        var lists: [String: [Int64]] = [:]
        var sealed: Int64 = 0
    }

    private let open = Mutex(Open())

    /// A store in a file (created when missing), or in memory (`path` nil).
    /// - Parameters:
    ///   - blockSize: how many of a fence's sequence numbers one block row holds.
    ///   - sealEvery: how many events may be appended after the last seal before all open lists are written.
    public init(path: String?, blockSize: Int = 128, sealEvery: Int64 = 262_144) throws {
        self.blockSize = max(1, blockSize)
        self.sealEvery = max(1, sealEvery)
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
        try migrator.migrate(queue)
        try queue.write { db in
            let sealed = try Int64.fetchOne(db, sql: "SELECT through FROM fence_event_sealed WHERE id = 1") ?? 0
            // A fence's events after its last block, among those after the seal (the only ones not all in blocks).
            var lastBlock: [String: Int64] = [:]
            for row in try Row.fetchAll(
                db,
                sql: "SELECT fence, max(last) AS last FROM fence_event_block WHERE last > ? GROUP BY fence",
                arguments: [sealed]
            ) {
                lastBlock[row["fence"]] = row["last"]
            }
            var lists: [String: [Int64]] = [:]
            let rows = try Row.fetchCursor(
                db,
                sql: "SELECT sequence, fence FROM fence_event WHERE sequence > ? ORDER BY sequence",
                arguments: [sealed]
            )
            while let row = try rows.next() {
                let sequence: Int64 = row["sequence"]
                let fence: String = row["fence"]
                if sequence > lastBlock[fence] ?? 0 { lists[fence, default: []].append(sequence) }
            }
            open.withLock { $0 = Open(lists: lists, sealed: sealed) }
            // Never sealed yet (a file of version 1, or a new one with fewer events than `sealEvery`): its events are
            // sealed into blocks now, so that the next opening reads none of them again.
            if sealed == 0, !lists.isEmpty { try seal(db) }
        }
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
            try db.execute(sql: "DELETE FROM fence_event_block WHERE fence = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM fence_delivery WHERE fence = ?", arguments: [id])
            _ = open.withLock { $0.lists.removeValue(forKey: id) }
        }
    }

    /// Appends events in one transaction; each `json` is made by `make` from its new sequence number. A fence whose
    /// open list reaches `blockSize` has it written as a block in the same transaction.
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
            // The lists as this append leaves them, written to `open` only once every statement has run: a failed
            // one leaves them as they were. (A failed COMMIT after that leaves numbers of events that do not exist,
            // which reads skip: they fetch by number and fence.)
            // Only the lists of the events' fences are read: a copy of the whole dictionary held across the update
            // below would make it copy every fence's entry.
            let sealed = open.withLock { $0.sealed }
            var touched: [String: [Int64]] = [:]
            for event in stored {
                if touched[event.fence] == nil { touched[event.fence] = open.withLock { $0.lists[event.fence] } ?? [] }
                touched[event.fence]!.append(event.sequence)
                if touched[event.fence]!.count >= blockSize {
                    try writeBlock(db, fence: event.fence, touched[event.fence]!)
                    touched[event.fence] = []
                }
            }
            let last = stored.last!.sequence
            if last - sealed >= sealEvery {
                for (fence, sequences) in open.withLock({ $0.lists }).merging(touched, uniquingKeysWith: { $1 }) where !sequences.isEmpty {
                    try writeBlock(db, fence: fence, sequences)
                }
                try db.execute(sql: "UPDATE fence_event_sealed SET through = ? WHERE id = 1", arguments: [last])
                open.withLock { $0 = Open(lists: [:], sealed: last) }
            } else {
                open.withLock { open in
                    for (fence, sequences) in touched { open.lists[fence] = sequences.isEmpty ? nil : sequences }
                }
            }
            return stored
        }
    }

    private func writeBlock(_ db: Database, fence: String, _ sequences: [Int64]) throws {
        let statement = try db.cachedStatement(sql: "INSERT OR REPLACE INTO fence_event_block (fence, last, sequences) VALUES (?, ?, ?)")
        try statement.execute(arguments: [fence, sequences.last!, Self.encode(sequences)])
    }

    /// Writes every open list as a block and marks every event up to the last one as sealed (opening a file of
    /// version 1).
    private func seal(_ db: Database) throws {
        let lists = open.withLock { $0.lists }
        for (fence, sequences) in lists where !sequences.isEmpty { try writeBlock(db, fence: fence, sequences) }
        let through = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'fence_event'") ?? 0
        try db.execute(sql: "UPDATE fence_event_sealed SET through = ? WHERE id = 1", arguments: [through])
        open.withLock { $0 = Open(lists: [:], sealed: through) }
    }

    /// A fence's events after `sequence`, oldest first, at most `limit`: their numbers from the fence's blocks and
    /// open list, then the events by number.
    public func events(fence: String, after sequence: Int64, limit: Int) throws -> [FenceEvent] {
        guard limit > 0 else { return [] }
        return try queue.read { db in
            var numbers: [Int64] = []
            let blocks = try Row.fetchCursor(
                db,
                sql: "SELECT sequences FROM fence_event_block WHERE fence = ? AND last > ? ORDER BY last",
                arguments: [fence, sequence]
            )
            while numbers.count < limit, let row = try blocks.next() {
                numbers += Self.decode(row["sequences"]).lazy.filter { $0 > sequence }.prefix(limit - numbers.count)
            }
            if numbers.count < limit {
                let tail = open.withLock { $0.lists[fence] ?? [] }
                numbers += tail.lazy.filter { $0 > sequence }.prefix(limit - numbers.count)
            }
            guard !numbers.isEmpty else { return [] }
            let marks = Array(repeating: "?", count: numbers.count).joined(separator: ",")
            return try Row.fetchAll(
                db,
                sql: "SELECT sequence, detect, json FROM fence_event WHERE fence = ? AND sequence IN (\(marks)) ORDER BY sequence",
                arguments: StatementArguments([fence] + numbers.map { $0 as any DatabaseValueConvertible })
            ).map { FenceEvent(sequence: $0["sequence"], fence: fence, detect: $0["detect"], json: $0["json"]) }
        }
    }

    /// Sequence numbers, ascending, as LEB128 varints of their differences (the first from 0).
    static func encode(_ sequences: [Int64]) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(sequences.count * 2)
        var previous: Int64 = 0
        for sequence in sequences {
            var delta = UInt64(sequence - previous)
            previous = sequence
            while delta >= 0x80 {
                bytes.append(UInt8(delta & 0x7F) | 0x80)
                delta >>= 7
            }
            bytes.append(UInt8(delta))
        }
        return Data(bytes)
    }

    static func decode(_ data: Data) -> [Int64] {
        var out: [Int64] = []
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var previous: Int64 = 0
        for byte in data {
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 != 0 {
                shift += 7
                continue
            }
            previous += Int64(value)
            out.append(previous)
            (value, shift) = (0, 0)
        }
        return out
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
