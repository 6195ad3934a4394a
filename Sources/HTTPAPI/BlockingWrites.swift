import HTTPServer

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
