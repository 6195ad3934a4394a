import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Records
import Synchronization

/// The hosts of a store URL and the one both sessions of a store use now: the first to try on the next connect,
/// so the two connections stay on one server and a failover is found once.
final class HostList: Sendable {
    let hosts: [StoreURL.Host]
    let configurations: [PostgresConnection.Configuration]
    let attributes: StoreURL.SessionAttributes
    let sslMode: StoreURL.SSLMode
    let current = Mutex(0)

    init(url: StoreURL) throws(CatalogError) {
        hosts = url.hosts
        configurations = try url.configurations()
        attributes = url.sessionAttributes
        sslMode = url.sslMode
    }

    /// The host the sessions are on now, for `/health` and logs.
    var currentHost: StoreURL.Host { hosts[current.withLock { $0 }] }
}

/// One PostgreSQL connection used by one caller at a time, opened on first use and reopened on the next call after
/// it is lost. With several hosts, opening tries each in turn from the one last used, as libpq does, and passes over a
/// host that does not have the session attributes asked for (a standby that was not promoted, for `read-write`).
/// Errors become `CatalogError`: `.unavailable` when PostgreSQL cannot be reached, went away or is read-only (the
/// connection is dropped, to be reopened next time), `.storage` when it refused a statement.
final class Session: @unchecked Sendable {
    // SAFETY: @unchecked Sendable because `connection` is only touched under `lock`, and `onConnect` and
    // `onUnreachable` are set once, before the first `run`.
    private let lock = NSLock()
    private var connection: PostgresConnection?
    private let hosts: HostList
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

    /// Seconds PostgreSQL lets this session sit idle inside a transaction before it ends the session.
    private let idleInTransaction: Int

    /// - Parameter idleInTransaction: seconds after which PostgreSQL ends this session when it sits idle inside a
    ///   transaction — a client gone silent (a replica cut off mid-write) so releases the store_state row lock
    ///   every writer queues on, instead of stalling every other replica's writes until TCP gives up on it (hours).
    ///   A transaction that pauses between statements on purpose (a full load) raises it with SET LOCAL.
    init(hosts: HostList, logger: Logger, name: String, idleInTransaction: Int) {
        self.hosts = hosts
        self.logger = logger
        self.name = name
        self.idleInTransaction = idleInTransaction
    }

    /// Two sessions to one store: `main`, for statements, and `listener`, which is to LISTEN (`listen(on:heard:)`) and
    /// may run statements too. When either finds PostgreSQL gone, the other is not trusted either: PostgreSQL ends
    /// every session when it stops, and a statement sent on a connection it ended may go unanswered.
    static func pair(hosts: HostList, logger: Logger, names: (main: String, listener: String)) -> (main: Session, listener: Session) {
        let main = Session(hosts: hosts, logger: logger, name: names.main, idleInTransaction: 3)
        let listener = Session(hosts: hosts, logger: logger, name: names.listener, idleInTransaction: 600)
        main.onUnreachable = { [weak listener] in listener?.distrust() }
        listener.onUnreachable = { [weak main] in main?.distrust() }
        return (main, listener)
    }

    /// LISTENs on `channel` on every connection this session opens, handing each notification's payload to `heard`.
    func listen(on channel: String, heard: @escaping @Sendable (String) -> Void) {
        onConnect = { [logger] connection in
            connection.addListener(channel: channel) { _, notification in heard(notification.payload) }
            _ = try connection.query(PostgresQuery(unsafeSQL: "LISTEN \(channel)"), logger: logger).answer(on: connection)
        }
    }

