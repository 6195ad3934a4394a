import ArgumentParser
import BundledData
import Catalog
import Datasets
import Foundation
import Gazetteer
import OSM
import PostgresStore
import Records
import SearchEngine
import Startup

/// Change files applied to a SQLite database by the CLI (`poi import x.osc.gz`, `poi replicate`): one importer (the
/// tag mapping and the gazetteer that places POIs in cities, loaded once), a summary line a file, and the address
/// index's snapshot written after the last, so that the next `poi serve` maps it.
///
/// With `shared` (`--store` with `--mirror`), the database is the extract's working copy and each file's POIs and
/// addresses are written to the shared store as well, in the same step (`OSMImporter.apply(…alsoTo:)`); its replicas
/// take them from its change feed.
struct ChangeFiles {
    let importer: OSMImporter
    let store: CatalogStore
    let shared: (any StoreOfRecord)?
    let addressSnapshot: String?
    let snapshot: String?
    private var last: OSMChangeResult?
    /// The records the files changed since the first, and the store's sequence before and after them, to bring the
    /// index snapshot forward at `keepSnapshots` (`SearchEngine.forwardSnapshot`); nil once a file's changes did not follow
    /// the last one's, or past `forwardLimit` records (the next start then builds the index from the store).
    private var forward: (changes: [StoreChange], before: ChangeSequence, after: ChangeSequence)?
    private var forwardBroken = false
    /// The imported addresses: the base index's outline read from its snapshot (`AddressOutline`), and the changes
    /// since as each file leaves them (`SearchEngine.addAddressChanges`, which writes them beside the snapshot for
    /// the next start to lay over it: nothing here serves a query, so no layer is indexed); nil when the snapshot did
    /// not stand at the store's addresses, and `keepSnapshots` builds the index whole.
    private var imported: (base: any AddressBase, changes: AddressChanges)?
    static let forwardLimit = 100_000

    /// - Parameters:
    ///   - sources: where the database's snapshots live (the gazetteer's is mapped, or written once);
    ///   - written: the store's sequence before and after a write of no record just made (the feed's state kept with
    ///     the data, `poi replicate --from`): the index snapshot is brought past it, not left stale by it.
    init(
        store: CatalogStore,
        sources: DataSources,
        shared: (any StoreOfRecord)? = nil,
        after written: (before: ChangeSequence, after: ChangeSequence)? = nil
    ) throws {
        do {
            importer = try OSMImporter.bundled(dataDirectory: DataDirectory.resolve(), gazetteerSnapshot: sources.gazetteerSnapshotPath)
        } catch {
            throw CLIError.failure("\(error)")
        }
        (self.store, self.shared, self.addressSnapshot, self.snapshot) = (store, shared, sources.addressSnapshotPath, sources.snapshotPath)
        imported = addressSnapshot.flatMap { SearchEngine.mappedAddressChanges(store, snapshot: $0) }
        forward = written.map { (changes: [], before: $0.before, after: $0.after) }
    }

    mutating func apply(_ change: OSMChange, name: String, sequence: Int? = nil, timestamp: String? = nil, source: String? = nil) throws {
        let result = try importer.apply(
            change,
            name: name,
            to: store,
            sequence: sequence,
            timestamp: timestamp,
            source: source,
            alsoTo: shared
        )
        let r = result.report
        for problem in r.problems.kept.prefix(20) { FileHandle.standardError.write(Data("\(problem.description)\n".utf8)) }
        print(
            "\(name): \(r.nodes) nodes, \(r.ways) ways, \(r.relations) relations changed, \(r.rebuilt) objects built from them again; "
                + "\(r.poisPut) POIs put, \(r.poisRemoved) removed, \(r.houses) houses (\(r.houseBlocks.encoded) of \(r.houseBlocks.of) house blocks written anew) and \(r.streets) streets made, "
                + "\(r.problems.total) problems, "
                + "in \(String(format: "%.3f", r.seconds)) s; data at \(sequence.map { "sequence \($0), " } ?? "")\(r.timestamp ?? "an unknown time")"
        )
        last = result
        if let current = imported {
            let started = Date()
            let how: String
            if let changes = SearchEngine.addAddressChanges(
                of: result,
                to: current.changes,
                over: current.base,
                snapshot: addressSnapshot,
                limit: Self.layerLimit
            ) {
                imported = (current.base, changes)
                how = "\(changes.objects.count) objects changed since the snapshot, written beside it"
            } else {
                // The layer would pass its limit: the whole index, and its snapshot, are made once after the files
                // (`keepSnapshots`), from every address the store then holds, not inside this file's step; the
                // files until then add nothing here. A stop before it leaves changes of an older generation beside
                // the snapshot, which the next start does not take: it builds the index from the store.
                imported = nil
                how = "past the layer's limit: the whole index is built after the files"
            }
            let seconds = String(format: "%.3f", Date().timeIntervalSince(started))
            print("\(name): addresses laid over the snapshot's in \(seconds) s after the transaction (\(how))")
        }
        if let sequences = result.sequences, !forwardBroken {
            var next = forward ?? (changes: [], before: sequences.before, after: sequences.before)
            if next.after == sequences.before && next.changes.count + result.changes.count <= Self.forwardLimit {
                next.changes += result.changes
                next.after = sequences.after
                forward = next
            } else {
                (forward, forwardBroken) = (nil, true)
            }
        }
    }

