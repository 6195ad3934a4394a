import Foundation
import Parallelism
import Records
import SnapshotFile

extension SearchEngine {
    /// Writes the current state to the policy's snapshot file (atomically) unless the file already holds it.
    /// Answers whether a file was written. Queries and writes go on meanwhile: the state is copied under the read
    /// lock (arrays are copy-on-write, so the copy is cheap until a write touches them) and written from the copy.
    /// - Throws: when the file cannot be written; nothing is written, without error, for a state whose store
    ///   sequence is unknown (another process wrote to the store behind it).
    /// One writer of the file at a time: a call while a background snapshot is written waits for it (both write the
    /// same temporary file), then writes only if the state moved on.
    @discardableResult
    public func writeSnapshot() throws(SnapshotError) -> Bool {
        guard let policy = snapshotPolicy else { return false }
        snapshotFileWriter.lock()
        defer { snapshotFileWriter.unlock() }
        let copy = read { $0 }
        guard let sequence = copy.sequence, snapshotStatus.withLock({ $0.written }) != sequence else { return false }
        try copy.writeSnapshot(to: policy.path)
        snapshotStatus.withLock { status in
            if status.written.map({ $0.identity != sequence.identity || $0.sequence < sequence.sequence }) ?? true { status.written = sequence }
        }
        adoptSnapshot(at: policy.path, sequence: sequence)
        return true
    }

    /// Once the state is in the file, serves it from there: what writes copied to the heap (after a build from the
    /// store: everything) goes back to being the file's mapped, shared page cache — the deltas are merged into the
    /// snapshot and dropped. Skipped when a write came in meanwhile (the next snapshot will do it) or the file cannot
    /// be read back; the state is then kept as it is.
    func adoptSnapshot(at path: String, sequence: ChangeSequence) {
        guard read({ $0.sequence }) == sequence, var mapped = try? EngineState.readSnapshot(from: path, expecting: sequence) else { return }
        let adopted = write { state -> Bool in
            guard state.sequence == sequence else { return false }
            swap(&state, &mapped)
            return true
        }
        guard adopted else { return }
        mapped = EngineState()  // the heap state, released outside the lock
        ResidentMemory.returnFreedHeap()
    }

    /// Writes a snapshot on a background thread unless one is being written; `done` gets the outcome.
    public func writeSnapshotInBackground(_ done: @escaping @Sendable (Result<Bool, SnapshotError>) -> Void = { _ in }) {
        let started = snapshotStatus.withLock { status -> Bool in
            if status.running { return false }
            status.running = true
            return true
        }
        guard started else { return }
        let thread = Thread.named("poi-snapshot") { [self] in
            // At nice 19: the snapshot takes what the requests leave of the cores, not a share of them (at 1 M POIs
            // under writes, a snapshot written beside them at the normal priority set the writes' p99).
            Self.lowerCallingThreadPriority()
            let clock = ContinuousClock()
            let begun = clock.now
            let result = Result { () throws(SnapshotError) in try writeSnapshot() }
            let ended = clock.now
            let pause = snapshotPolicy?.pause ?? 0
            snapshotStatus.withLock { status in
                status.running = false
                status.notBefore = ended + (ended - begun) * pause
            }
            done(result)
        }
        thread.start()
    }

    /// Gives the calling thread the nice value 19: it then gets about 1.5 % of a core the normal threads want, and
    /// whatever they leave idle. On Linux the nice value is a thread's, and `who` 0 is the calling thread (the kernel
    /// takes `current`). (Called from Swift through Glibc: a C shim that includes `sys/resource.h` under
    /// `_GNU_SOURCE` defines its enums unlike Glibc's module, and a clean build refuses that.)
    public static func lowerCallingThreadPriority() {
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        #endif
    }

    /// After a write: starts a background snapshot once the store has moved `policy.every` transactions past the
    /// last snapshot, and the pause after the last background one is over (`SnapshotPolicy.pause`).
    func snapshotIfDue() {
        guard let policy = snapshotPolicy, policy.every > 0 else { return }
        guard let current = read({ $0.sequence }) else { return }
        let now = ContinuousClock.now
        let due = snapshotStatus.withLock { status in
            guard !status.running, status.notBefore.map({ now >= $0 }) ?? true else { return false }
            guard let written = status.written, written.identity == current.identity else { return true }
            return current.sequence >= written.sequence + UInt64(policy.every)
        }
        if due { writeSnapshotInBackground() }
    }

    /// Waits until no background snapshot is being written (tests, shutdown).
    public func waitForSnapshot() {
        while snapshotStatus.withLock({ $0.running }) { usleep(2_000) }
    }

    /// The store sequence of the state in memory (nil: unknown), for `/health` and tests.
    public var storeSequence: ChangeSequence? { read { $0.sequence } }
}
