import BundledData
import Catalog
import Datasets
import Foundation
import Gazetteer
import PostgresStore
import Records
import SearchEngine

/// Why a start-up failed: a usage error (a bad option or URL: exit 2 in the CLI) or a failure (a missing database,
/// unreadable data: exit 1).
public enum StartupError: Error, CustomStringConvertible {
    case usage(String)
    case failure(String)

    public var description: String {
        switch self {
        case .usage(let message), .failure(let message): return message
        }
    }
}

/// Where a process's records, indexes and bundled data come from, and how to open them: the one start-up assembly
/// of `poi serve`, the query commands, `poi bench` and the tests.
public struct DataSources: Sendable {
    /// The SQLite database; nil: the default one (created from the bundled data on first use).
    public var db: String?
    /// The bundled data directory; nil: `DataDirectory.resolve()`.
    public var dataDir: String?
    /// The PostgreSQL store of record (a libpq URL); nil: POI_STORE unless `db` is given.
    public var store: String?
    /// The index snapshot; nil: beside the SQLite database (with a store, none).
    public var snapshotFile: String?
    /// Neither read nor write snapshots.
    public var noSnapshot = false
    /// Told the records written and the total while the default database is created from the bundled data.
    public var progress: (@Sendable (_ done: Int, _ total: Int) -> Void)?

    public init(db: String? = nil, dataDir: String? = nil, store: String? = nil, snapshotFile: String? = nil, noSnapshot: Bool = false) {
        self.db = db
        self.dataDir = dataDir
        self.store = store
        self.snapshotFile = snapshotFile
        self.noSnapshot = noSnapshot
    }

    public var dataDirectory: String { DataDirectory.resolve(dataDir) }

    /// The database file: `db`, or the default one.
    public var path: String { db ?? BundledDatabase.defaultPath(dataDirectory: dataDirectory) }

    /// The PostgreSQL URL in use: `store`, else POI_STORE unless `db` is given.
    public var storeURL: String? { Self.storeURL(store: store, db: db) }

