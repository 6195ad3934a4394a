import HTTPServer
import Records
import SearchEngine

/// Writes block their thread until the store answers (PostgreSQL: up to the statement deadline, longer while the
/// writer lock is queued for). They run on threads of their own, not on Swift's cooperative pool, whose few threads
/// (one per core) every request's task needs: a write waiting on a store cut off by a partition must not stall the
/// reads and health checks the server keeps answering meanwhile. Owned by the application (`ServerWork`): started
/// at the first write, stopped by the shutdown after the HTTP server.
///
/// The threads bound how many writes one commit of the store gathers (docs/ARCHITECTURE.md, "The walk of a write":
/// a write waits on its thread for the commit that takes it): 32, the connections a busy client pool holds. A waiting
/// thread costs its stack's touched pages, not CPU.
final class BlockingWrites: Sendable {
    private let pool = OwnedThreadPool(threads: 32)

    /// Runs `body` on the write pool and answers its result (or throws its error, of the type it threw).
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T { try await pool.run(body) }

    /// Stops the threads once the writes they run are done (the server has stopped taking requests).
    func shutdown() async { await pool.shutdown() }
}

extension BlockingWrites {
    /// The pin a write is about to change, for the checks made before it (its owner). Over a shared store, a pin this
    /// server has not seen — created through another server moments ago, not yet applied by the follower — is looked
    /// for again after catching up with the store (on a write thread: that blocks on PostgreSQL), so a client whose
    /// requests a load balancer spreads over the servers can change a pin it has just created.
    func pinToChange(_ id: String, in engine: SearchEngine) async throws -> PinRecord? {
        if let pin = engine.pin(id: id) { return pin }
        guard engine.followsStore else { return nil }
        return try await run {
            engine.catchUp()
            return engine.pin(id: id)
        }
    }
}
