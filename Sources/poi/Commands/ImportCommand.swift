import API
import ArgumentParser
import BundledData
import Catalog
import Datasets
import Foundation
import Gazetteer
import GeoCore
import Parallelism
import PostgresStore
import Records
import SnapshotFile
import Startup

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "Import records from JSONL, GeoJSON, CSV or OpenStreetMap (.osm.pbf) files into a database, or apply OpenStreetMap change files (.osc[.gz]).",
        discussion:
            "Bad rows are reported with file:line and skipped; --strict aborts and rolls back instead. Re-importing an id updates it. A change file applies to a SQLite database an .osm.pbf import made, in one transaction (see also poi replicate)."
    )

    @Argument(help: "Files to import.") var files: [String]
    @Option(help: "jsonl, geojson, csv, osmpbf or osmchange (default: from the extension).") var format: String?
    @Option(help: "Coordinate system of the input: wgs84, gcj02, bd09 or EPSG:<code>.") var crs: String = "wgs84"
    @Option(help: "poi or pin.") var kind: String = "poi"
    @Flag(help: "Stop at the first bad row and import nothing from that file.") var strict = false
    @Flag(
        help:
            "OpenStreetMap: do not keep the extract's objects for change files (a faster import; poi replicate and .osc files are then refused)."
    )
    var noUpdates = false
    @Option(help: "Database to import into (created if missing; default var/poi.sqlite).") var db: String?
    @Option(
        help:
            "Import into a PostgreSQL store instead, postgresql://USER[:PASSWORD]@HOST[:PORT][,HOST[:PORT]…]/DATABASE[?target_session_attrs=…&sslmode=…&sslrootcert=FILE&connect_timeout=S] (or env POI_STORE; --db wins over the env). Its replicas apply the records from the change feed."
    )
    var store: String?
    @Option(
        help:
            "With --store: keep the OpenStreetMap extract's working copy in this SQLite database, so that change files (.osc) can be applied; an .osm.pbf is imported into it and its POIs and addresses copied to the store, and a change file is applied to it and what it makes written to the store in the same step."
    )
    var mirror: String?
    @Option(help: "Import into a running server (POST /v1/import) instead of a database; it sees the records at once.") var server: String?
    @Option(help: "API key for --server writes (or env POI_API_KEY).") var apiKey: String?

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name at least one file") }
        if let format, ImportFormat(rawValue: format) == nil { throw ValidationError("--format must be jsonl, geojson, csv, osmpbf or osmchange") }
        guard RecordKind(rawValue: kind) != nil else { throw ValidationError("--kind must be poi or pin") }
    }

    func run() throws {
        let source: CRS
        do { source = try CRS(parsing: crs) } catch { throw CLIError.usage("--crs: \(error.description)") }
        if let server {
            guard db == nil, store == nil else { throw CLIError.usage("give --db, --store or --server, not more than one") }
            return try importThrough(server)
        }
        let storeURL = try DatabaseOptions.checkedStoreURL(store: store, db: db)
        if mirror != nil, storeURL == nil { throw CLIError.usage("--mirror goes with --store (without a store, --db is the database)") }
        // A code PROJ does not know is bad usage, found before any file is read (not an error on every row).
        var probe: [XY] = []
        do { try CoordinateConverter.shared.convert(&probe, from: source, to: .wgs84) } catch { throw CLIError.usage("--crs: \(error.description)") }
        for file in files where !FileManager.default.isReadableFile(atPath: file) {
            throw CLIError.failure("cannot read \(file)")
        }
        let store: any StoreOfRecord
        do {
            if let storeURL {
                store = try PostgresStore(url: storeURL)
            } else {
                store = try CatalogStore(path: db ?? BundledDatabase.defaultPath(dataDirectory: DataDirectory.resolve()))
            }
        } catch { throw CLIError.failure(error.description) }
        let mirrorStore: CatalogStore?
        do { mirrorStore = try mirror.map { try CatalogStore(path: $0) } } catch { throw CLIError.failure("\(error)") }
        let options = RecordImporter.Options(
            format: format.flatMap(ImportFormat.init(rawValue:)),
            crs: source,
            kind: RecordKind(rawValue: kind)!,
            strict: strict
        )
        // One importer for all files, so that an id repeated across files is one record (the later row wins).
        let importer = RecordImporter(store: store, options: options)
        var failed = false
        var done: [String] = []
        // The address index's snapshot of the last OpenStreetMap file, being written.
        var addressSnapshot: PendingAddressSnapshot?
        // Whether every file imported was a change file that brought the index snapshot forward itself.
        var snapshotKept = true
        for (index, file) in files.enumerated() {
            if (options.format ?? ImportFormat(path: file)) == .osmchange {
                guard let catalog = mirrorStore ?? store as? CatalogStore else {
                    throw CLIError.usage(
                        "\(file): change files apply to a SQLite database (--db), or to \(store.location) with the extract's working copy (--mirror FILE)"
                    )
                }
                do {
                    addressSnapshot?.finish()
                    let database = mirror ?? db ?? BundledDatabase.defaultPath(dataDirectory: DataDirectory.resolve())
                    let kept = try ChangeFiles.apply(file, to: catalog, sources: DataSources(db: database), shared: mirrorStore == nil ? nil : store)
                    snapshotKept = snapshotKept && kept
                    done.append(file)
                } catch {
                    FileHandle.standardError.write(Data("poi: \(error)\n".utf8))
                    failed = true
                    break  // a later change file builds on this one
                }
                continue
            }
            if (options.format ?? ImportFormat(path: file)) == .osmpbf {
                do {
                    addressSnapshot?.finish()
                    let database = mirror ?? db ?? BundledDatabase.defaultPath(dataDirectory: DataDirectory.resolve())
                    let sources = DataSources(db: database)
                    let local = storeURL == nil || mirrorStore != nil
                    let imported: Int
                    (imported, addressSnapshot) = try importOSM(
                        file,
                        into: mirrorStore ?? store,
                        addressSnapshot: local ? sources.addressSnapshotPath : nil,
                        gazetteerSnapshot: local ? sources.gazetteerSnapshotPath : nil
                    )
                    if let mirrorStore {
                        let started = Date()
                        let (put, removed) = try OSMImporter.copyOutputs(of: mirrorStore, to: store)
                        print(
                            "\(store.location): \(put) POIs put (\(removed) removed) and the addresses replaced from \(database) in \(String(format: "%.2f", Date().timeIntervalSince(started))) s"
                        )
                    }
                    done.append("\(file) (\(imported))")
                    snapshotKept = false
                } catch {
                    FileHandle.standardError.write(Data("poi: \(error)\n".utf8))
                    failed = true
                    if strict { break }
                }
                continue
            }
            let bar = ProgressBar(label: "importing \((file as NSString).lastPathComponent)")
            importer.progress = { done, read, total in bar.update(done: done, fraction: total > 0 ? Double(read) / Double(total) : 0) }
            do {
                let report = try importer.importFile(file)
                bar.finish()
                for problem in report.problems { FileHandle.standardError.write(Data("\(problem.description)\n".utf8)) }
                let rate = report.seconds > 0 ? Int(Double(report.imported) / report.seconds) : report.imported
                // Test hook for the durability test: die the hard way right after the commits were acknowledged,
                // with the database still open and nothing flushed or closed by us.
                if ProcessInfo.processInfo.environment["POI_TEST_KILL_AFTER_COMMIT"] == "1" { kill(getpid(), SIGKILL) }
                let duplicates = report.duplicates > 0 ? ", \(report.duplicates) duplicate ids (the later row wins)" : ""
                print(
                    "\(file): imported \(report.imported), skipped \(report.skipped)\(duplicates) in \(String(format: "%.2f", report.seconds)) s (\(rate) records/s)"
                )
                done.append("\(file) (\(report.imported))")
                snapshotKept = false
            } catch {
                bar.finish()
                FileHandle.standardError.write(Data("poi: \(error.description)\n".utf8))
                failed = true
                if strict {
                    // Say exactly what is in the database now: earlier files were committed, later ones not read.
                    let rest = files[(index + 1)...]
                    var summary = "poi: strict import stopped at \(file); nothing from it was imported"
                    summary += done.isEmpty ? "; no earlier file was imported" : "; already imported: \(done.joined(separator: ", "))"
                    if !rest.isEmpty { summary += "; not read: \(rest.joined(separator: ", "))" }
                    FileHandle.standardError.write(Data((summary + "\n").utf8))
                    break
                }
            }
        }
        // Leave a current snapshot behind, so that the first `poi serve` after an import maps it instead of building
        // the indexes from the database (PostgreSQL replicas keep their own snapshots).
        if storeURL == nil && !done.isEmpty && ProcessInfo.processInfo.environment["POI_TEST_KILL_AFTER_COMMIT"] == nil {
            let path = db ?? BundledDatabase.defaultPath(dataDirectory: DataDirectory.resolve())
            let started = Date()
            let sources = DataSources(db: path)
            // The address index's snapshot was left by the OpenStreetMap import itself: not opened here. Change files
            // that brought the index snapshot forward (`ChangeFiles.keepSnapshots`) leave nothing to do: opening the
            // engine would only read it again (0.2 s of a 1.5 s file on the 5 M-node extract).
            if !snapshotKept {
                let engine = keepUntilExit(try startup { () throws(StartupError) in try sources.openEngine(snapshot: .now, addresses: false) })
                if case .rebuilt = engine.startup {
                    print("wrote the index snapshot \(path).snapshot in \(String(format: "%.2f", Date().timeIntervalSince(started))) s")
                }
            }
            // The gazetteer's snapshot too, when there is none yet (it is shared by every database: see
            // `Gazetteer.sharedSnapshotPath`), which the first start would otherwise build (1–2 s, several restarts).
            if let gazetteer = sources.gazetteerSnapshotPath, !FileManager.default.fileExists(atPath: gazetteer) {
                _ = try startup { () throws(StartupError) in try sources.loadGazetteer() }
            }
        }
        addressSnapshot?.finish()
        // The log copied into the database file and emptied: the file alone holds the import (copied as a file, it is
        // whole), and the first start has no pages to copy before its first write.
        if !done.isEmpty { for catalog in [store as? CatalogStore, mirrorStore].compactMap({ $0 }) { try? catalog.checkpoint() } }
        // The snapshots were written around the page cache: read in now, in the background, for the first start.
        if storeURL == nil && !done.isEmpty {
            let sources = DataSources(db: db ?? BundledDatabase.defaultPath(dataDirectory: DataDirectory.resolve()))
            ResidentMemory.prefetch([sources.snapshotPath, sources.addressSnapshotPath].compactMap { $0 })
        }
        if failed { throw ExitCode(1) }
    }

    /// The address index of an OpenStreetMap import, built on a second thread while the POIs and addresses are
    /// written and the index snapshot made, then written as its snapshot beside the index snapshot once the store has given the
    /// addresses their generation: the first start maps it.
    struct PendingAddressSnapshot {
        let path: String
        let written: Background<Void>
        let stored: Date

        /// Waits for the snapshot and says where it went, or why it did not (a note: the server would build the
        /// index at its first start instead).
        func finish() {
            do {
                try written.value()
                print("wrote the address index snapshot \(path), \(String(format: "%.2f", Date().timeIntervalSince(stored))) s after storing")
            } catch {
                FileHandle.standardError.write(Data("poi: note: \(error)\n".utf8))
            }
        }
    }

    /// An OpenStreetMap extract: read whole (so that a strict import stops before writing anything), then written in
    /// one transaction. Answers the number of POIs, and the address index's snapshot being written to
    /// `addressSnapshot` (nil: no path, or a store that keeps no addresses).
    private func importOSM(
        _ file: String,
        into store: any StoreOfRecord,
        addressSnapshot: String?,
        gazetteerSnapshot: String?
    ) throws -> (Int, PendingAddressSnapshot?) {
        var importer: OSMImporter
        do {
            // With the database's gazetteer snapshot: written while the extract is read, if it is not there yet, so
            // that the first start after the import maps it instead of building the gazetteer.
            importer = try OSMImporter.bundled(dataDirectory: DataDirectory.resolve(), gazetteerSnapshot: gazetteerSnapshot, strict: strict)
            importer.keepsMirror = !noUpdates
        } catch {
            throw CLIError.failure("\(error)")
        }
        let name = (file as NSString).lastPathComponent
        let bar = ProgressBar(label: "reading \(name)")
        let result: OSMImport
        do {
            result = try importer.read(file) { read, total in bar.update(done: 0, fraction: total > 0 ? Double(read) / Double(total) : 0) }
        } catch {
            bar.finish()
            throw CLIError.failure(error.description)
        }
        bar.finish()
        let writing = Date()
        let report = result.report
        let data = result.addresses
        // The address index is built on a thread of its own once the mirror is written and its node locations and
        // way lists freed, while the POIs and addresses are written.
        var addresses: Background<AddressIndex>?
        let (removed, generation) = try OSMImporter.write(consume result, to: store) {
            if addressSnapshot != nil { addresses = Background { AddressIndex(data.asStored) } }
        }
        let written = Date().timeIntervalSince(writing)
        var pending: PendingAddressSnapshot?
        if let addresses, let addressSnapshot, let generation {
            let write = Background { () throws in try addresses.value().writeSnapshot(to: addressSnapshot, generation: generation) }
            pending = PendingAddressSnapshot(path: addressSnapshot, written: write, stored: Date())
        }
        // A clipped extract has many ways that leave it: the first 20 problems, then how many more.
        for problem in report.problems.kept.prefix(20) { FileHandle.standardError.write(Data("\(problem.description)\n".utf8)) }
        if report.problems.total > 20 {
            FileHandle.standardError.write(Data("\(name): \(report.problems.total - 20) more problems like these\n".utf8))
        }
        if !store.keepsAddresses && report.addresses > 0 {
            FileHandle.standardError.write(
                Data(
                    "poi: \(store.location) keeps no addresses: the \(report.addresses) addresses and \(report.streets) streets were not stored\n"
                        .utf8
                )
            )
        }
        print(
            "\(file): \(report.nodes) nodes, \(report.ways) ways, \(report.relations) relations read; imported \(report.pois) POIs (\(removed) removed), "
                + "\(report.addresses) addresses, \(report.streets) streets, \(report.interpolations) interpolation lines, \(report.areas) water and building areas; "
                + "\(report.problems.total) problems, in \(String(format: "%.2f", report.seconds + written)) s "
                + "(read \(String(format: "%.2f", report.seconds)) s, stored \(String(format: "%.2f", written)) s)"
        )
        return (report.pois, pending)
    }

    /// `--server`: each file is sent whole to POST /v1/import and its task followed to the end, with the same
    /// progress bar, problem lines and summary as a local import.
    private func importThrough(_ server: String) throws {
        for file in files where !FileManager.default.isReadableFile(atPath: file) {
            throw CLIError.failure("cannot read \(file)")
        }
        let key = apiKey ?? ProcessInfo.processInfo.environment["POI_API_KEY"]
        var failed = false
        for file in files {
            guard let fileFormat = format.flatMap(ImportFormat.init(rawValue:)) ?? ImportFormat(path: file) else {
                throw CLIError.usage("\(file): unknown format (use --format jsonl, geojson or csv)")
            }
            let started = Date()
            var request = URLRequest(
                url: try ServerClient.url(
                    server,
                    "/v1/import",
                    [
                        ("format", fileFormat.rawValue), ("kind", kind), ("crs", crs), ("strict", strict ? "true" : nil),
                        ("name", (file as NSString).lastPathComponent),
                    ]
                )
            )
            request.httpMethod = "POST"
            request.timeoutInterval = 3_600
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
            if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
            let bar = ProgressBar(label: "importing \((file as NSString).lastPathComponent) into \(server)")
            let (status, body) = try ServerClient.send(request, uploading: URL(fileURLWithPath: file), server: server)
            guard status == 202, let accepted = try? JSONDecoder().decode(Answers.ImportTask.self, from: Data(body)) else {
                bar.finish()
                let message =
                    "\(file): the server answered \(status): \(ServerClient.detail(body) ?? String(decoding: body.prefix(200), as: UTF8.self))"
                throw (400..<500).contains(status) && status != 413 ? CLIError.usage(message) : CLIError.failure(message)
            }
            // Follow the task until it ends.
            let id = accepted.id
            var task = accepted
            while task.status == "queued" || task.status == "running" {
                Thread.sleep(forTimeInterval: 0.1)
                let (status, body) = try ServerClient.send(URLRequest(url: try ServerClient.url(server, "/v1/tasks/\(id)")), server: server)
                guard status == 200, let followed = try? JSONDecoder().decode(Answers.ImportTask.self, from: Data(body)) else {
                    bar.finish()
                    throw CLIError.failure("\(file): following task \(id): the server answered \(status)")
                }
                task = followed
                let total = task.bytes ?? 0
                bar.update(done: task.imported ?? 0, fraction: total > 0 ? Double(task.bytesRead ?? 0) / Double(total) : 0)
            }
            bar.finish()
            let name = (file as NSString).lastPathComponent
            // A failed task's error names its problem already.
            for problem in task.status == "succeeded" ? task.problems ?? [] : [] {
                FileHandle.standardError.write(Data("\(name):\(problem.line ?? 0): \(problem.reason ?? "")\n".utf8))
            }
            if task.status == "succeeded" {
                let imported = task.imported ?? 0
                let seconds = Date().timeIntervalSince(started)
                let duplicates = (task.duplicates ?? 0) > 0 ? ", \(task.duplicates ?? 0) duplicate ids (the later row wins)" : ""
                print(
                    "\(file): imported \(imported), skipped \(task.skipped ?? 0)\(duplicates) in \(String(format: "%.2f", seconds)) s (\(seconds > 0 ? Int(Double(imported) / seconds) : imported) records/s) into \(server), task \(id)"
                )
            } else {
                FileHandle.standardError.write(Data("poi: \(task.error ?? "\(file): the import failed") (task \(id))\n".utf8))
                failed = true
                if strict { break }
            }
        }
        if failed { throw ExitCode(1) }
    }
}
