import NIOPosix

/// Writes block their thread until the store answers (PostgreSQL: up to the statement deadline, longer while the
/// writer lock is queued for). They run on threads of their own, not on Swift's cooperative pool, whose few threads
/// (one per core) every request's task needs: a write waiting on a store cut off by a partition must not stall the
/// reads and health checks the server keeps answering meanwhile.
enum BlockingWrites {
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 4)
        pool.start()
        return pool
    }()

    /// Runs `body` on the write pool and answers its result (or throws its error, of the type it threw).
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(body)
    }
}
