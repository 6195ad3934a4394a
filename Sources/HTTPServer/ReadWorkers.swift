import CScheduling
import Logging
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The threads that answer heavy reads (`ReadCost.heavy`) for the byte lane: one per core, owned by the server that
/// made them (`FastLane.workers`), started with its first connection and stopped by its shutdown (`shutdown()`, a
/// service of the application that runs after the HTTP server has stopped).
public final class ReadWorkers: Sendable {
    private let pool: OwnedThreadPool

    public init(threads: Int = System.coreCount) { pool = OwnedThreadPool(threads: threads) }

    /// Runs `body` on a worker; its result on `eventLoop`. Fails once the workers are stopped.
    func run<T: Sendable>(on eventLoop: any EventLoop, _ body: @escaping @Sendable () throws -> T) -> EventLoopFuture<T> {
        pool.run(on: eventLoop, body)
    }

    /// Stops the threads once the work they were given is done; later work fails (its connection is closed).
    public func shutdown() async { await pool.shutdown() }

    /// The event loops already under the batch policy.
    private static let yielding = Mutex<Set<ObjectIdentifier>>([])

    /// Puts the thread of `loop` (the calling thread: a handler's loop) under Linux's batch policy, once per loop:
    /// its wake-ups — a request read, a worker's answer to write — no longer preempt a read worker in the middle of
    /// a search; the loop runs when the worker's time slice ends or it waits for work. It keeps its share of the CPU.
    ///
    /// Measured (RESULTS.md, issue 36): on 2 cores the loop woke about once per search request, and each wake-up
    /// preempted a worker (0.56 involuntary switches per request on each). Under the batch policy the search mix
    /// served 13 % more requests per second with a lower p99; nearby alone, and nearby and search at once, did not
    /// change past the noise.
    ///
    /// A thread inherits the policy of the thread that starts it: the workers are started first, under the normal
    /// policy (a worker under the batch policy would not preempt the loop either, and the loop would wait for it).
    func yieldToWorkers(_ loop: any EventLoop, logger: Logger) {
        guard loop.inEventLoop, Self.yielding.withLock({ $0.insert(ObjectIdentifier(loop)).inserted }) else { return }
        pool.started()
        let error = poi_schedule_calling_thread_as_batch()
        if error != 0 {
            logger.warning("the event loop keeps the normal scheduling policy (sched_setscheduler: \(String(cString: strerror(error))))")
        }
    }
}
