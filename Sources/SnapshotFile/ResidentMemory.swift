import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeping the mapped snapshots in memory (`poi serve --preload`, `--lock-memory`; docs/ARCHITECTURE.md,
/// "Operations").
///
/// The snapshots are files mapped read-only: their pages are page cache, which the kernel may reclaim when nobody has
/// touched them lately, and the first queries after an idle spell then read from disk. Two remedies:
///
/// - **warming** (`warmMappings`): every page of every live mapping is read once (after `MADV_WILLNEED`, so the
///   kernel reads ahead) — the page cache is filled and the pages are in this process's page tables. Repeated
///   periodically it keeps them recently used, so reclaim prefers other pages; it cannot forbid reclaim.
/// - **locking** (`lockAll`): `mlockall(MCL_CURRENT | MCL_FUTURE)` — every page of the process, the mappings made
///   later included, stays in memory, guaranteed. It needs the memlock limit (`ulimit -l`) above the process's size
///   or `CAP_IPC_LOCK`.
public enum ResidentMemory {
    private static let live = Mutex<[UInt: Int]>([:])

    /// Gives the heap that was freed back to the system (glibc's `malloc_trim`), so that the resident size is what
    /// is held: after a server's loading (rows and strings read from a store), and after an import lets its node
    /// locations and way lists go.
    public static func returnFreedHeap() {
        #if canImport(Glibc)
        // malloc_trim is glibc's (malloc.h is not in the Glibc module): looked up once by name.
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {  // RTLD_DEFAULT
            // SAFETY: glibc declares `int malloc_trim(size_t pad)`, which is what `Trim` says.
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        }
        #endif
    }

    static func register(_ region: MappedRegion) {
        live.withLock { $0[UInt(bitPattern: region.base)] = region.length }
    }

    static func unregister(_ region: MappedRegion) {
        live.withLock { _ = $0.removeValue(forKey: UInt(bitPattern: region.base)) }
    }

    /// Whether `region` is among the live mappings.
    public static func isRegistered(_ region: MappedRegion) -> Bool { isRegistered(address: UInt(bitPattern: region.base)) }

    /// Whether a live mapping starts at `address`.
    public static func isRegistered(address: UInt) -> Bool { live.withLock { $0[address] != nil } }

    /// The bytes of the snapshots mapped now.
    public static var mappedBytes: Int { live.withLock { $0.values.reduce(0, +) } }

    /// Reads one byte of every page of every live mapping; answers how many bytes were covered.
    @discardableResult
    public static func warmMappings() -> Int {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        return live.withLock { regions in
            var covered = 0
            var sum: UInt8 = 0
            for (address, length) in regions {
                guard let base = UnsafeRawPointer(bitPattern: address) else { continue }
                _ = madvise(UnsafeMutableRawPointer(mutating: base), length, MADV_WILLNEED)
                var offset = 0
                while offset < length {
                    sum &+= base.load(fromByteOffset: offset, as: UInt8.self)
                    offset += page
                }
                covered += length
            }
            // Stored where the compiler cannot prove nobody reads it, so the loads above stay.
            sink.store(Int(sum), ordering: .relaxed)
            return covered
        }
    }

    private static let sink = Atomic<Int>(0)

    /// Locks the process's pages in memory, now and later; the error names the limit that refused it.
    /// Asks the kernel to read the files at `paths` into the page cache, and returns at once (the reads go on after
    /// the process exits). Snapshots are written around the page cache (`SnapshotWriter`): `poi import` calls this on
    /// the ones it wrote, so that the first start after it, which checksums them, does not read them from disk.
    public static func prefetch(_ paths: [String]) {
        for path in paths {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            var status = stat()
            // The kernel reads ahead at most a few megabytes per call: asked piece by piece.
            if fstat(descriptor, &status) == 0 {
                let piece: off_t = 4 << 20
                var offset: off_t = 0
                while offset < status.st_size {
                    _ = posix_fadvise(descriptor, offset, piece, POSIX_FADV_WILLNEED)
                    offset += piece
                }
            }
            close(descriptor)
        }
    }

    public static func lockAll() throws(ResidentMemoryError) {
        guard mlockall(MCL_CURRENT | MCL_FUTURE) == 0 else {
            let code = errno
            var limit = rlimit()
            getrlimit(__rlimit_resource_t(__RLIMIT_MEMLOCK.rawValue), &limit)
            let shown = limit.rlim_cur == rlim_t.max ? "unlimited" : "\(limit.rlim_cur / 1024) KiB"
            throw ResidentMemoryError(errno: code, limit: shown)
        }
    }
}

/// `mlockall` refused: why, and what to change.
public struct ResidentMemoryError: Error, CustomStringConvertible {
    public let errno: Int32
    public let limit: String

    public var description: String {
        let reason = String(cString: strerror(errno))
        return
            "--lock-memory: mlockall failed (\(reason)): the memlock limit is \(limit); raise it (ulimit -l unlimited, LimitMEMLOCK=infinity in a systemd unit, --ulimit memlock=-1 for a container) or grant CAP_IPC_LOCK"
    }
}
