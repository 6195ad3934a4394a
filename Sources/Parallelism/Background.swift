import Foundation

/// A value made on a thread of its own, waited for where it is first needed.
public final class Background<Value: Sendable>: @unchecked Sendable {
    // `result` is guarded by `condition`.
    private let condition = NSCondition()
    private var result: Result<Value, any Error>?

    public init(_ make: @escaping @Sendable () throws -> Value) {
        let thread = Thread { [self] in
            let made = Result { try make() }
            condition.lock()
            result = made
            condition.broadcast()
            condition.unlock()
        }
        thread.start()
    }

    public func value() throws -> Value {
        condition.lock()
        defer { condition.unlock() }
        while result == nil { condition.wait() }
        return try result!.get()
    }
}