    func run<T>(_ body: (PostgresConnection) throws -> T) throws(CatalogError) -> T {
        lock.lock()
        defer { lock.unlock() }
        do {
            let connection = try open()
            return try body(connection)
        } catch {
            let failure = Session.classify(error, tls: hosts.sslMode)
            if case .unavailable = failure {
                if let connection { Session.discard(connection) }
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
            Session.discard(stale)
            connection = nil
        }
        if let connection, !connection.isClosed { return connection }
        connection = nil
        let first = hosts.current.withLock { $0 }
        var refusals: [String] = []
        for step in 0..<hosts.hosts.count {
            let index = (first + step) % hosts.hosts.count
            let host = hosts.hosts[index]
            do {
                var configuration = hosts.configurations[index]
                configuration.options.additionalStartupParameters = [("idle_in_transaction_session_timeout", "\(idleInTransaction * 1000)")]
                let opened = try connect(configuration)
                do {
                    if let unsuitable = try unsuitability(of: opened) {
                        Session.discard(opened)
                        refusals.append("\(host.description) \(unsuitable)")
                        continue
                    }
                    try onConnect?(opened)
                } catch {
                    Session.discard(opened)
                    throw error
                }
                hosts.current.withLock { $0 = index }
                connection = opened
                return opened
            } catch {
                let failure = Session.classify(error, tls: hosts.sslMode)
                // A statement refused on a host that is up is not a reason to try the next one.
                guard case .unavailable(let reason) = failure, hosts.hosts.count > 1 else { throw failure }
                refusals.append("\(host.description): \(reason)")
            }
        }
        throw CatalogError.unavailable("no host of the store is usable: " + refusals.joined(separator: "; "))
    }

    private func connect(_ configuration: PostgresConnection.Configuration) throws -> PostgresConnection {
        let id = Session.counter.withLock { () -> Int in
            Session.nextID += 1
            return Session.nextID
        }
        return try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(),
            configuration: configuration,
            id: id,
            logger: logger
        ).answer(within: configuration.options.connectTimeout.nanoseconds / 1_000_000_000 + 5)
    }

    /// Why `connection` lacks the session attributes the URL asks for (nil: it has them).
    private func unsuitability(of connection: PostgresConnection) throws -> String? {
        switch hosts.attributes {
        case .any:
            return nil
        case .readWrite:
            let rows = try connection.query("SHOW transaction_read_only", logger: logger).answer(on: connection)
            return try rows.first?.decode(String.self) == "on" ? "is read-only (a standby, or default_transaction_read_only)" : nil
        case .primary:
            let rows = try connection.query("SELECT pg_is_in_recovery()", logger: logger).answer(on: connection)
            return try rows.first?.decode(Bool.self) == true ? "is in recovery (a standby)" : nil
        }
    }

    /// Closes a connection found broken without waiting: one cut off by a partition may take its whole deadline to
    /// close. It is kept until closed (PostgresNIO requires a connection closed before it is released).
    @discardableResult
    static func discard(_ connection: PostgresConnection) -> EventLoopFuture<Void> {
        let closing: EventLoopFuture<Void> = connection.close()
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
        return closing
    }

    /// Closes the connection, waiting up to 5 s for PostgreSQL to see it go (it is kept until closed either way).
    func close() {
        lock.lock()
        defer { lock.unlock() }
        if let connection { try? Session.discard(connection).answer(within: 5) }
        connection = nil
    }

    /// Connection trouble (refused, reset, closed, PostgreSQL shutting down: SQLSTATE classes 08 and 57; a write on a
    /// server that became read-only: 25006, as after a failover that demoted it) is `.unavailable`; so is a TLS
    /// handshake that failed, with what TLS said; a statement PostgreSQL refused is `.storage` with its message.
    static func classify(_ error: any Error, tls: StoreURL.SSLMode = .disable) -> CatalogError {
        if let error = error as? CatalogError { return error }
        if let error = error as? PSQLError {
            if let info = error.serverInfo {
                let state = info[.sqlState] ?? ""
                let message = info[.message] ?? "error \(state)"
                if state.hasPrefix("08") || state.hasPrefix("57") || state == "25006" { return .unavailable("PostgreSQL: \(message)") }
                return .storage("PostgreSQL: \(message) (SQLSTATE \(state))")
            }
            switch error.code {
            case .sslUnsupported:
                return .unavailable("PostgreSQL does not offer TLS, and sslmode=\(tls.rawValue) requires it")
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .failedToAddSSLHandler:
                if let underlying = error.underlying, let described = describeTLS(underlying, tls: tls) { return .unavailable(described) }
                return .unavailable("PostgreSQL connection: \(error.code)\(error.underlying.map { " (\($0))" } ?? "")")
            default:
                return .storage("PostgreSQL: \(String(reflecting: error))")
            }
        }
        if error is PostgresDecodingError { return .storage("PostgreSQL: unexpected column type (\(error))") }
        if let described = describeTLS(error, tls: tls) { return .unavailable(described) }
        // Refused and reset connections surface as NIO's socket errors.
        return .unavailable("PostgreSQL connection: \(error)")
    }

