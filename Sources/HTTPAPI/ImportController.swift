import API
import Access
import BundledData
import Datasets
import Foundation
import GeoCore
import HTTPServer
import Hummingbird
import OSM
import Records
import SearchEngine
import Synchronization

/// Live bulk import (Meilisearch-style): `POST /v1/import` takes a JSONL, GeoJSON or CSV body (gzip too), spools it
/// to a temporary file and answers 202 with a task; one import runs at a time, in order, on a thread of its own;
/// `GET /v1/tasks/{id}` reports progress, counts and per-row problems. Each batch is committed to the store and put
/// into the running server's indexes under the engine's write lock, so the records are queryable as the task runs
/// and all of them once it reports `succeeded`. Tasks are kept in memory (the last 1 000); the records are durable.
final class ImportTasks: Sendable {
    struct Task: Sendable, TaskRecord {
        let id: String
        var status: TaskStatus = .queued
        let format: ImportFormat
        let kind: RecordKind
        let crs: String
        let strict: Bool
        let bytes: Int
        var bytesRead = 0
        var imported = 0
        var skipped = 0
        var duplicates = 0
        var problems: [ImportProblem] = []
        var error: String?
        let createdAt: String
        var startedAt: String?
        var finishedAt: String?
    }

    static let kept = 1_000
    /// Rows per transaction: small enough that queries wait little for the index update of one batch.
    static let batchSize = 1_000

    private let tasks = TaskList<Task>(letter: "t", kept: ImportTasks.kept)
    private let queue = DispatchQueue(label: "poi.import", qos: .utility)
    /// Set when the server shuts down (`drain`): the running import stops before its next batch, queued ones do not
    /// start.
    private let stopping = Atomic<Bool>(false)