    /// Brings the snapshots to the files applied so far: the records committed since the last call kept beside the
    /// index snapshot of a SQLite database (`SearchEngine.forwardSnapshot`), and the address index's snapshot of the
    /// last file written whole when the run did not find one standing at the store's addresses or the changes passed
    /// the layer's limit (the files' changes are otherwise written beside it as they are applied). Called at the end of a run, and by a follower each time
    /// it has applied every file there is, so that a stop while it waits leaves the snapshots current. With
    /// `between` (the follower's call) the whole address index is also built again when the changes have passed
    /// `AddressRebuild.trigger`, so that the build takes the time until the next file, not a file's step at the limit.
    mutating func keepSnapshots(between: Bool = false) {
        // Nothing committed since the last call (a follower that found no new file): nothing to keep.
        if shared == nil, let kept = forward, let snapshot, !forwardBroken, !(kept.changes.isEmpty && kept.before == kept.after) {
            let started = Date()
            do {
                if let how = try SearchEngine.forwardSnapshot(at: snapshot, by: kept.changes, from: kept.before, to: kept.after) {
                    forward = (changes: [], before: kept.after, after: kept.after)
                    snapshotCurrent = true
                    print(
                        "brought the index snapshot \(snapshot) forward by \(kept.changes.count) changed records in \(String(format: "%.2f", Date().timeIntervalSince(started))) s (\(how))"
                    )
                } else {
                    (forward, forwardBroken, snapshotCurrent) = (nil, true, false)
                }
            } catch {
                (forward, forwardBroken, snapshotCurrent) = (nil, true, false)
                FileHandle.standardError.write(Data("poi: note: \(error)\n".utf8))
            }
        }
        guard let last, let addressSnapshot else { return }
        let started = Date()
        let generation: String
        if let current = imported {
            let trigger = Self.rebuildTrigger ?? AddressRebuild.trigger(over: current.base)
            guard between, !current.changes.isEmpty, current.changes.layerSizeBound(over: current.base) > trigger else { return }
            generation = current.changes.generation
        } else {
            generation = last.addressGeneration
        }
        let all: AddressData
        do throws(CatalogError) {
            if imported == nil, let carried = last.addresses { all = carried } else { all = try store.loadAddresses() }
        } catch {
            FileHandle.standardError.write(Data("poi: note: the address snapshot is not written: \(error)\n".utf8))
            return
        }
        let kept = SearchEngine.keepSnapshot(of: AddressIndex(all.asStored), at: addressSnapshot, generation: generation)
        if kept.how != "snapshot written" { FileHandle.standardError.write(Data("poi: note: \(kept.how)\n".utf8)) }
        imported = (kept.index, AddressChanges(baseGeneration: generation))
        print(
            "addresses: the whole index built again \(between ? "between files" : "after the files") in \(String(format: "%.2f", Date().timeIntervalSince(started))) s (\(kept.index.houseCount) houses)"
        )
    }

    /// The layer's size past which a follower builds the whole address index between files, when the environment
    /// sets one (`POI_TEST_ADDRESS_TRIGGER`, for the tests: the bundled extract's changes stay far below the real one).
    static let rebuildTrigger = ProcessInfo.processInfo.environment["POI_TEST_ADDRESS_TRIGGER"].flatMap(Int.init)
    /// The layer's limit past which the whole address index is built after the files, when the environment sets one
    /// (`POI_TEST_ADDRESS_LIMIT`, for the tests, as the trigger above).
    static let layerLimit = ProcessInfo.processInfo.environment["POI_TEST_ADDRESS_LIMIT"].flatMap(Int.init)

    /// Whether the index snapshot stands at the store after the files: brought forward by `keepSnapshots` (false
    /// also when nothing was committed, or the store is shared).
    private(set) var snapshotCurrent = false

    /// `poi import changes.osc.gz`: one file.
    /// - Returns: whether the index snapshot stands at the store after it (`snapshotCurrent`).
    @discardableResult
    static func apply(_ file: String, to store: CatalogStore, sources: DataSources, shared: (any StoreOfRecord)? = nil) throws -> Bool {
        var files = try ChangeFiles(store: store, sources: sources, shared: shared)
        let change: OSMChange
        do { change = try OSMChange.read(file) } catch { throw CLIError.failure(error.description) }
        do { try files.apply(change, name: (file as NSString).lastPathComponent) } catch { throw CLIError.failure("\(error)") }
        files.keepSnapshots()
        // Not freed one by one as the command ends (a twentieth of it on the 5 M-node extract).
        if let base = files.imported?.base { keepUntilExit(base) }
        return files.snapshotCurrent
    }
}

