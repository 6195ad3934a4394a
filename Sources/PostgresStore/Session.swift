import Catalog
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// One PostgreSQL connection used by one caller at a time, opened on first use and reopened on the next call after
/// it is lost. Errors become `CatalogError`: `.unavailable` when PostgreSQL cannot be reached or went away (the
/// connection is dropped, to be reopened next time), `.storage` when it refused a statement.
final class Session: @unchecked Sendable {
    // SAFETY: @unchecked Sendable because `connection` is only touched under `lock`, and `onConnect` and
    // `onUnreachable` are set once, before the first `run`.
    private let lock = NSLock()
    private var connection: PostgresConnection?
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    private let name: String
    private static let counter = NSLock()
    nonisolated(unsafe) private static var nextID = 0  // SAFETY: only touched under `counter`.
    /// Runs on every new connection before its first use (the feed's LISTEN).
    var onConnect: (@Sendable (PostgresConnection) throws -> Void)?
    /// Runs when this session finds PostgreSQL unreachable (set once, before the first `run`).
    var onUnreachable: (@Sendable () -> Void)?
    /// Set by `distrust()`: the next `run` opens a new connection instead of using the current one.
    private let distrusted = Mutex(false)

    init(configuration: PostgresConnection.Configuration, logger: Logger, name: String) {
        self.configuration = configuration
        self.logger = logger
        self.name = name
    }

    func run<T>(_ body: (PostgresConnection) throws -> T) throws(CatalogError) -> T {
        lock.lock()
        defer { lock.unlock() }
        do {
            let connection = try open()
            return try body(connection)
        } catch {
            let failure = Session.classify(error)
            if case .unavailable = failure {
                try? connection?.close().answer(within: 5)
                connection = nil
                onUnreachable?()
            }
            throw failure
        }
    }

    /// Makes the next `run` reconnect first (another session found PostgreSQL gone: this connection may be dead
    /// without knowing it yet).
    func distrust() {
        distrusted.withLock { $0 = true }
    }

    private func open() throws -> PostgresConnection {
        if distrusted.withLock({ flag in
            defer { flag = false }
            return flag
        }), let stale = connection {
            try? stale.close().answer(within: 5)
            connection = nil
        }
        if let connection, !connection.isClosed { return connection }
        connection = nil
        let id = Session.counter.withLock { () -> Int in
            Session.nextID += 1
            return Session.nextID
        }
        let opened = try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(),
            configuration: configuration,
            id: id,
            logger: logger
        ).answer()
        do {
            try onConnect?(opened)
        } catch {
            try? opened.close().answer(within: 5)
            throw error
        }
        connection = opened
        return opened
    }

    func close() {
        lock.lock()
        defer { lock.unlock() }
        try? connection?.close().answer(within: 5)
        connection = nil
    }

    /// Connection trouble (refused, reset, closed, PostgreSQL shutting down: SQLSTATE classes 08 and 57) is
    /// `.unavailable`; a statement PostgreSQL refused is `.storage` with its message.
    static func classify(_ error: any Error) -> CatalogError {
        if let error = error as? CatalogError { return error }
        if let error = error as? PSQLError {
            if let info = error.serverInfo {
                let state = info[.sqlState] ?? ""
                let message = info[.message] ?? "error \(state)"
                if state.hasPrefix("08") || state.hasPrefix("57") { return .unavailable("PostgreSQL: \(message)") }
                return .storage("PostgreSQL: \(message) (SQLSTATE \(state))")
            }
            switch error.code {
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
                return .unavailable("PostgreSQL connection: \(error.code)\(error.underlying.map { " (\($0))" } ?? "")")
            default:
                return .storage("PostgreSQL: \(String(reflecting: error))")
            }
        }
        if error is PostgresDecodingError { return .storage("PostgreSQL: unexpected column type (\(error))") }
        // Refused and reset connections surface as NIO's socket errors.
        return .unavailable("PostgreSQL connection: \(error)")
    }
}

extension EventLoopFuture where Value: Sendable {
    /// Blocks until the future completes or `seconds` pass. A query on a connection that broke may never be
    /// answered; past the deadline it counts as unreachable (the session then drops the connection), so no caller
    /// waits forever. Never called on an event loop.
    func answer(within seconds: Int64 = 10) throws -> Value {
        try answer(closing: nil, within: seconds)
    }

