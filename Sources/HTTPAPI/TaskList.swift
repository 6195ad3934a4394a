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
