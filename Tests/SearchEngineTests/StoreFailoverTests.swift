import Catalog
import Foundation
import GeoCore
import PostgresNIO
import Records
import TestSupport
import Testing

@testable import PostgresStore
@testable import SearchEngine

/// Store URLs in libpq's convention, read without connecting.
@Suite struct StoreURLTests {
    @Test func severalHostsWithTheirPortsAndParameters() throws {
        let url = try StoreURL(
            "postgresql://poi:s%40cret@10.0.0.1:5433,db2.example,[::1]:6000/poi?target_session_attrs=primary&sslmode=require&connect_timeout=3"
        )
        #expect(url.user == "poi" && url.password == "s@cret" && url.database == "poi")
        #expect(
            url.hosts == [.init(name: "10.0.0.1", port: 5433), .init(name: "db2.example", port: 5432), .init(name: "::1", port: 6000)]
        )
        #expect(url.sessionAttributes == .primary && url.sslMode == .require && url.connectTimeout == 3)
        #expect(url.location == "postgresql://poi@10.0.0.1:5433,db2.example:5432,[::1]:6000/poi?target_session_attrs=primary&sslmode=require")
        #expect(try url.configurations().count == 3)
    }

    @Test func severalHostsMeanReadWriteUnlessToldOtherwise() throws {
        #expect(try StoreURL("postgresql://poi@h1:1,h2:2/poi").sessionAttributes == .readWrite)
        #expect(try StoreURL("postgresql://poi@h1/poi").sessionAttributes == .any)
        #expect(try StoreURL("postgresql://poi@h1:1,h2:2/poi?target_session_attrs=any").sessionAttributes == .any)
        #expect(try StoreURL("postgres://poi@h1/poi?sslmode=disable").sslMode == .disable)
    }

    /// Each mistake is named, before anything connects (`poi serve --store` turns it into a usage error).
    @Test(arguments: [
        ("mysql://poi@h/poi", "not a postgresql://"),
        ("postgresql://h/poi", "names no user"),
        ("postgresql://poi@/poi", "names no host"),
        ("postgresql://poi@h1,,h2/poi", "an empty host"),
        ("postgresql://poi@h1:0/poi", "between 1 and 65535"),
        ("postgresql://poi@h1:abc/poi", "between 1 and 65535"),
        ("postgresql://poi@h1", "names no database"),
        ("postgresql://poi@h1/poi?target_session_attrs=standby", "target_session_attrs must be one of any, read-write, primary"),
        ("postgresql://poi@h1/poi?sslmode=on", "sslmode must be one of disable, prefer, require, verify-ca, verify-full"),
        ("postgresql://poi@h1/poi?sslmode=verify-full", "needs sslrootcert=FILE"),
        ("postgresql://poi@h1/poi?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem", "is not a readable file"),
        ("postgresql://poi@h1/poi?sslrootcert=/etc/hostname", "sslmode is disable"),
        ("postgresql://poi@h1/poi?connect_timeout=0", "connect_timeout must be a whole number"),
        ("postgresql://poi@h1/poi?application_name=x", "unsupported URL parameter application_name"),
        ("postgresql://poi@h1/poi?sslmode=require&sslmode=disable", "sslmode is given twice"),
        ("postgresql://poi@[::1/poi", "unclosed ["),
    ])
    func mistakesAreNamed(url: String, expected: String) {
        let problem = PostgresStore.problem(with: url)
        #expect(problem?.contains(expected) == true, "\(url): \(problem ?? "accepted")")
    }
}

/// PostgreSQL servers of these tests' own (scripts/postgres/start), for what the shared test server cannot do: be
/// killed, be a standby, serve TLS.
final class TestCluster: @unchecked Sendable {
    // SAFETY: @unchecked Sendable because `directories` is only appended to by the test that owns the instance.
    let scratch = ScratchDirectory("poi-pg-cluster")
    private var directories: [String] = []
    static let script = TestPostgres.repository + "/scripts/postgres/"