    /// `answer`, also failing within 50 ms once `connection` is closed: a statement sent on a connection PostgreSQL
    /// is ending (a restart) may otherwise stay unanswered until the deadline. (Polled, not a callback on the
    /// connection's close future, which would keep one closure per statement for the connection's whole life.)
    func answer(on connection: PostgresConnection, within seconds: Int64 = 10) throws -> Value {
        try answer(closing: connection, within: seconds)
    }

    private func answer(closing connection: PostgresConnection?, within seconds: Int64) throws -> Value {
        let promise = eventLoop.makePromise(of: Value.self)
        let deadline = NIODeadline.now() + .seconds(seconds)
        let watch = eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(50), delay: .milliseconds(50)) { _ in
            if connection?.isClosed == true {
                promise.fail(CatalogError.unavailable("PostgreSQL closed the connection"))
            } else if NIODeadline.now() >= deadline {
                promise.fail(CatalogError.unavailable("PostgreSQL did not answer within \(seconds) s"))
            }
        }
        cascade(to: promise)
        promise.futureResult.whenComplete { _ in watch.cancel() }
        return try promise.futureResult.wait()
    }
}

/// The schema, brought up to date by numbered migrations in one transaction under an advisory lock (so replicas
/// starting together migrate once).
enum PostgresSchema {
    static let migrations: [String] = [
        """
        CREATE TABLE poi (
            ord bigint GENERATED ALWAYS AS IDENTITY,
            id text PRIMARY KEY,
            name text NOT NULL,
            category text NOT NULL,
            address text,
            city text,
            country text,
            lat double precision NOT NULL,
            lon double precision NOT NULL,
            tags text NOT NULL DEFAULT '{}'
        );
        CREATE INDEX poi_ord ON poi (ord);
        CREATE TABLE pin (
            ord bigint GENERATED ALWAYS AS IDENTITY,
            id text PRIMARY KEY,
            unique_key text NOT NULL,
            first_name text NOT NULL,
            last_name text NOT NULL,
            map_string text NOT NULL,
            media_url text NOT NULL,
            lat double precision NOT NULL,
            lon double precision NOT NULL,
            created_at text NOT NULL,
            updated_at text NOT NULL
        );
        CREATE INDEX pin_ord ON pin (ord);
        CREATE TABLE store_state (
            id integer PRIMARY KEY CHECK (id = 1),
            identity text NOT NULL,
            sequence bigint NOT NULL,
            trimmed_through bigint NOT NULL
        );
        INSERT INTO store_state (id, identity, sequence, trimmed_through) VALUES (1, gen_random_uuid()::text, 0, 0);
        CREATE TABLE change (
            seq bigint NOT NULL,
            kind text NOT NULL CHECK (kind IN ('poi', 'pin')),
            id text NOT NULL,
            at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (seq, kind, id)
        );
        CREATE TABLE replica (
            name text PRIMARY KEY,
            applied bigint NOT NULL,
            snapshot bigint,
            seen_at timestamptz NOT NULL
        );
        """,
        // 2: who placed each pin (their token's sub); NULL for pins written by keys or before this migration.
        """
        ALTER TABLE pin ADD COLUMN owner text;
        CREATE INDEX pin_owner ON pin (owner);
        """,
    ]

    static func migrate(_ connection: PostgresConnection, logger: Logger) throws {
        try PostgresStore.transaction(connection, "BEGIN", logger: logger) {
            _ = try connection.query("SELECT pg_advisory_xact_lock(7402311)", logger: logger).answer(on: connection)
            _ = try connection.query(
                "CREATE TABLE IF NOT EXISTS poi_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
                logger: logger
            ).answer(on: connection)
            for (index, script) in migrations.enumerated() {
                let version = index + 1
                let done = try connection.query("SELECT 1 FROM poi_schema WHERE version = \(version)", logger: logger).answer(on: connection)
                guard done.first == nil else { continue }
                // One statement per query (the extended protocol takes one at a time).
                for statement in script.split(separator: ";\n") where !statement.allSatisfy(\.isWhitespace) {
                    _ = try connection.query(PostgresQuery(unsafeSQL: String(statement)), logger: logger).answer(on: connection)
                }
                _ = try connection.query("INSERT INTO poi_schema (version) VALUES (\(version))", logger: logger).answer(on: connection)
            }
        }
    }
}
