import CChecksum
import CZlib
import Foundation
import Parallelism
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Why a snapshot cannot be used. Every case means "rebuild from the store", never "serve what is there".
public enum SnapshotError: Error, Equatable, CustomStringConvertible {
    case missing(path: String)
    case unreadable(path: String, reason: String)
    case wrongFormat(path: String, reason: String)
    case corrupt(path: String, reason: String)
    case stale(path: String, reason: String)
    case cannotWrite(path: String, reason: String)

    public var description: String {
        switch self {
        case .missing(let path): return "no snapshot at \(path)"
        case .unreadable(let path, let reason): return "cannot read the snapshot \(path): \(reason)"
        case .wrongFormat(let path, let reason): return "the snapshot \(path) is of another format: \(reason)"
        case .corrupt(let path, let reason): return "the snapshot \(path) is damaged: \(reason)"
        case .stale(let path, let reason): return "the snapshot \(path) is out of date: \(reason)"
        case .cannotWrite(let path, let reason): return "cannot write the snapshot \(path): \(reason)"
        }
    }
}

/// The file layout shared by `SnapshotWriter` and `SnapshotReader`.
///
/// A 32-byte header — magic `POISNAP\0`, format version (UInt32), checksum kind (UInt32, `SnapshotChecksum`), payload
/// length (UInt64), checksum of the payload (UInt32), reserved (UInt32) — then the payload: a sequence of values, each 8-byte
/// aligned. Scalars are 8 bytes; an array is its element count (UInt64) then its elements' bytes as they lie in
/// memory, padded to 8; strings are UTF-8 arrays. All integers little-endian (the file is a cache for this machine,
/// rebuilt on any mismatch, not an interchange format).
public enum SnapshotLayout {
    public static let magic: [UInt8] = Array("POISNAP\0".utf8)
    public static let headerSize = 32
    static let alignment = 8

    static func padding(_ length: Int) -> Int { (alignment - length % alignment) % alignment }
}

/// How a snapshot's payload is checksummed: the header's word at offset 12.
///
/// Files are written with CRC-32C where the processor computes it with an instruction (x86-64's SSE 4.2 `crc32`, eight
/// bytes a step): a server reads and checks every snapshot at each start (780 MB at 52 M OSM nodes), and zlib's
/// table-driven CRC-32 was the largest single item of that start's profile. Elsewhere they are written with zlib's
/// CRC-32, which is faster there than CRC-32C bit by bit. Files of earlier builds carry 0 in that word (CRC-32) and are
/// still read; any other value is a format this program does not know (rebuilt).
public enum SnapshotChecksum: UInt32, Sendable {
    case crc32 = 0
    case crc32c = 1

    /// What new files are written with.
    public static let written: SnapshotChecksum = hardware ? .crc32c : .crc32

    /// The checksum continued over `bytes` (0 to start).
    public func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        switch self {
        case .crc32:
            return UInt32(truncatingIfNeeded: crc32_z(uLong(crc), base.assumingMemoryBound(to: UInt8.self), bytes.count))
        case .crc32c:
            return Self.hardware ? poi_crc32c_hardware(crc, base, bytes.count) : poi_crc32c_software(crc, base, bytes.count)
        }
    }

    /// Whether this processor computes CRC-32C with an instruction.
    static let hardware = poi_crc32c_has_hardware() != 0
}

/// Writes a snapshot atomically: into a temporary file beside the target, fsynced, then renamed over the target
/// (and the directory fsynced), so a reader sees the old file or the whole new one — never a half-written one. A
/// process killed mid-write leaves only its temporary file, which the next writer of the same target removes.
///
/// The payload is gathered in page-aligned buffers of `bufferSize` that a thread of the writer's own checksums and
/// hands to the kernel while the next is filled, so that both overlap the values' gathering. Whole buffers are
/// written with `O_DIRECT` where the file system takes it, around the page cache: copying a large snapshot into the
/// page cache was most of writing it (an address index of 2.3 M houses is 263 MB: 0.5 s of one core, most of it the
/// kernel finding fresh pages for the copy), written directly it is about a tenth of that. The tail and the header,
/// not whole pages, go through the page cache.
public final class SnapshotWriter {
    public let path: String
    let temporaryPath: String
    private var descriptor: Int32
    private var buffer: PageBuffer
    private let flusher: Flusher
    private var length = 0
    /// Payload offsets at which each `mark()`ed region starts (tests truncate a file at each of them).
    public private(set) var regions: [Int] = []
    private var committed = false

