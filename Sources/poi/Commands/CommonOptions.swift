import API
import ArgumentParser
import BundledData
import Catalog
import Foundation
import GeoCore
import PostgresStore
import SearchEngine

/// Where records and bundled data come from.
struct DatabaseOptions: ParsableArguments {
    @Option(help: "SQLite database (default: var/poi.sqlite, created from the bundled data on first use).")
    var db: String?

    @Option(help: "Directory of the bundled data (default: data/, or POI_DATA_DIR).")
    var dataDir: String?

    @Option(
        help:
            "PostgreSQL store shared by several servers, postgresql://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]…]/DATABASE[?target_session_attrs=…&sslmode=…&sslrootcert=FILE&connect_timeout=S] (or env POI_STORE; --db wins over the env)."
    )
    var store: String?

    @Option(help: "Index snapshot file (default: beside the SQLite database, DB.snapshot; with --store, none unless given).")
    var snapshotFile: String?

    @Flag(help: "Neither read nor write the index snapshot: build the indexes from the records.")
    var noSnapshot = false

    /// The database file: --db, or the default one.
    var path: String { db ?? BundledDatabase.defaultPath(dataDirectory: DataDirectory.resolve(dataDir)) }

    /// The PostgreSQL URL in use: --store, else POI_STORE unless --db is given.
    var storeURL: String? { DatabaseOptions.storeURL(store: store, db: db) }

    /// The PostgreSQL URL a command with these --store and --db options uses (`poi import` has its own options).
    static func storeURL(store: String?, db: String?) -> String? {
        if let store { return store }
        if db != nil { return nil }
        return ProcessInfo.processInfo.environment["POI_STORE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `storeURL`, refusing --db beside --store and a URL that is not a PostgreSQL one (usage errors, exit 2, named
    /// by the option or POI_STORE) before anything is opened.
    static func checkedStoreURL(store: String?, db: String?) throws -> String? {
        if store != nil && db != nil { throw CLIError.usage("give --db or --store, not both") }
        guard let url = storeURL(store: store, db: db) else { return nil }
        if let problem = PostgresStore.problem(with: url) { throw CLIError.usage("\(store != nil ? "--store" : "POI_STORE"): \(problem)") }
        return url
    }

    /// Where the index snapshot lives (nil: none).
    var snapshotPath: String? {
        if noSnapshot { return nil }
        if let snapshotFile { return snapshotFile }
        return storeURL == nil ? path + ".snapshot" : nil
    }

    /// Where the gazetteer's snapshot lives: beside the index snapshot (nil: none).
    var gazetteerSnapshotPath: String? {
        guard let snapshotPath else { return nil }
        return storeURL == nil ? path + ".gazetteer" : snapshotPath + ".gazetteer"
    }

    /// Opens the PostgreSQL store when one is named (--store or POI_STORE).
    func openSharedStore() throws -> PostgresStore? {
        guard let url = try DatabaseOptions.checkedStoreURL(store: store, db: db) else { return nil }
        do { return try PostgresStore(url: url) } catch { throw CLIError.failure(error.description) }
    }

    /// What to do after building the indexes from the records because no usable snapshot was there.
    enum SnapshotAfterRebuild {
        /// Write it before answering (a CLI command: the next one starts from it).
        case now
        /// Write it on a background thread (the server answers meanwhile), then every `every` write transactions.
        case background(every: Int)
    }

    /// Opens the engine over the named database, or the default one (creating it from the bundled data); from the
    /// snapshot beside the database when it matches the database, else from the records (then writes the snapshot).
    func openEngine(snapshot: SnapshotAfterRebuild = .now) throws -> SearchEngine {
        let directory = DataDirectory.resolve(dataDir)
        let path = self.path
        let shared = try openSharedStore()
        if shared != nil {
            // The records are in PostgreSQL (imported with poi import --store).
        } else if let db {
            guard FileManager.default.fileExists(atPath: db) else {
                throw CLIError.failure("database \(db) does not exist (create it with: poi import FILE --db \(db))")
            }
        } else {
            try ensureBundledDatabase(at: path, dataDirectory: directory)
        }
        do {
            let taxonomy = try CategoryTaxonomy.load(directory: directory)
            var policy: SearchEngine.SnapshotPolicy?
            if let snapshotPath {
                if case .background(let every) = snapshot {
                    policy = SearchEngine.SnapshotPolicy(path: snapshotPath, every: every)
                } else {
                    policy = SearchEngine.SnapshotPolicy(path: snapshotPath, every: 0)
                }
            }
            let store: any StoreOfRecord = try shared ?? CatalogStore(path: path)
            let engine = try SearchEngine(store: store, taxonomy: taxonomy, snapshot: policy)
            keepUntilExit(engine)
            if case .rebuilt = engine.startup, policy != nil {
                switch snapshot {
                case .now:
                    do { try engine.writeSnapshot() } catch { FileHandle.standardError.write(Data("poi: note: \(error.description)\n".utf8)) }
                case .background:
                    engine.writeSnapshotInBackground()
                }
            }
            return engine
        } catch let error as SearchError {
            throw CLIError.failure(error.description)
        } catch let error as CatalogError {
            throw CLIError.failure(error.description)
        }
    }
}

/// How query commands print.
struct OutputOptions: ParsableArguments {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, geojson
    }

    @Option(help: "table, json (exactly what the HTTP API answers) or geojson.")
    var format: Format = .table

    @Option(help: "Coordinate system of input and output: wgs84, gcj02 or bd09.")
    var coordsys: String = "wgs84"

    @Option(help: "Ask a running poi server (e.g. http://127.0.0.1:8080) instead of opening the database.")
    var server: String?

    /// The parameters every list operation shares.
    var parameters: QueryItems {
        [("coordsys", coordsys), ("format", format == .geojson ? "geojson" : "json")]
    }

    func coordinateSystem() throws -> CRS.Geographic {
        try validated { () throws(ParameterError) in try RequestParameters(parameters).coordsys() }
    }

    func encoder() throws -> APIEncoder {
        try validated { () throws(ParameterError) in try RequestParameters(parameters).encoder() }
    }
}

/// Parses a command's parameters with the wire layer's rules: a refused one is a usage error naming the option.
func validated<T>(options: [String: String] = [:], _ body: () throws(ParameterError) -> T) throws -> T {
    do throws(ParameterError) {
        return try body()
    } catch {
        throw CLIError.usage(error, options: options)
    }
}

/// Turns engine errors into CLI exit statuses: bad input 2, anything else 1.
func runQuery<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as SearchError {
        if case .invalid = error { throw CLIError.usage(error.description) }
        throw CLIError.failure(error.description)
    }
}