    /// Stops the imports for a shutdown and returns once none runs: the running one after the batch it is committing
    /// (its task `failed`, saying how many rows are in: import the file again to finish, rows replace by id), queued
    /// ones without starting. - Returns: the tasks stopped.
    func drain() async -> [Task] {
        stopping.store(true, ordering: .sequentiallyConsistent)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in queue.async { done.resume() } }
        return tasks.recent(Self.kept).filter { $0.error?.hasPrefix(Self.interruptedPrefix) == true }
    }

    static let interruptedPrefix = "interrupted: the server shut down"

    /// Throws when the server is shutting down: between two batches of an import.
    private func checkRunning(_ written: Int) throws(ImportError) {
        guard stopping.load(ordering: .sequentiallyConsistent) else { return }
        throw .interrupted(
            written == 0
                ? "\(Self.interruptedPrefix) before the import started: nothing of it was imported"
                : "\(Self.interruptedPrefix) after \(written) rows, in whole batches of \(Self.batchSize); import the file again to finish (rows replace by id)"
        )
    }

    subscript(id: String) -> Task? { tasks[id] }

    var recent: [Task] { tasks.recent(100) }

    private func update(_ id: String, _ body: (inout Task) -> Void) { tasks.update(id, body) }

    /// Queues the import of the spooled file at `path` (deleted afterwards) and returns its task.
    func enqueue(
        path: String,
        name: String,
        bytes: Int,
        options: RecordImporter.Options,
        crsName: String,
        engine: SearchEngine,
        osm: OSMImporter? = nil
    ) -> Task {
        let id = tasks.nextID().id
        let task = Task(
            id: id,
            format: options.format ?? .jsonl,
            kind: options.kind,
            crs: crsName,
            strict: options.strict,
            bytes: bytes,
            createdAt: Timestamp.now()
        )
        tasks.add(task, id: id)
        queue.async { [self] in
            defer { try? FileManager.default.removeItem(atPath: path) }
            update(id) {
                $0.status = .running
                $0.startedAt = Timestamp.now()
            }
            var options = options
            options.batchSize = Self.batchSize
            let result: Result<ImportReport, ImportError>
            if stopping.load(ordering: .sequentiallyConsistent) {
                result = Result { () throws(ImportError) in
                    try checkRunning(0)
                    return ImportReport()
                }
            } else if options.format == .osmchange, let osm {
                result = Result { () throws(ImportError) in
                    guard options.kind == .poi, options.crs == .wgs84 else {
                        throw .cannotRead("\(name): an OpenStreetMap change file is of POIs in WGS-84 (kind poi, crs wgs84)")
                    }
                    return try Self.applyChange(path, name: name, osm, engine)
                }
            } else if options.format == .osmpbf, var osm {
                osm.strict = options.strict
                result = Result { () throws(ImportError) in
                    // An extract holds POIs in WGS-84: another kind or CRS is a mistake, said in the task.
                    guard options.kind == .poi else { throw .cannotRead("\(name): kind must be poi for an OpenStreetMap extract (format osmpbf)") }
                    guard options.crs == .wgs84 else { throw .cannotRead("\(name): crs must be wgs84 for an OpenStreetMap extract (OSM is WGS-84)") }
                    return try Self.importOSM(path, name: name, osm, engine) { [self] read in update(id) { $0.bytesRead = read } }
                }
            } else {
                let written = Atomic<Int>(0)
                let importer = RecordImporter(options: options) { [self] rows in
                    try checkRunning(written.load(ordering: .relaxed))
                    try engine.applyImported(rows)
                    written.add(rows.count, ordering: .relaxed)
                }
                importer.progress = { [self] _, read, _ in update(id) { $0.bytesRead = read } }
                result = Result { () throws(ImportError) in try importer.importFile(path, name: name) }
            }
            // The task is done when its houses are geocoded too: its thread indexes them, once for all its batches.
            engine.settleAddresses()
            let finished = Timestamp.now()
            switch result {
            case .success(let report):
                update(id) {
                    $0.status = .succeeded
                    $0.bytesRead = bytes
                    $0.imported = report.imported
                    $0.skipped = report.skipped
                    $0.duplicates = report.duplicates
                    $0.problems = report.problems
                    $0.finishedAt = finished
                }
            case .failure(let error):
                let message = error.description
                var problems: [ImportProblem] = []
                if case .rejected(let problem) = error { problems = [problem] }
                update(id) {
                    $0.status = .failed
                    $0.error = message
                    $0.problems = problems
                    $0.finishedAt = finished
                }
            }
        }
        return task
    }

    /// An OpenStreetMap change file, applied to the store's import and the engine in one transaction
    /// (`SearchEngine.applyOSMChange`): the task's imported count is the POIs put, skipped the problems.
    static func applyChange(_ path: String, name: String, _ osm: OSMImporter, _ engine: SearchEngine) throws(ImportError) -> ImportReport {
        let change: OSMChange
        do { change = try OSMChange.read(path, name: name) } catch { throw .cannotRead(error.description) }
        let result: OSMChangeResult
        do {
            result = try engine.applyOSMChange { store, addressesMade in
                try osm.apply(change, name: name, to: store, addressesMade: addressesMade)
            }
        } catch {
            throw .cannotRead(error.description)
        }
        return report(written: result.report.poisPut, result.report.problems, result.report.seconds)
    }

    /// The task's report of an OpenStreetMap extract or change file: its POIs written, its problems skipped.
    private static func report(written: Int, _ problems: ImportProblems, _ seconds: Double) -> ImportReport {
        var report = ImportReport()
        report.imported = written
        report.written = written
        report.skipped = problems.total
        report.problems = problems.kept
        report.seconds = seconds
        return report
    }

    /// An OpenStreetMap extract: read whole (a strict import stops before anything is written), then applied to the
    /// engine in one transaction (its POIs, the removal of `osm-` POIs it lacks) and its addresses made current.
    static func importOSM(
        _ path: String,
        name: String,
        _ osm: OSMImporter,
        _ engine: SearchEngine,
        progress: @escaping (Int) -> Void
    ) throws(ImportError) -> ImportReport {
        let result = try osm.read(path, name: name) { read, _ in progress(read) }
        let answer = report(written: result.pois.count, result.report.problems, result.report.seconds)
        // Handed over, not shared: the engine lets go of each part once it is written.
        do { try engine.applyOSMImport(consume result) } catch { throw .cannotRead("\(name): \(error.description)") }
        return answer
    }

    static func json(_ task: Task) -> [UInt8] { TaskAnswers.json(task) { write($0, to: &$1) } }

    static func write(_ task: Task, to json: inout JSONWriter) {
        TaskAnswers.write(task, to: &json) { json in
            json.field("format", task.format.rawValue)
            json.field("kind", task.kind.rawValue)
            json.field("crs", task.crs)
            json.field("strict", task.strict)
            json.counts([
                ("bytes", task.bytes), ("bytesRead", task.bytesRead), ("imported", task.imported), ("skipped", task.skipped),
                ("duplicates", task.duplicates),
            ])
            json.key("problems")
            json.beginArray()
            for problem in task.problems {
                json.beginObject()
                json.field("line", problem.line)
                json.field("reason", problem.reason)
                json.endObject()
            }
            json.endArray()
        }
    }
}

struct ImportController {
    let engine: SearchEngine
    /// Reads OpenStreetMap extracts (nil when the category mapping could not be loaded: such imports are refused).
    let osm: OSMImporter?
    let write: WriteAccess
    let tasks: ImportTasks
    let maximumImportSize: Int

    static let path = "/v1/import"

