import Foundation

/// Work split over the cores: `0..<count` in one contiguous range per worker (`DispatchQueue.concurrentPerform`),
/// each range's values made on its worker and joined in order. The first error thrown (by range) is thrown.
public enum ConcurrentRanges {
    /// Workers for work of this kind: one a core, at most 8.
    public static var workers: Int { max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8)) }

    public static func map<Value: Sendable, Failure: Error>(
        _ count: Int,
        workers: Int = ConcurrentRanges.workers,
        _ body: @Sendable (Range<Int>) throws(Failure) -> [Value]
    ) throws(Failure) -> [Value] {
        let workers = max(1, min(workers, count))
        guard workers > 1 else { return count > 0 ? try body(0..<count) : [] }
        let chunk = (count + workers - 1) / workers
        let slots = Slots<Result<[Value], Failure>>(count: workers)
        defer { slots.deallocate() }
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let start = worker * chunk
            slots.set(worker, Result { () throws(Failure) in try body(start..<min(count, start + chunk)) })
        }
        var joined: [Value] = []
        joined.reserveCapacity(count)
        for worker in 0..<workers { joined += try slots.get(worker).get() }
        return joined
    }

    /// One result slot per worker, in memory of its own.
    private struct Slots<Value>: @unchecked Sendable {
        // SAFETY: each worker writes only its own slot, and slots are read only after concurrentPerform returns.
        private let pointer: UnsafeMutablePointer<Value?>
        private let count: Int

        init(count: Int) {
            self.count = count
            pointer = .allocate(capacity: count)
            pointer.initialize(repeating: nil, count: count)
        }

        func set(_ slot: Int, _ value: Value) { pointer[slot] = value }
        func get(_ slot: Int) -> Value { pointer[slot]! }

        func deallocate() {
            pointer.deinitialize(count: count)
            pointer.deallocate()
        }
    }
}
