import Access
import ArgumentParser
import BundledData
import Catalog
import Datasets
import Foundation
import Gazetteer
import HTTPAPI
import HTTPServer
import Logging
import Metrics
import NIOCore
import NIOPosix
import NIOSSL
import Parallelism
import PostgresStore
import Prometheus
import Records
import SearchEngine
import ServiceLifecycle
import SnapshotFile
import Startup

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Serve the v1 HTTP API.")

    @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
    @Option(help: "Port to listen on.") var port: Int = 8080
    @Option(help: "API key for writes (or env POI_API_KEY); required to listen on a non-loopback address.") var apiKey: String?
    @Option(help: "Keys file: API keys (their SHA-256) with scopes, read again on SIGHUP (poi keys new makes entries).") var keysFile: String?
    @Option(
        help: ArgumentHelp(
            "The identity provider's JSON Web Key Set, a FILE or an https:// URL: users' tokens (RS256, ES256, …) signed by its keys may write their own pins.",
            discussion:
                "A URL is fetched at start, again when its Cache-Control max-age runs out, and at once (at most once a minute) for a token with an unknown key id; when the provider is down the last keys stay in force (/health says so). A file is read again on SIGHUP."
        )
    )
    var authJwks: String?
    @Option(help: "PEM certificates to trust for the identity provider's HTTPS beside the system's (a private CA).") var authCaFile: String?
    @Option(help: "File holding a shared secret (32 bytes or more) for users' HS256 tokens.") var authHs256SecretFile: String?
    @Option(
        help:
            "Users' tokens must have this issuer (iss). An https:// issuer without --auth-jwks or --auth-hs256-secret-file finds its keys by OpenID discovery ({issuer}/.well-known/openid-configuration)."
    )
    var authIssuer: String?
    @Option(help: "Users' tokens must have this audience (aud).") var authAudience: String?
    @Option(help: "Seconds of clock skew allowed on a token's exp and nbf.") var authLeeway: Int = 60
    @Option(
        help:
            "Writes a second per user and per client address (keys are not limited); default 10 when credentials are configured, else none; 0 turns it off."
    )
    var writeRate: Double?
    @Option(help: "Writes in a row before --write-rate applies.") var writeBurst: Int = 20
    @Option(
        help:
            "Milliseconds a connection is not read after one of its writes was refused (401, 429) before the router: a flood of refused writes waits in its own sockets instead of taking the readers' time (0: none)."
    )
    var refusedWritePause: Double = 10
    @Option(help: "The most pins one user (token) may have.") var maxPinsPerUser: Int = 100
    @Option(help: "Serve HTTPS with this PEM certificate chain (with --tls-key).") var tlsCert: String?
    @Option(help: "The PEM private key of --tls-cert.") var tlsKey: String?
    @Option(help: "Seconds a request may take to arrive in full, head and body (408 after).") var requestTimeout: Double = 10
    @Option(help: "Seconds an idle keep-alive connection stays open.") var idleTimeout: Double = 60
    @Option(
        help:
            "Write a new index snapshot in the background after this many write transactions (0: only at shutdown), and no sooner after the last than nine times as long as it took."
    )
    var snapshotEvery = 10_000
    @Option(help: "Open connections at most; more are answered 503.") var maxConnections: Int = 4_096
    @Option(help: "Allow browser calls from this origin (CORS), e.g. https://maps.example.org; * for any.") var cors: String?
    @Option(
        help: "Tile server URL template for the map page, e.g. https://tile.openstreetmap.org/{z}/{x}/{y}.png (default: bundled country outlines)."
    )
    var tiles: String?
    @Option(help: "Attribution shown with --tiles, e.g. \"© OpenStreetMap contributors\".") var tilesAttribution: String = ""
    @Option(
        help:
            "Megabytes of vector tiles kept while their layer's data stays the same: a tile asked again is answered without being made again (0: none)."
    )
    var tileCacheMb: Int = 64
    @Option(
        help:
            "This server's name among the replicas of a --store (default: HOSTNAME:PORT); the store keeps its change log until every named replica has applied it."
    )
    var replicaName: String?
    @Flag(
        name: .customLong("fast-lane"),
        inversion: .prefixedNo,
        help: "Answer GET/HEAD of read routes on the event loop, below the router (the same answers; --no-fast-lane sends them through the router)."
    )
    var fastLane = true
    @Option(help: "Event-loop threads that serve connections (default: one per two cores with the fast lane, one per core without).")
    var eventLoops: Int?
    @Flag(help: "Read keyword queries as typed only, not also as pinyin (the pinyin table and readings are not loaded).")
    var noPinyin = false
    @Option(
        help:
            "Write one JSON line per request (time, request id, method, route template, status, bytes, duration, user or key, client) to FILE, appending; - for standard output."
    )
    var accessLog: String?
    @Option(help: "Where POST /v1/backups writes its backups (default: DB.backups beside the database).") var backupDir: String?
    @Option(
        help:
            "Where live areas (fences) and their events are kept (default: DB.fences beside the database; with --store, in the shared store, so that every server knows every fence)."
    ) var fencesFile: String?
    @Option(
        help:
            "Hours fence events are kept for SSE resumes and late webhooks (0: whatever their age); a stream resumed from before the events kept gets a 'gap' event first."
    ) var fenceEventsHours: Double = 168
    @Option(
        help:
            "Megabytes of fence events kept at most (0: whatever their size); the oldest go first. The fences' own file only: in --store's shared fences, events go by age."
    ) var fenceEventsMB: Int = 2048
    @Flag(
        help:
            "Read every page of the mapped snapshots at start and again every 10 s, so that the first queries after an idle spell do not wait for the disk (RSS counts the whole mapping; the kernel may still reclaim under pressure)."
    )
    var preload = false
    @Flag(
        help:
            "Lock the mapped files in memory with mlock — the snapshots (those mapped later too), the program and its libraries: never paged out. Needs ulimit -l above their size or CAP_IPC_LOCK."
    )
    var lockMemory = false
    @Option(
        help:
            "Keep the OpenStreetMap import current from this replication feed (a URL or a directory: state.txt, AAA/BBB/CCC.osc.gz), applying each change file live."
    )
    var replicate: String?
    @Option(help: "Seconds between looks at the --replicate feed (1 to 86400).") var replicateInterval: Double = 60
    @Option(
        help:
            "With --store and --replicate: the SQLite database holding the extract's working copy (made by poi import x.osm.pbf --store URL --mirror FILE); each change file is applied to it and what it makes written to the store, which every server takes from its change feed. One server per store follows the feed."
    )
    var mirror: String?
    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if mirror != nil, replicate == nil { throw ValidationError("--mirror goes with --replicate (the feed applied to it)") }
    }

    /// One event loop per two cores, at least one.
    static func defaultEventLoops(cores: Int) -> Int { max(1, cores / 2) }

    func run() async throws {
        DeferredMetadataLogHandler.bootstrap
        // The pinyin table the text index derives its Han readings from, read while the indexes are opened: read on
        // the first write instead, it held that write (and the reads waiting on the state) for ~0.3 s.
        Thread.detachNewThread { SearchEngine.readBundledPinyin() }
        if let eventLoops {
            guard (1...256).contains(eventLoops) else { throw CLIError.usage("--event-loops must be an integer between 1 and 256") }
            // Read when the singleton group is first used, which is below.
            NIOSingletons.groupLoopCountSuggestion = eventLoops
        } else if fastLane {
            // With the fast lane the loops answer light reads themselves and hand heavy ones to the read workers (one
            // per core): a loop per two cores leaves the other cores to the workers, the kernel's network work and the
            // clients, and a loop that keeps its core is not preempted at every answer (RESULTS.md, issue 17).
            NIOSingletons.groupLoopCountSuggestion = Self.defaultEventLoops(cores: System.coreCount)
        }
        for (name, value) in [("--request-timeout", requestTimeout), ("--idle-timeout", idleTimeout)] where !(value > 0 && value <= 86_400) {
            throw CLIError.usage("\(name) must be a number of seconds greater than 0 and at most 86400")
        }
        guard refusedWritePause >= 0 && refusedWritePause <= 10_000 else {
            throw CLIError.usage("--refused-write-pause must be a number of milliseconds from 0 to 10000")
        }
        guard (0...87_600).contains(fenceEventsHours) else {
            throw CLIError.usage("--fence-events-hours must be a number of hours from 0 to 87600 (0: whatever their age)")
        }
        guard (0...(1 << 30)).contains(fenceEventsMB) else {
            throw CLIError.usage("--fence-events-mb must be a number of megabytes from 0 to 1073741824 (0: whatever their size)")
        }
        let limits = ConnectionLimits(
            requestTimeout: .milliseconds(Int64(requestTimeout * 1_000)),
            idleTimeout: .milliseconds(Int64(idleTimeout * 1_000)),
            maximumConnections: maxConnections,
            refusedWritePause: .microseconds(Int64(refusedWritePause * 1_000))
        )
        var configuration = ServerConfiguration(
            host: host,
            port: port,
            apiKey: apiKey ?? ProcessInfo.processInfo.environment["POI_API_KEY"],
            limits: limits,
            corsOrigin: cors,
            mapPage: MapPageConfiguration(
                tilesURL: tiles,
                tilesAttribution: tilesAttribution,
                outlinesPath: DataDirectory.resolve(database.dataDir) + "/countries.geojson.gz"
            ),
            dataDirectory: DataDirectory.resolve(database.dataDir)
        )
        configuration.fastLane = fastLane
        guard (0...65_536).contains(tileCacheMb) else { throw CLIError.usage("--tile-cache-mb must be a number of megabytes from 0 to 65536") }
        configuration.tileCacheBytes = tileCacheMb << 20
        configuration.backupDirectory = backupDir
        configuration.authenticator = try await makeAuthenticator(legacyKey: configuration.apiKey)
        switch writeRate {
        case nil: configuration.writeLimits = configuration.authenticator.isOpen ? nil : (rate: 10, burst: writeBurst)
        case 0?: configuration.writeLimits = nil
        case let rate?: configuration.writeLimits = (rate: rate, burst: writeBurst)
        }
        configuration.maximumPinsPerUser = maxPinsPerUser
        switch (tlsCert, tlsKey) {
        case (let certificate?, let key?): configuration.tls = ServerConfiguration.TLSFiles(certificateChain: certificate, privateKey: key)
        case (nil, nil): break
        default: throw CLIError.usage("--tls-cert and --tls-key must be given together")
        }
        do { try configuration.validate() } catch { throw CLIError.usage(error.description) }
        let tls: NIOSSLContext?
        do { tls = try configuration.tls?.context() } catch { throw CLIError.usage(error.description) }
        guard snapshotEvery >= 0 else { throw CLIError.usage("--snapshot-every must be 0 or a positive number of write transactions") }
        raiseDescriptorLimit(to: max(maxConnections + 1_024, 65_536))
        // The metrics system first: what starts below (the request log among them) counts into it.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        if let accessLog {
            do { configuration.accessLog = try AccessLog(destination: accessLog) } catch { throw CLIError.usage(error.description) }
        }
        let (engine, gazetteer, report) = try await startupAsync { () async throws(StartupError) in
            try await database.sources.openForServing(snapshotEvery: snapshotEvery)
        }
        keepUntilExit(engine)
        keepUntilExit(gazetteer)
        var logger = Logger(label: "poi")
        logger.logLevel = .info
        logger.info("\(report)")
        // Fences beside a SQLite database; with a shared store, in it, so that every server knows every fence and
        // hands out the same events (unless --fences-file keeps this server's own).
        let fencesPath = fencesFile ?? (database.storeURL == nil ? database.path + ".fences" : nil)
        let fenceRetention = FenceEventRetention(
            seconds: fenceEventsHours == 0 ? nil : fenceEventsHours * 3_600,
            bytes: fenceEventsMB == 0 ? nil : fenceEventsMB << 20
        )
        do {
            if fencesPath == nil, let url = database.storeURL {
                engine.fences = try FenceBook(store: PostgresFenceLog(url: url, retention: fenceRetention.seconds))
            } else {
                engine.fences = try FenceBook(store: FenceStore(path: fencesPath, retention: fenceRetention))
            }
        } catch {
            throw CLIError.failure("fences \(fencesPath ?? database.storeURL.map { _ in "in the shared store" } ?? "in memory"): \(error)")
        }
        engine.fences?.follow()
        engine.loadOSMStatus()
        var follower: OSMFollower?
        if let replicate {
            guard (1...86_400).contains(replicateInterval) else { throw CLIError.usage("--replicate-interval must be 1 to 86400 seconds") }
            guard engine.followsStore == (mirror != nil) else {
                throw CLIError.usage(
                    engine.followsStore
                        ? "--replicate over a shared store needs --mirror FILE, the SQLite database of the extract's working copy"
                        : "--mirror goes with --store (without a store, the database itself keeps the extract's working copy)"
                )
            }
            let workingCopy: CatalogStore?
            do {
                workingCopy = try mirror.map { path in
                    guard FileManager.default.fileExists(atPath: path) else {
                        throw CLIError.failure("--mirror: no database at \(path): import an extract first")
                    }
                    return try CatalogStore(path: path)
                }
            } catch let error as CLIError { throw error } catch { throw CLIError.failure("--mirror: \(error)") }
            let importer: OSMImporter
            do { importer = try OSMImporter.bundled(dataDirectory: DataDirectory.resolve(database.dataDir), gazetteer: gazetteer) } catch {
                throw CLIError.failure("\(error)")
            }
            do {
                follower = try OSMFollower(engine: engine, importer: importer, source: replicate, interval: replicateInterval, mirror: workingCopy) {
                    [logger] line in
                    logger.info("\(line)")
                }
            } catch {
                throw CLIError.failure("--replicate: \(error)")
            }
            follower?.start()
            logger.info(
                "following \(replicate) every \(replicateInterval) s from sequence \((try? workingCopy?.osmMirrorState()?.sequence) ?? engine.osmStatus?.sequence ?? 0)"
            )
        }
        if lockMemory {
            let start = ContinuousClock.now
            do { try ResidentMemory.lockFiles() } catch { throw CLIError.failure(error.description) }
            ResidentMemory.onLockFailure { [logger] error in logger.error("\(error.description); that snapshot is served unlocked") }
            logger.info("mapped files locked (\(ResidentMemory.mappedBytes >> 20) MB of snapshots mapped) in \(ContinuousClock.now - start)")
        }
        if preload { Self.keepWarm(logger: logger) }
        if let status = configuration.authenticator.tokens?.keyStatus {
            if let error = status.lastError {
                logger.error("the identity provider's keys could not be fetched (tokens are refused until they are; retried every minute): \(error)")
            } else {
                logger.info("\(status.keys) signing keys from \(status.source)")
            }
        }
        if engine.followsStore {
            let name = replicaName ?? "\(ProcessInfo.processInfo.hostName):\(port)"
            logger.info("replica \(name) following the store's change feed from change \(engine.storeSequence?.sequence ?? 0)")
            engine.startFollowing(as: name) { [logger] line in logger.info("\(line)") }
        }
        let counts = engine.counts
        let authenticator = configuration.authenticator
        let reloads = Self.reloadOnHangUp { [logger] in
            do {
                try await authenticator.reload()
                logger.info("SIGHUP: reloaded \(authenticator.keys.count) keys\(authenticator.tokens == nil ? "" : " and the token keys")")
            } catch {
                logger.error("SIGHUP: keeping the keys in force: \(error)")
            }
        }
        defer { reloads.cancel() }
        let scheme = tls == nil ? "http" : "https"
        let dataDirectory = configuration.dataDirectory
        let noPinyin = self.noPinyin
        if noPinyin { engine.disablePinyin() }
        // The followers stop right after the HTTP server on SIGTERM/SIGINT (a change file or a catch-up in progress is
        // finished), before the imports drain: see ServerWork.
        let followers: [any Service] = [
            Drain(name: "OpenStreetMap follower", logger: logger) { [follower] in
                follower?.stop()
                return nil
            },
            Drain(name: "store follower", logger: logger) {
                engine.stopFollowing()
                engine.fences?.stopFollowing()
                return nil
            },
        ]
        let app = buildApplication(
            configuration: configuration,
            engine: engine,
            gazetteer: gazetteer,
            metrics: registry,
            logger: logger,
            tls: tls,
            services: followers
        ) { [logger] address in
            // The readiness line: printed once the socket is bound (scripts and tests wait for it).
            logger.info("serving \(counts.pois) POIs and \(counts.pins) pins on \(scheme)://\(address)")
            // The pinyin table and the index's Han terms by reading, on another thread, so that the first keyword
            // query does not wait for them.
            guard !noPinyin else { return }
            Thread.detachNewThread { [logger] in
                let start = ContinuousClock.now
                let rows = engine.preparePinyin(directory: dataDirectory)
                let elapsed = ContinuousClock.now - start
                logger.info("pinyin: the table and \(rows) Han terms by reading (\(rows * 20 / 1_000) kB) ready in \(elapsed)")
            }
        }
        do {
            try await app.runService()
            configuration.accessLog?.close()
            // Graceful shutdown (every service has stopped): the next start reads the indexes instead of building them.
            engine.waitForSnapshot()
            do {
                if try engine.writeSnapshot() { logger.info("wrote the index snapshot for the next start") }
            } catch {
                logger.warning("\(error.description)")
            }
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw CLIError.failure("cannot listen on \(host):\(port): the address is already in use (another server running? choose --port)")
        } catch let error as IOError where error.errnoCode == EADDRNOTAVAIL || error.errnoCode == EACCES {
            throw CLIError.failure("cannot listen on \(host):\(port): \(String(cString: strerror(error.errnoCode)))")
        }
    }

    /// `--preload`: reads the mapped snapshots' pages now, then every 10 s on a thread of its own (a pass over pages
    /// already resident costs milliseconds; RESULTS.md, "Pages that stay warm").
    static func keepWarm(logger: Logger) {
        let start = ContinuousClock.now
        let bytes = ResidentMemory.warmMappings()
        logger.info("preloaded \(bytes >> 20) MB of snapshots in \(ContinuousClock.now - start); kept warm every 10 s")
        let thread = Thread.named("keep-warm") {
            while true {
                Thread.sleep(forTimeInterval: 10)
                ResidentMemory.warmMappings()
            }
        }
        thread.start()
    }

    /// The keys file and the token verifier of the options; a usage error names what is wrong.
    private func makeAuthenticator(legacyKey: String?) async throws -> Authenticator {
        guard (0...3_600).contains(authLeeway) else { throw CLIError.usage("--auth-leeway must be between 0 and 3600 seconds") }
        let byURL = authJwks.map { $0.lowercased().hasPrefix("https://") || $0.lowercased().hasPrefix("http://") } ?? false
        var location: KeyLocation? = byURL ? .jwks(authJwks!) : nil
        if authJwks == nil, authHs256SecretFile == nil, let issuer = authIssuer, issuer.lowercased().hasPrefix("https://") {
            location = .discovery(issuer: issuer)
        }
        let settings = TokenVerifier.Settings(
            jwksFile: byURL ? nil : authJwks,
            jwksLocation: location,
            caFile: authCaFile,
            secretFile: authHs256SecretFile,
            issuer: authIssuer,
            audience: authAudience,
            leeway: authLeeway
        )
        if settings.isEmpty && (authIssuer != nil || authAudience != nil) {
            throw CLIError.usage(
                "--auth-issuer and --auth-audience need --auth-jwks or --auth-hs256-secret-file (or an https:// --auth-issuer, for OpenID discovery)"
            )
        }
        if authCaFile != nil && location == nil { throw CLIError.usage("--auth-ca-file needs --auth-jwks https://… or an https:// --auth-issuer") }
        do {
            let keys = try KeyRing(file: keysFile, legacyKey: legacyKey)
            let tokens = settings.isEmpty ? nil : try await TokenVerifier(settings: settings)
            return Authenticator(keys: keys, tokens: tokens)
        } catch {
            throw CLIError.usage(error.description)
        }
    }

    /// Runs `reload` on every SIGHUP (key rotation without a restart).
    private static func reloadOnHangUp(_ reload: @escaping @Sendable () async -> Void) -> any DispatchSourceSignal {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        source.setEventHandler { Task { await reload() } }
        source.resume()
        return source
    }

    /// Each connection is a descriptor: lift the soft limit towards the hard one so that the connection cap, not
    /// the descriptor limit, is what a flood meets.
    private func raiseDescriptorLimit(to wanted: Int) {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0, limit.rlim_cur < rlim_t(wanted) else { return }
        limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
        _ = setrlimit(RLIMIT_NOFILE_VALUE, &limit)
    }
}

#if canImport(Glibc)
private let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#else
private let RLIMIT_NOFILE_VALUE = RLIMIT_NOFILE
#endif
