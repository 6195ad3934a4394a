import BundledData
import Foundation
import GeoCore

/// Streams records from JSONL, GeoJSON or CSV files into the store.
///
/// Memory stays flat whatever the file size: input is read in 1 MiB chunks and written in batches of
/// `batchSize` rows per transaction. A bad row is reported with file:line and the reason and skipped, every good row
/// kept; with `strict`, the first bad row aborts the whole file and its single transaction rolls back. Re-importing an
/// id updates that record. An id given twice in one import (in one file or across the files of one importer) is one
/// record — the later row wins — counted once and reported.
public final class RecordImporter {
    public struct Options: Sendable {
        public var format: ImportFormat?
        public var crs: CRS = .wgs84
        public var kind: RecordKind = .poi
        public var strict = false
        public var batchSize = 5_000

        public init(format: ImportFormat? = nil, crs: CRS = .wgs84, kind: RecordKind = .poi, strict: Bool = false) {
            self.format = format
            self.crs = crs
            self.kind = kind
            self.strict = strict
        }
    }

    /// Called now and then with (records imported so far, bytes read, total bytes).
    public typealias Progress = (Int, Int, Int) -> Void

    let store: (any StoreOfRecord)?
    let options: Options
    public var progress: Progress?
    /// Where each batch goes. By default straight into the store (`RecordImporter.write`); a running server passes
    /// one that also puts the records into its indexes, under its write lock.
    public var commit: (([ImportedRecord]) throws -> Void)?
    /// Ids met so far in this import, with where: (file, line).
    private var seen: [String: (file: String, line: Int)] = [:]

    public init(store: any StoreOfRecord, options: Options, progress: Progress? = nil) {
        self.store = store
        self.options = options
        self.progress = progress
    }

    /// An importer whose batches go to `commit` only (a running server's engine writes them to its store).
    public init(options: Options, commit: @escaping ([ImportedRecord]) throws -> Void) {
        self.store = nil
        self.options = options
        self.commit = commit
    }

    /// Imports the file at `path`; problems name it `name` (default: the file's name).
    public func importFile(_ path: String, name: String? = nil) throws(ImportError) -> ImportReport {
        let started = Date()
        guard let format = options.format ?? ImportFormat(path: path) else {
            throw .cannotRead("\(path): unknown format (use --format jsonl, geojson or csv)")
        }
        let stream: GzipStream
        do { stream = try GzipStream(path: path) } catch { throw .cannotRead(path) }
        let total = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        let parser = RecordParser(kind: options.kind, crs: options.crs, now: Timestamp.now())
        var report = ImportReport()
        var batch: [RecordParser.Parsed] = []
        var bytesRead = 0
        let name = name ?? (path as NSString).lastPathComponent

        func flush() throws(ImportError) {
            guard !batch.isEmpty else { return }
            let rows = batch
            batch.removeAll(keepingCapacity: true)
            do {
                if let commit { try commit(rows) } else if let store { try RecordImporter.write(rows, to: store) }
            } catch let error as CatalogError {
                throw .storage(error)
            } catch let error as ImportError {
                throw error
            } catch {
                throw .cannotRead("\(error)")
            }
            report.written += rows.count
            progress?(report.written, bytesRead, total)
        }

        func accept(_ fields: [String: Any]?, position: (lon: Double, lat: Double)?, line: Int, failure: String?) throws(ImportError) {
            do {
                if let failure { throw RecordParser.Rejection(reason: failure) }
                let parsed = try parser.parse(fields ?? [:], position: position)
                if let earlier = seen.updateValue((name, line), forKey: parsed.id) {
                    report.duplicates += 1
                    let place = earlier.file == name ? "line \(earlier.line)" : "\(earlier.file):\(earlier.line)"
                    let problem = ImportProblem(
                        file: name,
                        line: line,
                        reason: "duplicate id \"\(parsed.id.prefix(80))\" (also at \(place)); this later row wins"
                    )
                    report.problems.keep(problem)
                }
                batch.append(parsed)
                if !options.strict && batch.count >= options.batchSize { try flush() }
            } catch let rejection as RecordParser.Rejection {
                let problem = ImportProblem(file: name, line: line, reason: rejection.reason)
                if options.strict { throw .rejected(problem) }
                report.skipped += 1
                report.problems.keep(problem)
            } catch let error as ImportError {
                throw error
            } catch {
                throw .cannotRead("\(error)")
            }
        }

        let reader = ChunkReader(stream: stream) { bytesRead = $0 }
        switch format {
        case .jsonl:
            try JSONLinesSource.read(reader) { object, line, failure throws(ImportError) in
                try accept(object, position: nil, line: line, failure: failure)
            }
        case .csv:
            try CSVSource.read(reader) { row, line, failure throws(ImportError) in
                try accept(row, position: nil, line: line, failure: failure)
            }
        case .geojson:
            try GeoJSONSource.read(reader) { properties, position, line, failure throws(ImportError) in
                try accept(properties, position: position, line: line, failure: failure)
            }
        case .osmpbf, .osmchange:
            // Whole extracts and their changes, not rows: POIs, addresses and streets come from `OSMImporter`.
            throw .cannotRead("\(name): OpenStreetMap data is imported with OSMImporter, not row by row")
        }
        if let failure = reader.failure { throw .cannotRead("\(path) (\(failure))") }
        try flush()
        report.imported = report.written - report.duplicates
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// Writes `rows` in one transaction (created or replaced by id).
    public static func write(_ rows: [ImportedRecord], to store: any StoreOfRecord) throws(CatalogError) {
        try store.commit(rows.map { .put($0) })
    }
}
