import HTTPServer
import Logging
import ServiceLifecycle
import Synchronization

/// The work a server does besides answering requests — import and backup tasks, webhook deliveries — and how each
/// stops on shutdown (docs/ARCHITECTURE.md, "Operations"). `buildApplication` runs these as services of the
/// application's `ServiceGroup`, after the HTTP server in shutdown order: on SIGTERM or SIGINT the server stops
/// accepting and answers what it has, then the running import stops between two batches, a running backup finishes,
/// the webhook loops end, and the read and write threads stop; `poi serve` then writes the snapshot.
public final class ServerWork: Sendable {
    let imports = ImportTasks()
    let backups = BackupTasks()
    /// The threads writes block on, and those that answer the byte lane's heavy reads: started at first use, stopped
    /// last.
    let writes = BlockingWrites()
    let reads = ReadWorkers()
    /// The fences' webhook deliveries (nil until the router made them).
    let webhooks = Mutex<FenceWebhooks?>(nil)

    public init() {}

    /// Each part as a service: nothing to start (the router starts what it needs as requests come), a drain on
    /// shutdown, logged.
    func services(logger: Logger) -> [any Service] {
        [
            Drain(name: "worker threads", logger: logger) { [self] in
                await reads.shutdown()
                await writes.shutdown()
                return nil
            },
            Drain(name: "webhooks", logger: logger) { [self] in
                await webhooks.withLock { $0 }?.stop()
                return nil
            },
            Drain(name: "backups", logger: logger) { [backups] in
                await backups.drain()
                return nil
            },
            Drain(name: "imports", logger: logger) { [imports] in
                let stopped = await imports.drain()
                return stopped.isEmpty ? nil : stopped.map { "\($0.id): \($0.error ?? "")" }.joined(separator: "; ")
            },
        ]
    }
}

/// A service that waits for the group's graceful shutdown, then runs `stop` and logs what it says.
public struct Drain: Service {
    let name: String
    let logger: Logger
    let stop: @Sendable () async -> String?

    public init(name: String, logger: Logger, stop: @escaping @Sendable () async -> String?) {
        (self.name, self.logger, self.stop) = (name, logger, stop)
    }

    public func run() async throws {
        // Returns at the graceful shutdown, or throws when the group is cancelled: either way, stop.
        try? await gracefulShutdown()
        let started = ContinuousClock.now
        let said = await stop()
        logger.info("shutdown: \(name) stopped in \(ContinuousClock.now - started)\(said.map { ": \($0)" } ?? "")")
    }
}
