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
/// - **locking** (`lockFiles`): `mlock` of every file-backed mapping — the snapshots, the program and its libraries,
///   the snapshots mapped later included — so that what a query reads stays in memory, guaranteed. The anonymous
///   heap is not locked: without swap (the usual server) nothing can page it out, and `mlockall` would also fill and
///   pin every thread's whole stack and every malloc arena reserved (measured: ~80 MB more RSS at 1 M POIs). It needs
///   the memlock limit (`ulimit -l`) above the mapped files' size or `CAP_IPC_LOCK`.
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
        live.withLock { regions in
            regions[UInt(bitPattern: region.base)] = region.length
            // Under the lock, so that `lockFiles` and a mapping made meanwhile do not miss each other.
            if locking.load(ordering: .relaxed), mlock(region.base, region.length) != 0 {
                let error = ResidentMemoryError(errno: errno, limit: memlockLimit(), what: "a snapshot mapped later (\(region.length >> 20) MB)")
                lockFailure.withLock { $0?(error) }
            }
        }
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

    public static func lockFiles() throws(ResidentMemoryError) {
        try live.withLock { (regions) throws(ResidentMemoryError) in
            for (start, length, path) in fileMappings() where regions[start] == nil {
                guard let base = UnsafeRawPointer(bitPattern: start), mlock(base, length) == 0 else {
                    throw ResidentMemoryError(errno: errno, limit: memlockLimit(), what: path)
                }
            }
            for (address, length) in regions {
                guard let base = UnsafeRawPointer(bitPattern: address), mlock(base, length) == 0 else {
                    throw ResidentMemoryError(errno: errno, limit: memlockLimit(), what: "a snapshot (\(length >> 20) MB)")
                }
            }
            locking.store(true, ordering: .relaxed)
        }
    }

    /// Whether `lockFiles` ran: snapshots mapped later are locked as they are mapped.
    private static let locking = Atomic<Bool>(false)
    /// Told when a snapshot mapped after `lockFiles` could not be locked (the server logs it; the snapshot is served
    /// all the same, unlocked).
    private static let lockFailure = Mutex<(@Sendable (ResidentMemoryError) -> Void)?>(nil)

    public static func onLockFailure(_ report: @escaping @Sendable (ResidentMemoryError) -> Void) { lockFailure.withLock { $0 = report } }

    /// The process's file-backed mappings now (`/proc/self/maps`): the program, its libraries, mapped files.
    static func fileMappings() -> [(start: UInt, length: Int, path: String)] {
        let descriptor = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.split(separator: "\n").compactMap { line in
            // start-end perms offset dev inode path
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[1].first == "r" else { return nil }
            let path = fields[5].trimmingPrefix(while: { $0 == " " })
            guard path.hasPrefix("/"), !path.hasSuffix("(deleted)") else { return nil }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16), end > start else { return nil }
            return (start, Int(end - start), String(path))
        }
    }

    static func memlockLimit() -> String {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(__RLIMIT_MEMLOCK.rawValue), &limit)
        return limit.rlim_cur == rlim_t.max ? "unlimited" : "\(limit.rlim_cur / 1024) KiB"
    }
}

/// `mlock` refused: why, what, and what to change.
public struct ResidentMemoryError: Error, CustomStringConvertible {
    public let errno: Int32
    public let limit: String
    /// What could not be locked: a file's path, or a snapshot.
    public let what: String

    public var description: String {
        let reason = String(cString: strerror(errno))
        return
            "--lock-memory: mlock of \(what) failed (\(reason)): the memlock limit is \(limit); raise it (ulimit -l unlimited, LimitMEMLOCK=infinity in a systemd unit, --ulimit memlock=-1 for a container) or grant CAP_IPC_LOCK"
    }
}
