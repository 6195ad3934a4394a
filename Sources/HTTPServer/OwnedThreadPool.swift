import NIOCore
import NIOPosix
import Synchronization

/// Threads a server owns instead of a process-wide pool: started at first use, stopped once by the server's shutdown
/// (`shutdown()`); work given after that fails.
public final class OwnedThreadPool: Sendable {
    private enum State {
        case idle
        case running(NIOThreadPool)
        case stopped
    }

    private let state = Mutex<State>(.idle)
    private let threads: Int

    public init(threads: Int) { self.threads = threads }

    /// The pool, started on first use (by the calling thread, whose scheduling policy its threads inherit); nil once
    /// stopped.
    @discardableResult
    func started() -> NIOThreadPool? {
        state.withLock { state in
            switch state {
            case .running(let pool): return pool
            case .stopped: return nil
            case .idle:
                let pool = NIOThreadPool(numberOfThreads: threads)
                pool.start()
                state = .running(pool)
                return pool
            }
        }
    }

    /// Runs `body` on one of the threads; its result on `eventLoop`.
    public func run<T: Sendable>(on eventLoop: any EventLoop, _ body: @escaping @Sendable () throws -> T) -> EventLoopFuture<T> {
        guard let pool = started() else { return eventLoop.makeFailedFuture(NIOThreadPoolError.ThreadPoolInactive()) }
        return pool.runIfActive(eventLoop: eventLoop, body)
    }

    /// Runs `body` on one of the threads and answers its result (or throws its error).
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        guard let pool = started() else { throw NIOThreadPoolError.ThreadPoolInactive() }
        return try await pool.runIfActive(body)
    }

    /// Stops the threads once the work they were given is done.
    public func shutdown() async {
        let running = state.withLock { state -> NIOThreadPool? in
            defer { state = .stopped }
            if case .running(let pool) = state { return pool }
            return nil
        }
        try? await running?.shutdownGracefully()
    }
}