    public static func storeURL(store: String?, db: String?) -> String? {
        if let store { return store }
        if db != nil { return nil }
        return ProcessInfo.processInfo.environment["POI_STORE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `storeURL`, refusing `db` beside `store` and a URL that is not a PostgreSQL one, before anything is opened.
    public static func checkedStoreURL(store: String?, db: String?) throws(StartupError) -> String? {
        if store != nil && db != nil { throw .usage("give --db or --store, not both") }
        guard let url = storeURL(store: store, db: db) else { return nil }
        if let problem = PostgresStore.problem(with: url) { throw .usage("\(store != nil ? "--store" : "POI_STORE"): \(problem)") }
        return url
    }

    /// Where the index snapshot lives (nil: none).
    public var snapshotPath: String? {
        if noSnapshot { return nil }
        if let snapshotFile { return snapshotFile }
        return storeURL == nil ? path + ".snapshot" : nil
    }

    /// Where the address index's snapshot lives: beside the index snapshot (nil: none).
    public var addressSnapshotPath: String? { snapshotPath.map { SearchEngine.SnapshotPolicy(path: $0).addressPath } }

    /// Where the gazetteer's snapshot lives (nil: none): the one every database of this user shares
    /// (`Gazetteer.sharedSnapshotPath`: it depends on the data files alone), else beside the index snapshot.
    public var gazetteerSnapshotPath: String? {
        guard let snapshotPath else { return nil }
        if let shared = Gazetteer.sharedSnapshotPath(directory: dataDirectory) { return shared }
        return storeURL == nil ? path + ".gazetteer" : snapshotPath + ".gazetteer"
    }

    /// The PostgreSQL store when one is named.
    public func openSharedStore() throws(StartupError) -> PostgresStore? {
        guard let url = try Self.checkedStoreURL(store: store, db: db) else { return nil }
        do { return try PostgresStore(url: url) } catch { throw .failure(error.description) }
    }

    /// What to do after building the indexes from the records because no usable snapshot was there.
    public enum SnapshotAfterRebuild: Sendable {
        /// Write it before answering (a CLI command: the next one starts from it).
        case now
        /// Write it on a background thread (the server answers meanwhile), then every `every` write transactions.
        case background(every: Int)
    }

    /// Opens the engine over the store: from the snapshot when it matches the records, else from the records (then
    /// writes the snapshot as `snapshot` says). The default database is created from the bundled data if missing.
    /// Without `addresses`, the address index is left empty (an engine opened only to leave its snapshot behind).
    public func openEngine(snapshot: SnapshotAfterRebuild = .now, addresses: Bool = true) throws(StartupError) -> SearchEngine {
        let shared = try openSharedStore()
        if shared == nil {
            if let db {
                guard FileManager.default.fileExists(atPath: db) else {
                    throw .failure("database \(db) does not exist (create it with: poi import FILE --db \(db))")
                }
            } else {
                try ensureBundledDatabase()
            }
        }
        do {
            let taxonomy = try CategoryTaxonomy.load(directory: dataDirectory)
            let policy: SearchEngine.SnapshotPolicy? = snapshotPath.map { path in
                if case .background(let every) = snapshot { return SearchEngine.SnapshotPolicy(path: path, every: every) }
                return SearchEngine.SnapshotPolicy(path: path, every: 0)
            }
            let store: any StoreOfRecord = try shared ?? CatalogStore(path: path)
            let engine = try SearchEngine(store: store, taxonomy: taxonomy, snapshot: policy, addresses: addresses)
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
            throw .failure(error.description)
        } catch let error as CatalogError {
            throw .failure(error.description)
        } catch {
            throw .failure("\(error)")
        }
    }

    /// Creates the default database from the bundled data when it is missing; concurrent first starts wait for the
    /// one that builds it.
    public func ensureBundledDatabase() throws(StartupError) {
        guard !FileManager.default.fileExists(atPath: path) else { return }
        do {
            _ = try BundledDatabase.ensure(at: path, dataDirectory: dataDirectory) { done, total in progress?(done, total) }
        } catch {
            throw .failure("cannot create \(path): \(error)")
        }
    }

    /// Which gazetteer snapshot a process reads, or writes when it has to build the gazetteer.
    public enum GazetteerSnapshot: Sendable {
        /// `gazetteerSnapshotPath`: the one this user's databases share, else one beside the database.
        case ofTheDatabase
        /// Only the one this user's databases share (`Gazetteer.sharedSnapshotPath`); none where it cannot be kept.
        /// For the commands that open no database of their own (`poi geocode`, `poi reverse`): the first builds the
        /// gazetteer and writes it, the next map it.
        case shared
        /// None: built from the data files (what `poi bench geocode` times as the load).
        case noSnapshot
    }

    /// The gazetteer, through the snapshot `snapshot` names; and how it was made.
    public func loadGazetteer(snapshot: GazetteerSnapshot = .ofTheDatabase) throws(StartupError) -> (gazetteer: Gazetteer, source: String) {
        let path: String? =
            switch snapshot {
            case .ofTheDatabase: gazetteerSnapshotPath
            case .shared: Gazetteer.sharedSnapshotPath(directory: dataDirectory)
            case .noSnapshot: nil
            }
        do {
            if let path { return try Gazetteer.load(directory: dataDirectory, snapshot: path) }
            return (try Gazetteer.load(directory: dataDirectory), "built from the data files")
        } catch let error as DataFileError {
            throw .failure("\(error.description) (set --data-dir or POI_DATA_DIR to the bundled data directory)")
        } catch {
            throw .failure("\(error)")
        }
    }

    /// The imported addresses and streets of the SQLite database (created from the bundled data when it is the
    /// default one and missing), through the address index's snapshot as a server reads them, with the houses of
    /// the POIs' own `addr:*` tags laid over them.
    public func loadAddresses() throws(StartupError) -> AddressBook {
        if !FileManager.default.fileExists(atPath: path) {
            guard db == nil else { throw .failure("database \(path) does not exist (create it with: poi import FILE --db \(path))") }
            try ensureBundledDatabase()
        }
        do {
            let store = try CatalogStore(path: path)
            let imported = try SearchEngine.openAddresses(store, snapshot: addressSnapshotPath).layer
            return AddressBook(osm: imported, records: RecordHouses(settled: try store.poiHouses()))
        } catch {
            throw .failure(error.description)
        }
    }

    /// What a server opens: the engine and the gazetteer, loaded at once on two threads (start-up is the longer of
    /// the two), with a line saying how each was made and how long it took.
    public func openForServing(snapshotEvery: Int) async throws(StartupError) -> (engine: SearchEngine, gazetteer: Gazetteer, report: String) {
        let sources = self
        let gazetteerLoad = Task.detached { () throws -> (Gazetteer, String, Duration) in
            let started = ContinuousClock.now
            let (gazetteer, source) = try sources.loadGazetteer()
            return (gazetteer, source, ContinuousClock.now - started)
        }
        let started = ContinuousClock.now
        let engine = try openEngine(snapshot: .background(every: snapshotEvery))
        engine.settleAddresses()  // the POIs' own houses, indexed before the first request
        let engineTime = ContinuousClock.now - started
        let (gazetteer, source, gazetteerTime): (Gazetteer, String, Duration)
        do { (gazetteer, source, gazetteerTime) = try await gazetteerLoad.value } catch let error as StartupError { throw error } catch {
            throw .failure("\(error)")
        }
        func seconds(_ d: Duration) -> String {
            let ms = (Double(d.components.seconds) * 1_000 + Double(d.components.attoseconds) / 1e15).rounded()
            return "\(ms / 1_000) s"
        }
        let report =
            "indexes \(engine.startup), addresses \(engine.addressStartup), in \(seconds(engineTime)); gazetteer \(source) in \(seconds(gazetteerTime)); ready in \(seconds(ContinuousClock.now - started))"
        return (engine, gazetteer, report)
    }
}
