import BundledData
import HTTPServer
import Hummingbird
import Synchronization

/// The tasks of one kind of background work (imports, backups), kept in memory by id in the order they came; past
/// `kept`, the oldest is forgotten. Ids are `LETTER_RANDOM_N`: a random part per server, so that an id from before a
/// restart names no new task.
final class TaskList<Task: Sendable>: Sendable {
    let kept: Int
    private let letter: String
    /// This server's random part of the ids.
    let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
    private let counter = Atomic<Int>(0)
    private let tasks = Mutex<(byID: [String: Task], order: [String])>(([:], []))

    init(letter: String, kept: Int) {
        self.letter = letter
        self.kept = kept
    }

    /// A new id, and its number.
    func nextID() -> (id: String, number: Int) {
        let number = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return ("\(letter)_\(random)_\(number)", number)
    }

    func add(_ task: Task, id: String) {
        tasks.withLock { state in
            state.byID[id] = task
            state.order.append(id)
            while state.order.count > kept { state.byID[state.order.removeFirst()] = nil }
        }
    }

    subscript(id: String) -> Task? { tasks.withLock { $0.byID[id] } }

    /// The last `limit` tasks, newest first.
    func recent(_ limit: Int) -> [Task] {
        tasks.withLock { state in state.order.suffix(limit).reversed().compactMap { state.byID[$0] } }
    }

    func update(_ id: String, _ body: (inout Task) -> Void) {
        tasks.withLock { state in
            if var task = state.byID[id] {
                body(&task)
                state.byID[id] = task
            }
        }
    }
}

/// The answers of the task routes (`/v1/tasks`, `/v1/backups`), for any kind of task: its JSON writer given.
enum TaskAnswers {
    /// `{"results":[…]}`, newest first.
    static func list<T>(_ tasks: [T], _ write: (T, inout JSONWriter) -> Void) -> Response {
        var json = JSONWriter()
        json.beginObject()
        json.key("results")
        json.beginArray()
        for task in tasks { write(task, &json) }
        json.endArray()
        json.endObject()
        return JSONResponse.body(json.buffer)
    }

    /// One task, or a 404 that says how long tasks are kept.
    static func one<T>(_ task: T?, id: String, kind: String, kept: Int, _ write: (T, inout JSONWriter) -> Void) throws(Problem) -> Response {
        guard let task else {
            throw Problem(.notFound, "no \(kind) task \(id.prefix(80)) (tasks are kept in memory, the last \(kept), until the server restarts)")
        }
        return JSONResponse.body(json(task, write))
    }

    /// A task's JSON.
    static func json<T>(_ task: T, _ write: (T, inout JSONWriter) -> Void) -> [UInt8] {
        var json = JSONWriter()
        write(task, &json)
        return json.buffer
    }
}

extension JSONWriter {
    /// Fields whose value may be missing (JSON null).
    mutating func optionalFields(_ fields: [(StaticString, String?)]) {
        for (name, value) in fields {
            key(name)
            if let value { string(value) } else { null() }
        }
    }

    /// Counts, each a number or null when unknown yet.
    mutating func counts(_ fields: [(StaticString, Int?)]) {
        for (name, value) in fields {
            key(name)
            if let value { number(value) } else { null() }
        }
    }
}

/// Where an import or a backup task stands.
enum TaskStatus: String, Sendable {
    case queued, running, succeeded, failed
}

/// What every kind of task's JSON has: its id and status first, its error and times last.
protocol TaskRecord {
    var id: String { get }
    var status: TaskStatus { get }
    var error: String? { get }
    var createdAt: String { get }
    var startedAt: String? { get }
    var finishedAt: String? { get }
}

extension TaskAnswers {
    /// A task's JSON object: id and status, the fields of its kind (`fields`), then its error and times.
    static func write<T: TaskRecord>(_ task: T, to json: inout JSONWriter, fields: (inout JSONWriter) -> Void) {
        json.beginObject()
        json.field("id", task.id)
        json.field("status", task.status.rawValue)
        fields(&json)
        json.optionalFields([("error", task.error), ("createdAt", task.createdAt), ("startedAt", task.startedAt), ("finishedAt", task.finishedAt)])
        json.endObject()
    }
}
