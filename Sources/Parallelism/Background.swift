import Foundation

/// A value made on a thread of its own, waited for where it is first needed.
public final class Background<Value: Sendable>: @unchecked Sendable {
    // `result` is guarded by `condition`.
    private let condition = NSCondition()
    private var result: Result<Value, any Error>?

    /// - Parameter name: the thread's name, as the kernel shows it (`Thread.named`).
    public init(named name: String = "poi-background", _ make: @escaping @Sendable () throws -> Value) {
        let thread = Thread.named(name) { [self] in
            let made = Result { try make() }
            condition.lock()
            result = made
            condition.broadcast()
            condition.unlock()
        }
        thread.start()
    }

    /// Whether the value is made (or its making failed): `value()` would not wait.
    public var isFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return result != nil
    }

    public func value() throws -> Value {
        condition.lock()
        defer { condition.unlock() }
        while result == nil { condition.wait() }
        return try result!.get()
    }
}