    /// A TLS failure in words: the certificate not signed by the trusted authority, or not issued for the host.
    static func describeTLS(_ error: any Error, tls: StoreURL.SSLMode) -> String? {
        if let error = error as? NIOSSLExtraError, String(describing: error).hasPrefix("NIOSSLExtraError.failedToValidateHostname") {
            return "TLS: the PostgreSQL server's certificate is not issued for the host named in the store URL (sslmode=verify-full): \(error)"
        }
        guard error is NIOSSLError || error is BoringSSLError else { return nil }
        let text = String(describing: error)
        if text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate verify failed") {
            return "TLS: the PostgreSQL server's certificate is not signed by a certificate authority in sslrootcert "
                + "(sslmode=\(tls.rawValue)): \(text)"
        }
        return "TLS handshake with PostgreSQL failed (sslmode=\(tls.rawValue)): \(text)"
    }
}

extension EventLoopFuture where Value: Sendable {
    /// Blocks until the future completes or `seconds` pass. A query on a connection that broke may never be
    /// answered; past the deadline it counts as unreachable (the session then drops the connection), so no caller
    /// waits forever. Never called on an event loop.
    func answer(within seconds: Int64 = PostgresStore.statementDeadline) throws -> Value {
        try answer(closing: nil, within: seconds)
    }

    /// `answer`, also failing within 50 ms once `connection` is closed: a statement sent on a connection PostgreSQL
    /// is ending (a restart) may otherwise stay unanswered until the deadline. (Polled, not a callback on the
    /// connection's close future, which would keep one closure per statement for the connection's whole life.)
    func answer(on connection: PostgresConnection, within seconds: Int64 = PostgresStore.statementDeadline) throws -> Value {
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
        // 3: houses and street lines of an OpenStreetMap import (PostgresStore+Addresses), and their generation.
        """
        CREATE TABLE address_block (seq integer PRIMARY KEY, count integer NOT NULL, data bytea NOT NULL);
        CREATE TABLE street_block (seq integer PRIMARY KEY, data bytea NOT NULL);
        CREATE TABLE address_state (id integer PRIMARY KEY CHECK (id = 1), generation text NOT NULL);
        INSERT INTO address_state (id, generation) VALUES (1, gen_random_uuid()::text);
        """,
        // 4: water and building areas of an OpenStreetMap import (PostgresStore+Addresses), replaced with the addresses.
        """
        CREATE TABLE area_block (seq integer PRIMARY KEY, data bytea NOT NULL);
        """,
        // 5: live areas shared by every server (PostgresFenceLog).
        """
        CREATE TABLE fence_state (id integer PRIMARY KEY CHECK (id = 1), sequence bigint NOT NULL, version bigint NOT NULL);
        INSERT INTO fence_state (id, sequence, version) VALUES (1, 0, 0);
        CREATE TABLE fence (id text PRIMARY KEY, definition text, version bigint NOT NULL);
        CREATE INDEX fence_version ON fence (version);
        CREATE TABLE fence_event (seq bigint PRIMARY KEY, fence text NOT NULL, detect text NOT NULL, json text NOT NULL);
        CREATE INDEX fence_event_fence ON fence_event (fence, seq);
        CREATE TABLE fence_delivery (
            fence text PRIMARY KEY,
            delivered bigint NOT NULL DEFAULT 0,
            dead integer NOT NULL DEFAULT 0,
            holder text,
            lease_until timestamptz
        );
        """,
        // 6: where the addresses stand in OpenStreetMap's history, written with them (replaceAddresses(_:osm:)).
        """
        ALTER TABLE address_state ADD COLUMN osm_sequence bigint, ADD COLUMN osm_timestamp text, ADD COLUMN osm_source text;
        """,
        // 7: when each fence event was stored, so that the retention drops them by age (PostgresFenceLog.trim), and
        // from which number they are still kept. BRIN: the times grow with the numbers, and a B-tree would cost
        // every append another page.
        """
        ALTER TABLE fence_event ADD COLUMN at timestamptz NOT NULL DEFAULT now();
        CREATE INDEX fence_event_at ON fence_event USING brin (at);
        ALTER TABLE fence_state ADD COLUMN kept_from bigint NOT NULL DEFAULT 1;
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
                    _ = try connection.query(PostgresQuery(unsafeSQL: String(statement)), logger: logger).answer(on: connection, within: 600)
                }
                _ = try connection.query("INSERT INTO poi_schema (version) VALUES (\(version))", logger: logger).answer(on: connection)
            }
        }
    }
}