    /// Starts a server in a new directory with `settings` (scripts/postgres/start's PG_* variables); answers its
    /// directory, port and URL.
    func start(_ name: String, _ settings: [String: String] = [:]) throws -> (directory: String, port: String, url: String) {
        let directory = scratch.file(name)
        directories.append(directory)
        let url = try TestPostgres.shell("/usr/bin/env", settings.map { "\($0)=\($1)" } + [Self.script + "start", directory])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let port = try String(contentsOfFile: directory + "/port", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return (directory, port, url)
    }

    /// Kills the server's postmaster with SIGKILL, as a machine dying would leave it (no shutdown, no last WAL sent),
    /// and waits until its port refuses connections. (Not until the process is gone: nothing may reap it here, so it
    /// can stay a zombie.)
    func kill(_ directory: String, port: String) throws {
        let pidFile = try String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8)
        guard let pid = pid_t(pidFile.split(separator: "\n").first ?? "") else { throw TestPostgres.Failure(description: "no pid in \(pidFile)") }
        Glibc.kill(pid, SIGKILL)
        for _ in 0..<1200 {
            let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port)!).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(probe)
            if connected != 0 { return }
            usleep(50_000)
        }
        throw TestPostgres.Failure(description: "port \(port) still accepts connections 60 s after SIGKILL to \(pid)")
    }

    /// Makes `standby` the primary's synchronous standby (an acknowledged commit is on both) and waits until
    /// PostgreSQL reports it so.
    func makeSynchronous(primary url: String, standby name: String) throws {
        try TestPostgres.shell("/usr/bin/psql", [url, "-v", "ON_ERROR_STOP=1", "-qc", "ALTER SYSTEM SET synchronous_standby_names = '\(name)'"])
        try TestPostgres.shell("/usr/bin/psql", [url, "-v", "ON_ERROR_STOP=1", "-qc", "SELECT pg_reload_conf()"])
        var state = ""
        for _ in 0..<1200 {
            state = try TestPostgres.shell(
                "/usr/bin/psql",
                [url, "-tAc", "SELECT sync_state FROM pg_stat_replication WHERE application_name = '\(name)'"]
            )
            .trimmingCharacters(in: .whitespacesAndNewlines)
            if state == "sync" { return }
            usleep(50_000)
        }
        throw TestPostgres.Failure(
            description: "the standby \(name) did not become synchronous within 60 s (sync_state \(state.isEmpty ? "none" : state))"
        )
    }

    /// Promotes a standby to primary, as an operator (or Patroni) does once the primary is gone; waits until it is.
    func promote(_ directory: String) throws {
        let bin = try TestPostgres.shell("/bin/sh", ["-c", "ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let asPostgres = getuid() == 0 ? ["runuser", "-u", "postgres", "--"] : []
        try TestPostgres.shell("/usr/bin/env", asPostgres + [bin + "/pg_ctl", "-D", directory + "/data", "-w", "-t", "120", "promote"])
    }

    deinit {
        for directory in directories.reversed() {
            // A killed server's directory has a stale pid file; stop tolerates that.
            _ = try? TestPostgres.shell(Self.script + "stop", [directory])
        }
    }
}

/// Several hosts in the store URL: when the primary dies and its synchronous standby is promoted, every engine finds
/// the new primary; nothing acknowledged is lost, and the feed goes on from its sequence.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, Comment(rawValue: TestPostgres.unavailable ?? ""))) struct StoreFailoverTests {
    /// Retries `body` while the store answers `.unavailable`, up to `seconds` (the time a promotion takes on a loaded
    /// machine); fails with the last error if it never succeeds.
    static func eventually<T>(_ what: String, seconds: Double = 60, _ body: () throws -> T) throws -> T {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            do {
                return try body()
            } catch let error as SearchError {
                guard case .unavailable = error, Date() < deadline else {
                    throw TestPostgres.Failure(description: "\(what): still failing after \(seconds) s: \(error)")
                }
                usleep(100_000)
            }
        }
    }

    @Test func writesResumeOnThePromotedStandbyWithNothingAcknowledgedLost() throws {
        let cluster = TestCluster()
        let primary = try cluster.start("primary")
        let standby = try cluster.start("standby", ["PG_STANDBY_OF": "127.0.0.1:\(primary.port)", "PG_STANDBY_NAME": "standby1"])
        // From now on the primary waits for the standby on every commit (set once the standby streams: the primary's
        // own createdb would wait for it otherwise).
        try cluster.makeSynchronous(primary: primary.url, standby: "standby1")
        let url = "postgresql://poi@127.0.0.1:\(primary.port),127.0.0.1:\(standby.port)/poi"
        let writer = try ReplicationTests.engine(url)
        let reader = try ReplicationTests.engine(url)
        var random = SplitMix64(seed: 38)
        var acknowledged: [POIRecord] = []
        for index in 0..<20 {
            let poi = ReplicationTests.poi("before-\(index)", &random)
            try writer.upsertPOI(poi)
            acknowledged.append(poi)
        }
        reader.catchUp()
        let sequenceBefore = try #require(reader.replicationStatus?.applied)

        try cluster.kill(primary.directory, port: primary.port)
        // No primary: reads go on from memory, a write is refused as unavailable (503). The first refusals may name
        // the connection the primary's death broke; once reconnected, the refusal names the standby as read-only.
        #expect(writer.poi(id: "before-0") == acknowledged[0])
        var reasons: [String] = []
        for _ in 0..<10 {
            do {
                try writer.upsertPOI(ReplicationTests.poi("orphan", &random))
                Issue.record("a write with no primary succeeded")
                break
            } catch {
                guard case .unavailable(let reason) = error else {
                    Issue.record("a write with no primary answered \(error), not .unavailable")
                    return
                }
                reasons.append(reason)
                if reason.contains("read-only") { break }
            }
        }
        #expect(reasons.last?.contains("read-only") == true, "the refusals never named the standby's state: \(reasons)")

        try cluster.promote(standby.directory)
        var after: [POIRecord] = []
        for index in 0..<20 {
            let poi = ReplicationTests.poi("after-\(index)", &random)
            try Self.eventually("a write after the promotion") { try writer.upsertPOI(poi) }
            after.append(poi)
        }
        try Self.eventually("the reader's catch-up") {
            reader.catchUp()
            guard reader.replicationStatus?.connected == true else { throw SearchError.unavailable("not connected yet") }
        }
        let status = try #require(reader.replicationStatus)
        #expect(status.applied == sequenceBefore + 20, "the feed goes on from its sequence: \(sequenceBefore) then \(status.applied)")
        #expect(status.reloads == 0)
        for poi in acknowledged + after {
            #expect(reader.poi(id: poi.id) == poi, "\(poi.id) on the reader after the failover")
        }
        #expect(reader.poi(id: "orphan") == nil)
        try ReplicationTests.expectMatches(reader, standby.url, seed: 38, "the reader against the promoted standby")
    }

    /// A store that went back (restored from a backup, or a failover to a standby that missed commits) is behind what
    /// a replica applied: the replica reloads rather than skip the changes that will reuse those numbers.
    @Test func aStoreThatWentBackIsReloaded() throws {
        let cluster = TestCluster()
        let server = try cluster.start("rewound")
        let follower = try ReplicationTests.engine(server.url)
        var random = SplitMix64(seed: 39)
        try follower.upsertPOI(ReplicationTests.poi("kept", &random))
        // The backup: a copy of the database now (CREATE DATABASE … TEMPLATE needs the source without sessions).
        let admin = server.url.replacingOccurrences(of: #"/poi$"#, with: "/postgres", options: .regularExpression)
        let endSessions = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'poi' AND pid <> pg_backend_pid()"
        try TestPostgres.shell("/usr/bin/psql", [admin, "-v", "ON_ERROR_STOP=1", "-qc", endSessions])
        try TestPostgres.shell("/usr/bin/psql", [admin, "-v", "ON_ERROR_STOP=1", "-qc", "CREATE DATABASE backup TEMPLATE poi"])
        for index in 0..<3 { try Self.eventually("a write") { try follower.upsertPOI(ReplicationTests.poi("lost-\(index)", &random)) } }
        follower.catchUp()
        let applied = try #require(follower.replicationStatus?.applied)
        // Restore: the backup takes the database's place.
        try TestPostgres.shell("/usr/bin/psql", [admin, "-v", "ON_ERROR_STOP=1", "-qc", endSessions])
        try TestPostgres.shell("/usr/bin/psql", [admin, "-v", "ON_ERROR_STOP=1", "-qc", "ALTER DATABASE poi RENAME TO lost"])
        try TestPostgres.shell("/usr/bin/psql", [admin, "-v", "ON_ERROR_STOP=1", "-qc", "ALTER DATABASE backup RENAME TO poi"])
        try Self.eventually("the follower's catch-up") {
            follower.catchUp()
            guard follower.replicationStatus?.connected == true else { throw SearchError.unavailable("not connected yet") }
        }
        let status = try #require(follower.replicationStatus)
        #expect(status.reloads == 1 && status.applied < applied, "a store behind the replica is reloaded: \(status), applied \(applied)")
        #expect(follower.poi(id: "kept") != nil && follower.poi(id: "lost-0") == nil)
        try ReplicationTests.expectMatches(follower, server.url, seed: 39, "the follower after the store went back")
    }
}