    public convenience init(path: String, formatVersion: UInt32) throws(SnapshotError) {
        try self.init(path: path, formatVersion: formatVersion, direct: directWrites != 0)
    }

    /// `direct`: whole buffers written around the page cache when the file system allows it (tests compare both).
    init(path: String, formatVersion: UInt32, direct: Bool) throws(SnapshotError) {
        self.path = path
        // The process and a count: two writers of one path (two processes, or two threads of one) never share a file.
        temporaryPath = "\(path).tmp-\(getpid())-\(SnapshotWriter.writers.add(1, ordering: .relaxed).newValue)"
        SnapshotWriter.removeLeftovers(of: path)
        // A file system that refuses O_DIRECT says so at open (EINVAL): the page cache, then.
        var direct = direct
        descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (direct ? directWrites : 0), 0o644)
        if descriptor < 0 && errno == EINVAL && direct {
            direct = false
            descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        }
        guard descriptor >= 0 else { throw .cannotWrite(path: temporaryPath, reason: String(cString: strerror(errno))) }
        self.formatVersion = formatVersion
        flusher = Flusher(descriptor: descriptor, path: temporaryPath, direct: direct)
        buffer = flusher.emptyBuffer()
        // The header is written last, once the payload's length and checksum are known.
        buffer.bytes.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: SnapshotLayout.headerSize)
        buffer.count = SnapshotLayout.headerSize
    }

    /// The first failed write; once set, nothing more is written and every call throws it.
    private var failure: SnapshotError? { flusher.failure }

    private func check() throws(SnapshotError) {
        if let failure { throw failure }
    }

    private let formatVersion: UInt32
    static let bufferSize = 1 << 22

    deinit {
        flusher.finish()
        if !committed {
            close(descriptor)
            unlink(temporaryPath)
        }
    }

    /// Temporary files of writers that died (any process id).
    static func removeLeftovers(of path: String) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let prefix = url.lastPathComponent + ".tmp-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) {
            let pid = Int32(name.dropFirst(prefix.count).prefix { $0 != "-" }) ?? 0
            // A writer still running (another process writing the same snapshot, or another thread of this one) keeps
            // its file.
            if pid > 0 && (pid == getpid() || kill(pid, 0) == 0) { continue }
            unlink(directory + "/" + name)
        }
    }

    /// Writers made by this process, numbering their temporary files.
    static let writers = Atomic<Int>(0)

    /// Notes that a region (a section of the payload) starts here.
    public func mark() { regions.append(length) }

    public func write(_ value: UInt64) throws(SnapshotError) {
        var v = value.littleEndian
        withUnsafeBytes(of: &v) { append($0) }
        try check()
    }

    public func write(_ value: Int) throws(SnapshotError) { try write(UInt64(bitPattern: Int64(value))) }

    public func write(_ value: Double) throws(SnapshotError) { try write(value.bitPattern) }

    /// An array of plain values, as they lie in memory.
    public func write<T: BitwiseCopyable>(_ array: [T]) throws(SnapshotError) {
        try write(array.count)
        array.withUnsafeBytes { raw in
            append(raw)
            pad(raw.count)
        }
        try check()
    }

    /// An array of plain values, as they lie in memory (read back by `read()` or `readFlat()`).
    public func write<T: BitwiseCopyable>(_ array: FlatArray<T>) throws(SnapshotError) {
        try array.withUnsafeBufferPointer { (buffer) throws(SnapshotError) in try write(buffer) }
    }

    /// Arrays of plain values as their lengths and one flat array (read back by `readNested()` or `readNestedFlat()`).
    @inlinable
    public func write<T: BitwiseCopyable>(nested arrays: [FlatArray<T>]) throws(SnapshotError) {
        // Inlined where it is called, so that it is made for the element type there: unspecialized, every array was
        // copied through the type's value witnesses, and a street's houses are 100 000 arrays.
        try writeNested(counts: arrays.map { $0.count }, stride: MemoryLayout<T>.stride) { emit in
            for i in arrays.indices { arrays[i].withUnsafeBytes(emit) }
        }
    }

    /// Arrays of plain values given as their lengths and their values back to back, in the layout of
    /// `write(nested:)` (read back by `readNested()` or `readNestedFlat()`): for many short arrays gathered on the way.
    @inlinable
    public func write<T: BitwiseCopyable>(nestedCounts counts: [Int], values: [T]) throws(SnapshotError) {
        precondition(counts.reduce(0, +) == values.count, "the lengths add up to the values")
        try writeNested(counts: counts, stride: MemoryLayout<T>.stride) { emit in values.withUnsafeBytes(emit) }
    }

    /// Plain values from a buffer, read back as an array.
    public func write<T: BitwiseCopyable>(_ buffer: UnsafeBufferPointer<T>) throws(SnapshotError) {
        try write(buffer.count)
        append(UnsafeRawBufferPointer(buffer))
        pad(buffer.count * MemoryLayout<T>.stride)
        try check()
    }

    public func write(_ string: String) throws(SnapshotError) {
        var copy = string
        let count = copy.utf8.count
        try write(count)
        copy.withUTF8 { bytes in
            append(UnsafeRawBufferPointer(bytes))
            pad(bytes.count)
        }
        try check()
    }

    /// Strings as one UTF-8 blob and their end offsets.
    public func write(_ strings: [String]) throws(SnapshotError) {
        // The ends first, then the bytes straight from each string (not gathered into a blob first), in the layout
        // of two arrays.
        var ends: [UInt64] = []
        ends.reserveCapacity(strings.count)
        var total = 0
        for string in strings {
            total += string.utf8.count
            ends.append(UInt64(total))
        }
        try write(ends)
        try write(total)
        for string in strings {
            var copy = string
            copy.withUTF8 { append(UnsafeRawBufferPointer($0)) }
        }
        pad(total)
        try check()
    }

    /// Arrays of plain values as their lengths and one flat array.
    @inlinable
    public func write<T: BitwiseCopyable>(nested arrays: [[T]]) throws(SnapshotError) {
        // Inlined where it is called, so that it is made for the element type there: unspecialized, every array was
        // copied through the type's value witnesses, and a street's houses are 100 000 arrays.
        try writeNested(counts: arrays.map { $0.count }, stride: MemoryLayout<T>.stride) { emit in
            for i in arrays.indices { arrays[i].withUnsafeBytes(emit) }
        }
    }

    /// The layout of both `write(nested:)`s: the lengths, their sum, then every array's bytes back to back.
    @usableFromInline
    func writeNested(counts: [Int], stride: Int, bytes: ((UnsafeRawBufferPointer) -> Void) -> Void) throws(SnapshotError) {
        try write(counts.map { UInt32($0) })
        let total = counts.reduce(0, +)
        try write(total)
        bytes { append($0) }
        pad(total * stride)
        try check()
    }

    private func pad(_ count: Int) {
        let n = SnapshotLayout.padding(count)
        if n > 0 {
            let zeros: UInt64 = 0
            withUnsafeBytes(of: zeros) { append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
    }

    private func append(_ bytes: UnsafeRawBufferPointer) {
        length += bytes.count
        var rest = bytes
        while !rest.isEmpty {
            let room = SnapshotWriter.bufferSize - buffer.count
            if room == 0 {
                flush()
                continue
            }
            let part = min(room, rest.count)
            (buffer.bytes.baseAddress! + buffer.count).copyMemory(from: rest.baseAddress!, byteCount: part)
            buffer.count += part
            rest = UnsafeRawBufferPointer(rebasing: rest[part...])
        }
    }

    /// Hands the filled buffer to the flusher and takes an empty one.
    private func flush() {
        guard buffer.count > 0 else { return }
        flusher.write(buffer)
        buffer = flusher.emptyBuffer()
    }

    /// Writes the header, makes the file durable and puts it in place of the target.
    public func commit() throws(SnapshotError) {
        flush()
        flusher.finish()
        try check()
        // The header is not a whole page: through the page cache.
        if let failure = flusher.stopDirectWrites() { throw failure }
        var header = SnapshotLayout.magic
        withUnsafeBytes(of: formatVersion.littleEndian) { header.append(contentsOf: $0) }
        withUnsafeBytes(of: SnapshotChecksum.written.rawValue.littleEndian) { header.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt64(length).littleEndian) { header.append(contentsOf: $0) }
        withUnsafeBytes(of: flusher.checksum.littleEndian) { header.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(0)) { header.append(contentsOf: $0) }
        let written = header.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == SnapshotLayout.headerSize else { throw .cannotWrite(path: temporaryPath, reason: String(cString: strerror(errno))) }
        guard fsync(descriptor) == 0 else { throw .cannotWrite(path: temporaryPath, reason: "fsync: \(String(cString: strerror(errno)))") }
        close(descriptor)
        committed = true
        guard rename(temporaryPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw .cannotWrite(path: path, reason: reason)
        }
        // The rename is durable once the directory is.
        let directory = open(URL(fileURLWithPath: path).deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }
}

/// The thread that writes a `SnapshotWriter`'s filled buffers to its file, in order, while the writer fills the next
/// (whole pages with `O_DIRECT` while the descriptor has it): three buffers in all, so that a writer faster than the
/// disk waits instead of growing without bound. Written buffers come back emptied for the writer to fill again (their
/// pages stay mapped: fresh memory, which the kernel must zero and map, cost a large snapshot's write as much as the
/// copy did).
final class Flusher: @unchecked Sendable {
    private let descriptor: Int32
    private let path: String
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queue: [PageBuffer] = []
    private var spare: [PageBuffer] = []
    /// Whether the descriptor still writes around the page cache (only the flusher's thread and `commit` change it).
    private var direct: Bool
    private var writing = false
    private var finished = false
    /// `SnapshotChecksum.written` of the payload written so far (the flusher's thread only, until `finish` returns).
    private var crc: UInt32 = 0
    /// Whether the next buffer is the first, which starts with the header's room (not in the checksum).
    private var first = true
    private var firstFailure: SnapshotError?

    init(descriptor: Int32, path: String, direct: Bool) {
        self.descriptor = descriptor
        self.path = path
        self.direct = direct
        // The thread holds the flusher until `finish` lets it end.
        let thread = Thread.named("snapshot writer") { [self] in run() }
        thread.start()
    }

    /// The first failed write (nil: none so far).
    var failure: SnapshotError? {
        condition.lock()
        defer { condition.unlock() }
        return firstFailure
    }

    /// Queues a filled buffer, waiting while two already wait.
    func write(_ buffer: PageBuffer) {
        condition.lock()
        while queue.count >= Self.buffers - 1 && firstFailure == nil { condition.wait() }
        if firstFailure == nil { queue.append(buffer) }
        condition.signal()
        condition.unlock()
    }

    /// An empty buffer with room for `SnapshotWriter.bufferSize` bytes: a written one, waited for once there are
    /// `buffers` (one being filled, one waiting, one being written).
    func emptyBuffer() -> PageBuffer {
        condition.lock()
        defer { condition.unlock() }
        while spare.isEmpty && made >= Self.buffers && firstFailure == nil { condition.wait() }
        if let buffer = spare.popLast() { return buffer }
        made += 1
        return PageBuffer(capacity: SnapshotWriter.bufferSize)
    }

    static let buffers = 3
    private var made = 0

    /// Waits until every queued buffer is written, then ends the thread.
    func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        while (!queue.isEmpty || writing) && firstFailure == nil { condition.wait() }
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while true {
            while queue.isEmpty && !finished { condition.wait() }
            if queue.isEmpty { break }
            let buffer = queue.removeFirst()
            writing = true
            condition.broadcast()
            condition.unlock()
            // The checksum here, on the flusher's thread, while the writer fills the next buffer.
            let bytes = UnsafeRawBufferPointer(rebasing: buffer.bytes[..<buffer.count])
            crc = SnapshotChecksum.written.update(crc, UnsafeRawBufferPointer(rebasing: bytes[(first ? SnapshotLayout.headerSize : 0)...]))
            first = false
            let failure = writeAll(bytes)
            buffer.count = 0
            condition.lock()
            writing = false
            if let failure, firstFailure == nil {
                firstFailure = failure
                queue.removeAll()
            }
            spare.append(buffer)
            condition.broadcast()
        }
        condition.unlock()
    }

    /// `SnapshotChecksum.written` of the payload, once `finish` has returned.
    var checksum: UInt32 { crc }

    /// Writes the file from now on through the page cache (the tail and the header are not whole pages).
    func stopDirectWrites() -> SnapshotError? {
        guard direct else { return nil }
        direct = false
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags & ~directWrites) == 0 else {
            return .cannotWrite(path: path, reason: "fcntl: \(String(cString: strerror(errno)))")
        }
        return nil
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) -> SnapshotError? {
        var offset = 0
        if direct {
            // Whole pages from a page-aligned buffer to a page-aligned offset: straight to the disk.
            let pages = bytes.count & ~(PageBuffer.alignment - 1)
            while offset < pages {
                let n = Glibc.write(descriptor, bytes.baseAddress! + offset, pages - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    // A file system that took the flag at open but refuses the write: the page cache, then.
                    if errno == EINVAL { break }
                    return .cannotWrite(path: path, reason: String(cString: strerror(errno)))
                }
                offset += n
            }
            if offset < bytes.count, let failure = stopDirectWrites() { return failure }
        }
        while offset < bytes.count {
            let n = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return .cannotWrite(path: path, reason: String(cString: strerror(errno)))
            }
            offset += n
        }
        return nil
    }
}

