#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
