import Foundation
import GRDB
import Synchronization

/// Copies the write-ahead log into the database file on a thread and a connection of its own, after the
/// transactions that write thousands of pages (a change file: `CatalogStore.updateOSM`).
///
/// SQLite's automatic checkpoint runs inside the committing call, after the commit: on the country-shaped database it
/// was a quarter of a change file's transaction, ~0.25 s of ~1 s (the pages of ~11 k log frames written into the file
/// and fsynced; docs/ARCHITECTURE.md, "OpenStreetMap that stays current"). The commit is durable before it (the log is fsynced,
/// `synchronous = FULL`): a checkpoint only moves pages, so it need not delay the file's step. A PASSIVE checkpoint
/// never waits for readers or the writer; what one could not copy (a reader still on old pages) the next one copies,
/// and the writer's own automatic checkpoint, which every other write keeps, remains behind it.
final class BackgroundCheckpointer: Sendable {
    private let path: String
    private let queue = DispatchQueue(label: "poi.catalog.checkpoint", qos: .utility)
    private struct State: ~Copyable {
        /// Opened by the first checkpoint; only the queue's thread uses it.
        var connection: DatabaseQueue?
        /// A checkpoint asked for and not yet begun: a request meanwhile needs no second one.
        var pending = false
        /// The last checkpoint's error, if it failed (the log then waits for the next one).
        var failure: String?
    }
    private let state = Mutex(State())

    init(path: String) { self.path = path }

    /// Asks for a checkpoint of everything committed so far; returns at once.
    func request() {
        let begin = state.withLock { state in
            if state.pending { return false }
            state.pending = true
            return true
        }
        if begin { queue.async { self.run() } }
    }

    /// Waits until the checkpoints asked for so far are done; the last one's error, if it failed.
    @discardableResult
    func wait() -> String? {
        queue.sync {}
        return state.withLock { $0.failure }
    }

    private func run() {
        let connection = state.withLock { state -> Result<DatabaseQueue, any Error> in
            state.pending = false
            if let connection = state.connection { return .success(connection) }
            var configuration = Configuration()
            configuration.busyMode = .timeout(CatalogStore.busyTimeout)
            do {
                let opened = try DatabaseQueue(path: path, configuration: configuration)
                state.connection = opened
                return .success(opened)
            } catch {
                return .failure(error)
            }
        }
        let failure: String?
        do {
            try connection.get().writeWithoutTransaction { db in _ = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)") }
            failure = nil
        } catch {
            failure = "\(error)"
        }
        state.withLock { $0.failure = failure }
    }
}