struct ReplicateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replicate",
        abstract: "Keep an OpenStreetMap import current from a replication feed (minutely, hourly or daily change files).",
        discussion: """
            SOURCE is a feed in the standard layout (state.txt, and AAA/BBB/CCC.osc.gz for each sequence) over http(s) or in a \
            directory; without it, the feed the extract names (osmosis_replication_base_url). Each change file is applied in \
            one transaction together with its sequence, so a stopped run resumes where it stopped. A gap in the feed, or a feed \
            behind the data, stops with a message and changes nothing.
            """
    )

    @Argument(help: "The replication feed: a URL or a directory.") var source: String?
    @Option(help: "Database (default var/poi.sqlite).") var db: String?
    @Option(
        help:
            "Also write each file's POIs and addresses to this shared PostgreSQL store (or env POI_STORE), whose replicas take them from its change feed; needs --mirror."
    )
    var store: String?
    @Option(
        help: "With --store: the SQLite database holding the extract's working copy (made by poi import x.osm.pbf --store URL --mirror FILE)."
    )
    var mirror: String?
    @Flag(help: "Apply the next change file only, then exit.") var once = false
    @Flag(help: "Apply every change file up to the feed's latest, then exit.") var catchUp = false
    @Option(help: "Seconds between looks at the feed when following it (1 to 86400).") var interval: Int = 60
    @Option(help: "The sequence the data stands at, when the extract does not say (its first change file is the next).") var from: Int?

    func validate() throws {
        guard !(once && catchUp) else { throw ValidationError("give --once or --catch-up, not both") }
        guard (1...86_400).contains(interval) else { throw ValidationError("--interval must be 1 to 86400 seconds") }
        if let from, from < 0 { throw ValidationError("--from must be a sequence number, 0 or more") }
    }

    func run() throws {
        // Only a store named here: POI_STORE alone does not turn a SQLite database's feed into a shared store's.
        let storeURL = try store.flatMap { try DatabaseOptions.checkedStoreURL(store: $0, db: nil) }
        if storeURL != nil, mirror == nil {
            throw CLIError.usage("--store needs --mirror FILE: the SQLite database the extract's working copy is kept in")
        }
        if mirror != nil, storeURL == nil { throw CLIError.usage("--mirror goes with --store (without a store, --db is the database)") }
        if mirror != nil, db != nil { throw CLIError.usage("give --db or --mirror, not both") }
        let path = mirror ?? db ?? BundledDatabase.defaultPath(dataDirectory: DataDirectory.resolve())
        guard FileManager.default.fileExists(atPath: path) else { throw CLIError.failure("no database at \(path): import an extract first") }
        let store: CatalogStore
        do { store = try CatalogStore(path: path) } catch { throw CLIError.failure(error.description) }
        guard let state = try store.osmMirrorState() else {
            throw CLIError.failure("\(path) holds no OpenStreetMap import to keep current (import the extract's .osm.pbf first)")
        }
        guard let location = source ?? state.source else {
            throw CLIError.usage("name the feed (SOURCE): the data does not say which feed it follows")
        }
        if let stored = state.sequence, let from, from != stored {
            throw CLIError.usage("--from \(from): the data is at sequence \(stored) already")
        }
        guard var current = state.sequence ?? from else {
            throw CLIError.usage("the data's sequence is unknown (the extract does not say): give --from N, the sequence it was cut at")
        }
        var stateWritten: (before: ChangeSequence, after: ChangeSequence)?
        if state.sequence == nil {
            // Kept with the data, so that later runs and `poi serve --replicate` go on from it.
            do {
                let written = try store.updateOSM { mirror in
                    var kept = try mirror.state() ?? OSMMirrorState()
                    kept.sequence = current
                    kept.source = kept.source ?? location
                    try mirror.setState(kept)
                }
                stateWritten = (written.before, written.after)
            } catch {
                throw CLIError.failure("\(error)")
            }
        }
        let replicator = Replicator(source: ReplicationSource(location))
        let shared: (any StoreOfRecord)?
        do { shared = try storeURL.map { try PostgresStore(url: $0) } } catch { throw CLIError.failure("\(error)") }
        // Last, after the snapshot: the files' checkpoints, left to the background, done before the process ends. One
        // that failed loses nothing (the changes are in the log, which the next opener reads), but is said.
        defer {
            if let failure = store.waitForCheckpoints() {
                FileHandle.standardError.write(Data("poi: the write-ahead log was not copied into \(path): \(failure)\n".utf8))
            }
        }
        var files = try ChangeFiles(store: store, sources: DataSources(db: path), shared: shared, after: stateWritten)
        defer { files.keepSnapshots() }
        while true {
            do {
                current = try replicator.catchUp(from: current, limit: once ? 1 : .max) { change, name, feedState in
                    try files.apply(change, name: name, sequence: feedState.sequence, timestamp: feedState.timestamp, source: location)
                }
            } catch {
                throw CLIError.failure("\(error)")
            }
            if once || catchUp { break }
            files.keepSnapshots(between: true)
            Thread.sleep(forTimeInterval: TimeInterval(interval))
        }
        print("data at sequence \(current)")
    }
}
