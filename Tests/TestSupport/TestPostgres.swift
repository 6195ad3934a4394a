import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL for the tests: the one `scripts/postgres/with-server` started (POI_TEST_POSTGRES, as `make test`
/// does), else one started here with `scripts/postgres/start` and stopped when the tests exit. Every test gets a
/// database of its own. The suites that need it are enabled only where it can be had (`unavailable`): elsewhere they
/// are skipped with the reason, and a server that fails to start fails the test that asked, with its error.
public enum TestPostgres {
    public static let repository = Repository.root.path

    /// Why no PostgreSQL can be had here, or nil.
    public static let unavailable: String? = {
        if let url = ProcessInfo.processInfo.environment["POI_TEST_POSTGRES"], !url.isEmpty { return nil }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let server = versions.contains { FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/initdb") }
        guard server, FileManager.default.isExecutableFile(atPath: "/usr/bin/psql") else {
            return "needs PostgreSQL: POI_TEST_POSTGRES, or its server and psql installed (scripts/setup.sh installs them; make test starts one)"
        }
        return nil
    }()

    /// Whether the PostgreSQL suites run here.
    public static var isAvailable: Bool { unavailable == nil }

    public static let started: Result<String, Failure> = {
        if let url = ProcessInfo.processInfo.environment["POI_TEST_POSTGRES"], !url.isEmpty { return .success(url) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("poi-test-postgres-\(getpid())").path
        do {
            let url = try shell(repository + "/scripts/postgres/start", [directory]).trimmingCharacters(in: .whitespacesAndNewlines)
            startedHere = directory
            atexit {
                if let directory = TestPostgres.startedHere {
                    _ = try? TestPostgres.shell(TestPostgres.repository + "/scripts/postgres/stop", [directory])
                    try? FileManager.default.removeItem(atPath: directory)
                }
            }
            return .success(url)
        } catch let error as Failure {
            return .failure(Failure(description: "scripts/postgres/start failed: \(error.description)"))
        } catch {
            return .failure(Failure(description: "scripts/postgres/start failed: \(error)"))
        }
    }()

    /// The test server's URL (started on first use).
    public static func server() throws -> String { try started.get() }

    public nonisolated(unsafe) static var startedHere: String?

    /// A new, empty database on the test server; answers its URL.
    public static func database(_ name: String = "t") throws -> String {
        let database = "\(name)_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased())"
        let server = try server()
        _ = try shell("/usr/bin/psql", [server, "-v", "ON_ERROR_STOP=1", "-qc", "CREATE DATABASE \(database)"])
        return server.replacingOccurrences(of: #"/[^/]*$"#, with: "/\(database)", options: .regularExpression)
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Runs a program, answers its standard output; throws with its standard error when it fails. (posix_spawn and
    /// waitpid rather than Foundation's Process, whose waitUntilExit can hang when the child leaves a daemon behind,
    /// as `scripts/postgres/start` does.)
    @discardableResult
    public static func shell(_ program: String, _ arguments: [String]) throws -> String {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("poi-shell-\(UUID().uuidString)").path
        defer { for suffix in [".out", ".err"] { try? FileManager.default.removeItem(atPath: base + suffix) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, base + ".out", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, base + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, program, &actions, nil, argv, environ)
        guard spawned == 0 else { throw Failure(description: "cannot run \(program): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let out = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw Failure(description: "\(program) \(arguments.joined(separator: " ")) failed (status \(status)): \(err)")
        }
        return out
    }
}

/// PostgreSQL servers of these tests' own (scripts/postgres/start), for what the shared test server cannot do: be
/// killed, be a standby, serve TLS.
public final class TestCluster: @unchecked Sendable {
    // SAFETY: @unchecked Sendable because `directories` is only appended to by the test that owns the instance.
    public let scratch = ScratchDirectory("poi-pg-cluster")
    private var directories: [String] = []
    public static let script = TestPostgres.repository + "/scripts/postgres/"

    public init() {}

    /// Starts a server in a new directory with `settings` (scripts/postgres/start's PG_* variables); answers its
    /// directory, port and URL.
    public func start(_ name: String, _ settings: [String: String] = [:]) throws -> (directory: String, port: String, url: String) {
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
    public func kill(_ directory: String, port: String) throws {
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
    public func makeSynchronous(primary url: String, standby name: String) throws {
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
    public func promote(_ directory: String) throws {
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