/// `O_DIRECT`, which Glibc's Swift module leaves out (a GNU extension), by architecture; 0 where it is not known.
#if arch(x86_64) || arch(i386)
let directWrites: Int32 = 0o40000
#elseif arch(arm64) || arch(arm)
let directWrites: Int32 = 0o200000
#else
let directWrites: Int32 = 0
#endif

/// A page-aligned buffer of `SnapshotWriter.bufferSize` bytes that the writer fills and the flusher writes.
final class PageBuffer: @unchecked Sendable {
    static let alignment = 4096
    let bytes: UnsafeMutableRawBufferPointer
    var count = 0

    init(capacity: Int) {
        bytes = .allocate(byteCount: capacity, alignment: Self.alignment)
    }

    deinit { bytes.deallocate() }
}

/// Reads a snapshot: maps the file read-only, checks its header and checksum, then hands out its values in the order
/// they were written. Every read is bounds-checked, so even a file that passes the checksum cannot make a read
/// leave the mapping.
public final class SnapshotReader {
    public let path: String
    private let base: UnsafeRawPointer
    /// The mapping, kept alive by every `FlatArray` read from it after this reader is gone.
    public let region: MappedRegion
    private var offset = SnapshotLayout.headerSize
    private let end: Int

    /// - Parameter verifyingChecksum: false for a reader that takes what it reads as a hint another reader checks
    ///   (`AddressOutline`): the header and every read's bounds are still checked, the payload's checksum is not.
    public init(path: String, formatVersion: UInt32, verifyingChecksum: Bool = true) throws(SnapshotError) {
        self.path = path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { throw .missing(path: path) }
            throw .unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        let size = Int(status.st_size)
        guard size >= SnapshotLayout.headerSize else { throw .corrupt(path: path, reason: "\(size) bytes is shorter than the header") }
        guard let mapping = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), mapping != MAP_FAILED else {
            throw .unreadable(path: path, reason: "mmap: \(String(cString: strerror(errno)))")
        }
        base = UnsafeRawPointer(mapping)
        region = MappedRegion(base: base, length: size)
        let header = UnsafeRawBufferPointer(start: base, count: SnapshotLayout.headerSize)
        guard Array(header[0..<8]) == SnapshotLayout.magic else {
            throw .wrongFormat(path: path, reason: "not a snapshot file (bad magic)")
        }
        let version = UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        guard version == formatVersion else {
            throw .wrongFormat(path: path, reason: "format version \(version), this program reads \(formatVersion)")
        }
        let kind = UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
        guard let checksumKind = SnapshotChecksum(rawValue: kind) else {
            throw .wrongFormat(path: path, reason: "checksum kind \(kind), this program knows 0 (CRC-32) and 1 (CRC-32C)")
        }
        let length = Int(UInt64(littleEndian: header.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
        guard length == size - SnapshotLayout.headerSize else {
            throw .corrupt(path: path, reason: "the header says \(length) payload bytes, the file has \(size - SnapshotLayout.headerSize)")
        }
        let expected = UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 24, as: UInt32.self))
        // The checksum reads the file with pread, not through the mapping: the pages land in the (shared) page cache
        // without being mapped into this process, whose resident set then holds only what queries touch.
        let actual =
            verifyingChecksum
            ? try SnapshotReader.checksum(checksumKind, descriptor: descriptor, from: SnapshotLayout.headerSize, length: length, path: path)
            : expected
        guard actual == expected else {
            throw .corrupt(path: path, reason: "checksum mismatch")
        }
        end = size
    }

    /// The checksum of `length` bytes of the file from `offset`, read in 1 MiB chunks.
    static func checksum(
        _ kind: SnapshotChecksum,
        descriptor: Int32,
        from offset: Int,
        length: Int,
        path: String
    ) throws(SnapshotError) -> UInt32 {
        _ = posix_fadvise(descriptor, off_t(offset), off_t(length), POSIX_FADV_SEQUENTIAL)
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var crc: UInt32 = 0
        var position = 0
        while position < length {
            let n = pread(descriptor, buffer.baseAddress, min(chunk, length - position), off_t(offset + position))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw .unreadable(path: path, reason: n < 0 ? String(cString: strerror(errno)) : "the file shrank while being read") }
            crc = kind.update(crc, UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            position += n
        }
        return crc
    }

    /// Drops the mapping's pages from this process's page tables once loading is done. Values copied out at load
    /// (strings, dictionaries) and pages touched only to validate no longer count in the resident set; they stay in
    /// the page cache, and what `FlatArray`s serve from the mapping faults back in as queries read it.
    public func releaseResidentPages() {
        _ = madvise(UnsafeMutableRawPointer(mutating: base), region.length, MADV_DONTNEED)
    }

    /// Whether every value has been read.
    public var isAtEnd: Bool { offset == end }

    private func take(_ count: Int, what: StaticString) throws(SnapshotError) -> UnsafeRawPointer {
        guard count >= 0, count <= end - offset else {
            throw .corrupt(path: path, reason: "\(what) of \(count) bytes runs past the end at offset \(offset)")
        }
        let start = base + offset
        offset += count + SnapshotLayout.padding(count)
        if offset > end { offset = end }
        return start
    }

    public func readUInt64() throws(SnapshotError) -> UInt64 {
        UInt64(littleEndian: try take(8, what: "an integer").loadUnaligned(as: UInt64.self))
    }

    public func readInt() throws(SnapshotError) -> Int { Int(Int64(bitPattern: try readUInt64())) }

    public func readDouble() throws(SnapshotError) -> Double { Double(bitPattern: try readUInt64()) }

    private func readCount(of stride: Int) throws(SnapshotError) -> Int {
        let count = try readInt()
        guard count >= 0, count <= (end - offset) / max(stride, 1) else {
            throw .corrupt(path: path, reason: "an array of \(count) elements does not fit in the file at offset \(offset)")
        }
        return count
    }

    public func read<T: BitwiseCopyable>(_ type: [T].Type = [T].self) throws(SnapshotError) -> [T] {
        let count = try readCount(of: MemoryLayout<T>.stride)
        let source = try take(count * MemoryLayout<T>.stride, what: "an array")
        return SnapshotReader.copy(source, count: count)
    }

    static func copy<T: BitwiseCopyable>(_ source: UnsafeRawPointer, count: Int) -> [T] {
        [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            if count > 0 { UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: source, byteCount: count * MemoryLayout<T>.stride) }
            initialized = count
        }
    }

    /// An array served in place from the mapping (see `FlatArray`), not copied.
    public func readFlat<T: BitwiseCopyable>(_ type: FlatArray<T>.Type = FlatArray<T>.self) throws(SnapshotError) -> FlatArray<T> {
        let count = try readCount(of: MemoryLayout<T>.stride)
        let source = try take(count * MemoryLayout<T>.stride, what: "an array")
        guard MemoryLayout<T>.alignment <= SnapshotLayout.alignment else { return FlatArray(SnapshotReader.copy(source, count: count)) }
        return FlatArray(mapped: source, count: count, region: region)
    }

    /// Nested arrays served in place from the mapping, each a slice of one flat run.
    @_specialize(exported:true,where T == Int32)
    public func readNestedFlat<T: BitwiseCopyable>(_ type: T.Type = T.self) throws(SnapshotError) -> [FlatArray<T>] {
        let counts: [UInt32] = try read()
        let total = try readCount(of: MemoryLayout<T>.stride)
        guard counts.reduce(into: 0, { $0 += Int($1) }) == total else { throw .corrupt(path: path, reason: "nested array lengths do not add up") }
        let stride = MemoryLayout<T>.stride
        let flat = try take(total * stride, what: "nested arrays")
        guard MemoryLayout<T>.alignment <= SnapshotLayout.alignment else {
            var position = 0
            return counts.map { count in
                defer { position += Int(count) }
                return FlatArray(SnapshotReader.copy(flat + position * stride, count: Int(count)))
            }
        }
        var arrays: [FlatArray<T>] = []
        arrays.reserveCapacity(counts.count)
        var position = 0
        for count in counts {
            arrays.append(FlatArray(mapped: flat + position * stride, count: Int(count), region: region))
            position += Int(count)
        }
        return arrays
    }

    public func readString() throws(SnapshotError) -> String {
        let count = try readCount(of: 1)
        let source = try take(count, what: "a string")
        return String(decoding: UnsafeRawBufferPointer(start: source, count: count), as: UTF8.self)
    }

    public func readStrings() throws(SnapshotError) -> [String] {
        let ends: [UInt64] = try read()
        let count = try readCount(of: 1)
        let blob = try take(count, what: "strings")
        var strings: [String] = []
        strings.reserveCapacity(ends.count)
        var start = 0
        for end in ends {
            let stop = Int(end)
            guard stop >= start, stop <= count else { throw .corrupt(path: path, reason: "string offsets out of order") }
            strings.append(String(decoding: UnsafeRawBufferPointer(start: blob + start, count: stop - start), as: UTF8.self))
            start = stop
        }
        return strings
    }

    /// Nested arrays copied out of the mapping.
    @_specialize(exported:true,where T == Int32)
    public func readNested<T: BitwiseCopyable>(_ type: [[T]].Type = [[T]].self) throws(SnapshotError) -> [[T]] {
        // A closure, not `\.array`: a key path applied per element went through the runtime (9 % of a 52 M-node
        // import's first start).
        try readNestedFlat(T.self).map { $0.array }
    }
}