/// Builds the default database from the bundled data when it is missing, with a progress bar; concurrent first
/// starts wait for the one that builds it.
func ensureBundledDatabase(at path: String, dataDirectory: String) throws {
    guard !FileManager.default.fileExists(atPath: path) else { return }
    let bar = ProgressBar(label: "creating \(path) from the bundled data")
    do {
        try BundledDatabase.ensure(at: path, dataDirectory: dataDirectory) { done, total in bar.update(done: done, total: total) }
    } catch {
        throw CLIError.failure("cannot create \(path): \(error)")
    }
    bar.finish()
}

/// A one-line progress bar on standard error, only when it is a terminal.
final class ProgressBar {
    let label: String
    let enabled = isatty(2) == 1
    let started = Date()
    private var lastDraw = Date.distantPast

    init(label: String) { self.label = label }

    func update(done: Int, total: Int) { update(done: done, fraction: total > 0 ? Double(done) / Double(total) : 0) }

    /// `done` records so far, `fraction` of the input read.
    func update(done: Int, fraction: Double) {
        guard enabled, Date().timeIntervalSince(lastDraw) > 0.1 || fraction >= 1 else { return }
        lastDraw = Date()
        let elapsed = max(0.001, Date().timeIntervalSince(started))
        let rate = Int(Double(done) / elapsed)
        let width = 30
        let filled = Int(fraction * Double(width))
        let eta = fraction > 0 ? elapsed / fraction - elapsed : 0
        let line =
            "\r\(label) [\(String(repeating: "#", count: filled))\(String(repeating: ".", count: width - filled))] \(Int(fraction * 100))%  \(done) records  \(rate)/s  ETA \(Int(eta))s"
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish() { if enabled { FileHandle.standardError.write(Data("\n".utf8)) } }
}
