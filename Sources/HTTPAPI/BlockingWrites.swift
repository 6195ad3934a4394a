import NIOPosix
import Synchronization

/// Writes block their thread until the store answers (PostgreSQL: up to the statement deadline, longer while the
/// writer lock is queued for). They run on threads of their own, not on Swift's cooperative pool, whose few threads
/// (one per core) every request's task needs: a write waiting on a store cut off by a partition must not stall the
/// reads and health checks the server keeps answering meanwhile. Owned by the application (`ServerWork`): started
/// at the first write, stopped by the shutdown after the HTTP server.
final class BlockingWrites: Sendable {
    private enum State {
        case idle
        case running(NIOThreadPool)
        case stopped
    }

    private let state = Mutex<State>(.idle)

    /// The pool, started on first use; nil once stopped.
    private func pool() -> NIOThreadPool? {
        state.withLock { state in
            switch state {
            case .running(let pool): return pool
            case .stopped: return nil
            case .idle:
                let pool = NIOThreadPool(numberOfThreads: 4)
                pool.start()
                state = .running(pool)
                return pool
            }
        }
    }

    /// Runs `body` on the write pool and answers its result (or throws its error, of the type it threw).
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        guard let pool = pool() else { throw NIOThreadPoolError.ThreadPoolInactive() }
        return try await pool.runIfActive(body)
    }

    /// Stops the threads once the writes they run are done (the server has stopped taking requests).
    func shutdown() async {
        let running = state.withLock { state -> NIOThreadPool? in
            defer { state = .stopped }
            if case .running(let pool) = state { return pool }
            return nil
        }
        try? await running?.shutdownGracefully()
    }
}
