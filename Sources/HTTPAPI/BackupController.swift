import Access
import BundledData
import Catalog
import Foundation
import HTTPServer
import Hummingbird
import Records
import SearchEngine

/// Backups over HTTP: `POST /v1/backups` (the import scope) queues a copy of the embedded store (`Backup.take`,
/// docs/ARCHITECTURE.md, "Operations") into the server's backup directory and answers 202 with its task; one backup
/// runs at a time, on a queue of its own, while the server goes on reading and writing. `GET /v1/backups/{id}` says
/// where it went and what it holds. Tasks are kept in memory (the last 100); the backups are files.
final class BackupTasks: Sendable {
    struct Task: Sendable, TaskRecord {
        let id: String
        var status: TaskStatus = .queued
        let path: String
        var manifest: Backup.Manifest?
        var error: String?
        let createdAt: String
        var startedAt: String?
        var finishedAt: String?
    }

    static let kept = 100
    private let tasks = TaskList<Task>(letter: "b", kept: BackupTasks.kept)
    private let queue = DispatchQueue(label: "poi.backup", qos: .utility)

    subscript(id: String) -> Task? { tasks[id] }

    var recent: [Task] { tasks.recent(Self.kept) }

    private func update(_ id: String, _ body: (inout Task) -> Void) { tasks.update(id, body) }

    /// Returns once no backup runs or waits (a shutdown lets a running `VACUUM INTO` finish: it is one statement).
    func drain() async { await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in queue.async { done.resume() } } }

    /// Queues a backup of `database` into a new directory under `directory`, named by the time and the task.
    func enqueue(database: String, directory: String) -> Task {
        let (id, number) = tasks.nextID()
        let stamp = Timestamp.now().replacingOccurrences(of: ":", with: "").replacingOccurrences(of: "-", with: "").prefix(15)
        let task = Task(id: id, path: "\(directory)/\(stamp)Z-\(tasks.random)-\(number)", createdAt: Timestamp.now())
        tasks.add(task, id: id)
        queue.async { [self] in
            update(id) {
                $0.status = .running
                $0.startedAt = Timestamp.now()
            }
            let result = Result { () throws(Backup.Failure) in try Backup.take(database: database, into: task.path) }
            update(id) {
                switch result {
                case .success(let manifest):
                    $0.status = .succeeded
                    $0.manifest = manifest
                case .failure(let failure):
                    $0.status = .failed
                    $0.error = failure.description
                }
                $0.finishedAt = Timestamp.now()
            }
        }
        return task
    }

    static func json(_ task: Task) -> [UInt8] { TaskAnswers.json(task) { write($0, to: &$1) } }

    static func write(_ task: Task, to json: inout JSONWriter) {
        TaskAnswers.write(task, to: &json) { json in
            json.field("path", task.path)
            json.counts([
                ("pois", task.manifest?.pois), ("pins", task.manifest?.pins), ("sequence", task.manifest.map { Int($0.sequence) }),
                ("bytes", task.manifest?.files.reduce(0) { $0 + $1.bytes }),
            ])
            json.optionalFields([("sha256", task.manifest?.files.first(where: { $0.name == Backup.databaseName })?.sha256)])
        }
    }
}

struct BackupController {
    let engine: SearchEngine
    let write: WriteAccess
    let tasks: BackupTasks
    /// Where backups go; nil: `DB.backups` beside the database.
    let directory: String?

    func register(on routes: RouteRegistrar) {
        routes.write("createBackup") { request, context in
            try WritePolicy.importRecords(try await write.principal(request, context))
            guard let database = engine.databasePath else {
                throw Problem(
                    .conflict,
                    "this server's store is PostgreSQL: back it up with pg_basebackup or pg_dump (replicas reload from it)"
                )
            }
            let task = tasks.enqueue(database: database, directory: directory ?? database + ".backups")
            var response = JSONResponse.body(BackupTasks.json(task), status: .accepted)
            response.headers[.location] = "/v1/backups/\(task.id)"
            return response
        }
        routes.on("listBackups") { request, context -> Response in
            try WritePolicy.importRecords(try await write.principal(request, context))
            return TaskAnswers.list(tasks.recent) { BackupTasks.write($0, to: &$1) }
        }
        routes.on("getBackup") { request, context -> Response in
            try WritePolicy.importRecords(try await write.principal(request, context))
            let id = context.parameters.get("id") ?? ""
            return try TaskAnswers.one(tasks[id], id: id, kind: "backup", kept: BackupTasks.kept) { BackupTasks.write($0, to: &$1) }
        }
    }
}