/// TLS to PostgreSQL: `require` encrypts, `verify-full` also checks the certificate's authority and host, and each
/// refusal says which check failed.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, Comment(rawValue: TestPostgres.unavailable ?? ""))) struct StoreTLSTests {
    @Test func verifyFullConnectsAndEachWrongSettingIsRefusedClearly() throws {
        let cluster = TestCluster()
        let (ca, certificate, key) = try TestCertificates.make("pg", in: cluster.scratch)
        let (otherCA, _, _) = try TestCertificates.make("other", in: cluster.scratch)
        let server = try cluster.start(
            "tls",
            ["PG_SSL_CERT": certificate, "PG_SSL_KEY": key, "PG_LISTEN": "127.0.0.1,127.0.0.2"]
        )
        let base = "postgresql://poi@127.0.0.1:\(server.port)/poi"
        var random = SplitMix64(seed: 40)

        let verified = try PostgresStore(url: base + "?sslmode=verify-full&sslrootcert=\(ca)")
        let encrypted = try verified.main.run { connection in
            try connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: verified.logger).answer().first?.decode(
                Bool.self
            )
        }
        #expect(encrypted == true, "the session is encrypted")
        _ = try verified.commit([.put(.poi(ReplicationTests.poi("tls", &random)))])
        #expect(try verified.record(.poi, id: "tls") != nil)
        // require: encrypted without checking the certificate; verify-ca: the authority only, so another host name is fine.
        #expect(throws: Never.self) { try PostgresStore(url: base + "?sslmode=require").poiCount() }
        #expect(throws: Never.self) {
            try PostgresStore(url: "postgresql://poi@127.0.0.2:\(server.port)/poi?sslmode=verify-ca&sslrootcert=\(ca)").poiCount()
        }

        func refusal(_ url: String) -> String {
            do {
                _ = try PostgresStore(url: url)
                return "accepted"
            } catch {
                return error.description
            }
        }
        let wrongAuthority = refusal(base + "?sslmode=verify-full&sslrootcert=\(otherCA)")
        #expect(wrongAuthority.contains("not signed by a certificate authority in sslrootcert"), "\(wrongAuthority)")
        let wrongHost = refusal("postgresql://poi@127.0.0.2:\(server.port)/poi?sslmode=verify-full&sslrootcert=\(ca)")
        #expect(wrongHost.contains("not issued for the host"), "\(wrongHost)")
        let plain = refusal(base)
        #expect(plain.contains("no encryption") || plain.contains("pg_hba.conf"), "a server that takes only TLS refuses plain text: \(plain)")
    }

    @Test func requireAgainstAServerWithoutTLSIsRefused() throws {
        let cluster = TestCluster()
        let server = try cluster.start("plain")
        do {
            _ = try PostgresStore(url: "postgresql://poi@127.0.0.1:\(server.port)/poi?sslmode=require")
            Issue.record("sslmode=require connected to a server without TLS")
        } catch {
            #expect(error.description.contains("does not offer TLS"), "\(error)")
        }
        #expect(throws: Never.self) { try PostgresStore(url: "postgresql://poi@127.0.0.1:\(server.port)/poi?sslmode=prefer").poiCount() }
    }

}