    func register(on routes: RouteRegistrar) {
        routes.on("importRecords") { request, context in try await start(request, context) }
        // Reading a task's progress is not a write: it is not rate-limited (a client polls while its import runs).
        routes.on("importTasks") { request, _ -> Response in
            try WritePolicy.importRecords(try await write.authenticator.principal(authorization: request.headers[.authorization]))
            return TaskAnswers.list(tasks.recent) { ImportTasks.write($0, to: &$1) }
        }
        routes.on("importTask") { request, context -> Response in
            try WritePolicy.importRecords(try await write.authenticator.principal(authorization: request.headers[.authorization]))
            let id = context.parameters.get("id") ?? ""
            return try TaskAnswers.one(tasks[id], id: id, kind: "import", kept: ImportTasks.kept) { ImportTasks.write($0, to: &$1) }
        }
    }

    /// The format from `format`, else from the Content-Type.
    private func format(_ request: Request, _ parameters: QueryParameters) throws(Problem) -> ImportFormat {
        if let name = parameters.string("format") {
            guard let format = ImportFormat(rawValue: name) else { throw .badRequest("format must be jsonl, geojson, csv, osmpbf or osmchange") }
            return format
        }
        let type =
            (request.headers[.contentType] ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        switch type {
        case "application/x-ndjson", "application/jsonl", "application/jsonlines", "application/x-jsonlines": return .jsonl
        case "application/geo+json": return .geojson
        case "text/csv": return .csv
        case "application/x-protobuf", "application/vnd.openstreetmap.data+pbf": return .osmpbf
        case "application/osmchange+xml": return .osmchange
        default:
            throw .badRequest(
                "format is required (jsonl, geojson, csv, osmpbf or osmchange) unless the Content-Type is application/x-ndjson, application/geo+json, text/csv, application/x-protobuf or application/osmchange+xml"
            )
        }
    }

    /// A CRS name PROJ knows (checked before the body is read, not on every row).
    private static func crs(_ name: String) throws(Problem) -> CRS {
        do throws(GeoError) {
            let crs = try CRS(parsing: name)
            var probe: [XY] = []
            try CoordinateConverter.shared.convert(&probe, from: crs, to: .wgs84)
            return crs
        } catch {
            throw .badRequest("crs: \(error.description)")
        }
    }

    private func start(_ request: Request, _ context: AppRequestContext) async throws -> Response {
        try WritePolicy.importRecords(try await write.principal(request, context))
        let parameters = RequestParameters(request)
        let format = try format(request, parameters)
        let kindName = parameters.string("kind") ?? "poi"
        guard let kind = RecordKind(rawValue: kindName) else { throw Problem.badRequest("kind must be poi or pin") }
        let crsName = parameters.string("crs") ?? "wgs84"
        let crs = try Self.crs(crsName)
        if (format == .osmpbf || format == .osmchange) && osm == nil {
            throw Problem(.serviceUnavailable, "this server cannot read OpenStreetMap extracts: its categories.json did not load")
        }
        // The source's name in problem lines and errors ("places.jsonl:12: …"), default "body".
        let name = parameters.string("name") ?? "body"
        guard (1...200).contains(name.unicodeScalars.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw Problem.badRequest("name must be 1 to 200 characters without control characters")
        }
        let strict: Bool
        switch parameters.string("strict") {
        case nil, "false": strict = false
        case "true": strict = true
        default: throw Problem.badRequest("strict must be true or false")
        }
        // Spool the body to a file: the import reads it in chunks on its own thread, whatever its size.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("poi-import-\(UUID().uuidString)").path
        guard FileManager.default.createFile(atPath: path, contents: nil), let file = FileHandle(forWritingAtPath: path) else {
            throw Problem(
                .init(code: 507, reasonPhrase: "Insufficient Storage"),
                "cannot create a spool file in \(FileManager.default.temporaryDirectory.path)"
            )
        }
        var size = 0
        do {
            defer { try? file.close() }
            for try await chunk in request.body {
                size += chunk.readableBytes
                guard size <= maximumImportSize else {
                    throw Problem(.contentTooLarge, "the import body is larger than \(maximumImportSize / (1 << 20)) MiB")
                }
                try file.write(contentsOf: chunk.readableBytesView)
            }
        } catch {
            try? FileManager.default.removeItem(atPath: path)
            throw error
        }
        guard size > 0 else {
            try? FileManager.default.removeItem(atPath: path)
            throw Problem.badRequest("the body is empty: send the records to import")
        }
        let options = RecordImporter.Options(format: format, crs: crs, kind: kind, strict: strict)
        let task = tasks.enqueue(path: path, name: name, bytes: size, options: options, crsName: crsName, engine: engine, osm: osm)
        var response = JSONResponse.body(ImportTasks.json(task), status: .accepted)
        response.headers[.location] = "/v1/tasks/\(task.id)"
        return response
    }
}
