#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `SpatialIndex` shared by many threads: any number of readers at once, one writer at a time.
///
/// Scheme: a reader-writer lock that prefers writers (so a steady stream of readers cannot starve a pin update).
/// Readers run their whole query under the read lock, in parallel with each other; a writer waits for them,
/// mutates in place and releases, so no reader ever sees a half-updated structure. A reader that keeps a value
/// (for example a copy of the `SpatialIndex`) past its closure holds a copy-on-write snapshot, which stays valid: a later
/// write then copies instead of mutating under it.
public final class SharedSpatialIndex: @unchecked Sendable {
    // SAFETY: @unchecked Sendable because `index` is only read under the read lock and only written under the
    // write lock.
    private var index: SpatialIndex
    private let lock = ReadWriteLock()

    public init(_ index: SpatialIndex = SpatialIndex()) { self.index = index }

    public func read<R>(_ body: (SpatialIndex) throws -> R) rethrows -> R {
        lock.lockRead()
        defer { lock.unlock() }
        return try body(index)
    }

    public func write<R>(_ body: (inout SpatialIndex) throws -> R) rethrows -> R {
        lock.lockWrite()
        defer { lock.unlock() }
        return try body(&index)
    }
}

/// A pthread reader-writer lock that prefers writers.
public final class ReadWriteLock: @unchecked Sendable {
    // SAFETY: the pthread lock lives at a stable heap address for the object's lifetime and is only used
    // through pthread calls, which are thread-safe by design.
    private let rwlock: UnsafeMutablePointer<pthread_rwlock_t>

    public init() {
        rwlock = .allocate(capacity: 1)
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        #if canImport(Glibc)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        #endif
        let status = pthread_rwlock_init(rwlock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
        precondition(status == 0, "pthread_rwlock_init failed: \(status)")
    }

    deinit {
        pthread_rwlock_destroy(rwlock)
        rwlock.deallocate()
    }

    public func lockRead() { pthread_rwlock_rdlock(rwlock) }
    public func lockWrite() { pthread_rwlock_wrlock(rwlock) }
    public func unlock() { pthread_rwlock_unlock(rwlock) }
}
