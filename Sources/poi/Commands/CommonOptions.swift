import API
import ArgumentParser
import BundledData
import Foundation
import GeoCore
import PostgresStore
import Records
import SearchEngine
import Startup
import Synchronization

/// Where records and bundled data come from.
struct DatabaseOptions: ParsableArguments {
    @Option(help: "SQLite database (default: var/poi.sqlite, created from the bundled data on first use).") var db: String?
    @Option(help: "Directory of the bundled data (default: data/, or POI_DATA_DIR).") var dataDir: String?
    @Option(
        help:
            "PostgreSQL store shared by several servers, postgresql://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]…]/DATABASE[?target_session_attrs=…&sslmode=…&sslrootcert=FILE&connect_timeout=S] (or env POI_STORE; --db wins over the env)."
    )
    var store: String?

    @Option(help: "Index snapshot file (default: beside the SQLite database, DB.snapshot; with --store, none unless given).")
    var snapshotFile: String?

    @Flag(help: "Neither read nor write the index snapshot: build the indexes from the records.") var noSnapshot = false

    /// The start-up assembly of these options (Sources/Startup), with a progress bar while the default database
    /// is created from the bundled data.
    var sources: DataSources {
        DataSources(db: db, dataDir: dataDir, store: store, snapshotFile: snapshotFile, noSnapshot: noSnapshot).showingProgress()
    }

    var path: String { sources.path }
    var storeURL: String? { sources.storeURL }
    var gazetteerSnapshotPath: String? { sources.gazetteerSnapshotPath }

    /// Refuses --db beside --store and a URL that is not a PostgreSQL one (usage errors, exit 2).
    static func checkedStoreURL(store: String?, db: String?) throws -> String? {
        try startup { () throws(StartupError) in try DataSources.checkedStoreURL(store: store, db: db) }
    }

    /// Opens the engine (see `DataSources.openEngine`).
    func openEngine(snapshot: DataSources.SnapshotAfterRebuild = .now) throws -> SearchEngine {
        keepUntilExit(try startup { () throws(StartupError) in try sources.openEngine(snapshot: snapshot) })
    }
}

extension DataSources {
    /// These sources with a progress bar on standard error (a terminal only) while the default database is created
    /// from the bundled data. The bar is made when creation starts.
    func showingProgress() -> DataSources {
        var sources = self
        let label = "creating \(path) from the bundled data"
        let bar = Mutex<ProgressBar?>(nil)
        sources.progress = { done, total in
            bar.withLock { bar in
                if bar == nil { bar = ProgressBar(label: label) }
                bar!.update(done: done, total: total)
                if done >= total { bar!.finish() }
            }
        }
        return sources
    }
}

extension CLIError {
    /// A start-up step's error: a usage error exits 2, a failure 1.
    init(_ error: StartupError) {
        switch error {
        case .usage(let message): self = .usage(message)
        case .failure(let message): self = .failure(message)
        }
    }
}

/// Runs a start-up step, its error as the CLI's.
func startup<T>(_ body: () throws(StartupError) -> T) throws -> T {
    do throws(StartupError) { return try body() } catch { throw CLIError(error) }
}

/// `startup` for an asynchronous step.
func startupAsync<T>(_ body: () async throws(StartupError) -> T) async throws -> T {
    do throws(StartupError) { return try await body() } catch { throw CLIError(error) }
}

/// How query commands print.
struct OutputOptions: ParsableArguments {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, geojson
    }

    @Option(help: "table, json (exactly what the HTTP API answers) or geojson.") var format: Format = .table
    @Option(help: "Coordinate system of input and output: wgs84, gcj02 or bd09.") var coordsys: String = "wgs84"
    @Option(help: "Ask a running poi server (e.g. http://127.0.0.1:8080) instead of opening the database.") var server: String?

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
