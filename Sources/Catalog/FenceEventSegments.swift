import CChecksum
import Foundation
import Records
import Synchronization

/// How long fence events are kept (docs/ARCHITECTURE.md, "Live areas"): whole segments are dropped, oldest first,
/// once their last event is older than `seconds` or while all segments together hold more than `bytes`. The segment
/// being appended to is never dropped, so the sequence always carries on from where it was.
public struct FenceEventRetention: Sendable, Equatable {
    /// Events older than this are dropped (nil: kept whatever their age).
    public var seconds: Double?
    /// Segments are dropped while the events kept take more than this (nil: whatever their size).
    public var bytes: Int?

    public init(seconds: Double?, bytes: Int?) { (self.seconds, self.bytes) = (seconds, bytes) }

    /// Seven days, and at most 2 GiB.
    public static let standard = FenceEventRetention(seconds: 7 * 86_400, bytes: 2 << 30)
    public static let forever = FenceEventRetention(seconds: nil, bytes: nil)
}

/// The fence events of a `FenceStore`, appended to segment files (docs/ARCHITECTURE.md, "Live areas"), the way Kafka
/// keeps a topic: `DIR/<first sequence>.events`, each event a record `[length u32][CRC-32C u32][sequence i64]
/// [detect u8 + bytes][fence u16 + bytes][json]`, all little-endian. A commit's events are one `pwrite` at the end of
/// the newest segment, with no fsync: like the SQLite store they replaced (WAL, `synchronous = NORMAL`), they survive
/// the process, not a power loss. Opening a segment checks every record and cuts the file at the first one that is
/// torn or does not follow, so a crash mid-write loses only that write's events.
///
/// In memory, per segment: where each event starts and each fence's events (indices into the segment), 8 bytes an
/// event. A segment that is full (`segmentBytes`, or older than an eighth of the retention age) is sealed: those
/// lists are written beside it (`<first>.index`, checksummed), so that opening reads them instead of the events. The
/// retention (`FenceEventRetention`) drops whole segments, oldest first.
///
/// Without a directory the segments are byte arrays in memory (an engine without a store; tests).
final class FenceEventSegments: @unchecked Sendable {
    // SAFETY: @unchecked Sendable because every mutable field of it and of its segments is used under `state`'s
    // lock, except the bytes of a segment file, which are read with `pread` only below a published `end`, and written
    // only past it, under `appending`.

    /// One segment: the events numbered from `first` on.
    final class Segment: @unchecked Sendable {
        // SAFETY: @unchecked Sendable because its fields are guarded by the log's `state` lock (see above).
        let first: Int64
        let path: String?
        let descriptor: Int32
        var memory: [UInt8] = []
        /// Where each event starts: event `first + i` at `offsets[i]`.
        var offsets: [UInt32] = []
        var end = 0
        /// Each fence's events, as indices into `offsets`, ascending.
        var fences: [String: [UInt32]] = [:]
        /// When its last event was written (seconds since 1970), and when its first was.
        var lastWritten: Double
        var firstWritten: Double?

        init(first: Int64, path: String?, descriptor: Int32, now: Double) {
            (self.first, self.path, self.descriptor, self.lastWritten) = (first, path, descriptor, now)
        }

        deinit { if descriptor >= 0 { close(descriptor) } }

        var count: Int { offsets.count }
        var next: Int64 { first + Int64(offsets.count) }
        var indexPath: String? { path.map { String($0.dropLast(".events".count)) + ".index" } }

        func length(of index: Int) -> Int { (index + 1 < offsets.count ? Int(offsets[index + 1]) : end) - Int(offsets[index]) }

        /// Takes in the events of `bytes` (records one after another), which start at `end`.
        func take(_ records: [(fence: String, length: Int)], now: Double) {
            if offsets.isEmpty { firstWritten = now }
            for record in records {
                // A number with no event (the empty fence, see `appendNumbered`) is in no fence's list.
                if !record.fence.isEmpty { fences[record.fence, default: []].append(UInt32(offsets.count)) }
                offsets.append(UInt32(end))
                end += record.length
            }
            lastWritten = now
        }
    }

    struct State {
        var segments: [Segment]
        /// Per deleted fence, the last event number when it was deleted: its events up to there are not its own.
        var cleared: [String: Int64]
    }

    let directory: String?
    let segmentBytes: Int
    let retention: FenceEventRetention
    let state: Mutex<State>
    /// Held across an append, a seal or a trim: one at a time changes the newest segment.
    private let appending = Mutex<Void>(())
    static let hardwareChecksum = poi_crc32c_has_hardware() != 0

    /// The segments in `directory` (made when missing), checked; or none, in memory. With none yet, the first is
    /// numbered from `start`.
    init(directory: String?, start: Int64, segmentBytes: Int, retention: FenceEventRetention, now: Double) throws {
        // Offsets are 32-bit: a segment stays well under 4 GiB.
        (self.directory, self.segmentBytes, self.retention) = (directory, min(max(256, segmentBytes), 1 << 30), retention)
        var segments: [Segment] = []
        if let directory {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            // An index file whose writing was cut short (it is written aside, then renamed).
            for name in names where name.hasSuffix(".tmp") { unlink("\(directory)/\(name)") }
            let firsts = names.compactMap { name -> Int64? in
                guard name.hasSuffix(".events") else { return nil }
                return Int64(name.dropLast(".events".count))
            }.sorted()
            for (position, first) in firsts.enumerated() {
                let segment = try Self.open(directory: directory, first: first, now: now)
                let newest = position == firsts.count - 1
                if newest || !Self.readIndex(of: segment) {
                    try Self.scan(segment)
                    if !newest { try Self.writeIndex(of: segment) }
                }
                if newest, let index = segment.indexPath { unlink(index) }
                if let previous = segments.last, previous.next != segment.first {
                    throw CatalogError.storage(
                        "fence events: \(segment.path!) starts at event \(segment.first), but the segment before it ends at \(previous.next - 1)"
                    )
                }
                segments.append(segment)
            }
        }
        state = Mutex(State(segments: segments, cleared: [:]))
        if segments.isEmpty { try appending.withLock { _ in try startSegment(at: max(1, start), now: now) } }
    }

    /// The next event's number.
    var next: Int64 { state.withLock { $0.segments.last!.next } }
    /// The lowest event number still kept: those before it were dropped by the retention.
    var keptFrom: Int64 { state.withLock { $0.segments.first!.first } }
    /// The bytes of all the events kept.
    var bytes: Int { state.withLock { $0.segments.reduce(0) { $0 + $1.end } } }
    var segmentCount: Int { state.withLock { $0.segments.count } }

    /// Appends events numbered from `next` on, in one write; each `json` made by `make` from its number.
    func append(_ events: [(fence: String, detect: String, make: (Int64) -> String)], now: Double) throws -> [FenceEvent] {
        try appending.withLock { _ in
            let (segment, next) = state.withLock { ($0.segments.last!, $0.segments.last!.next) }
            var stored: [FenceEvent] = []
            stored.reserveCapacity(events.count)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(events.count * 400)
            var records: [(fence: String, length: Int)] = []
            records.reserveCapacity(events.count)
            for (offset, event) in events.enumerated() {
                let event = FenceEvent(
                    sequence: next + Int64(offset),
                    fence: event.fence,
                    detect: event.detect,
                    json: event.make(next + Int64(offset))
                )
                records.append((event.fence, Self.encode(event, into: &bytes)))
                stored.append(event)
            }
            try write(bytes, records, to: segment, now: now)
            return stored
        }
    }

    /// Appends events already numbered, in order, from `next` on; a number skipped is kept as an event of no fence
    /// (a file of the SQLite store, whose deleted fences' events left gaps). Only while opening.
    func appendNumbered(_ events: [FenceEvent], now: Double) throws {
        try appending.withLock { _ in
            var segment = state.withLock { $0.segments.last! }
            var bytes: [UInt8] = []
            var records: [(fence: String, length: Int)] = []
            var next = segment.next
            for event in events where event.sequence >= next {
                while next <= event.sequence {
                    let filler = next < event.sequence
                    let numbered = filler ? FenceEvent(sequence: next, fence: "", detect: "", json: "") : event
                    records.append((numbered.fence, Self.encode(numbered, into: &bytes)))
                    next += 1
                }
                if segment.end + bytes.count >= segmentBytes {
                    try write(bytes, records, to: segment, now: now)
                    (bytes, records) = ([], [])
                    segment = state.withLock { $0.segments.last! }
                }
            }
            try write(bytes, records, to: segment, now: now)
        }
    }

    /// Writes records at the end of `segment` and publishes them; then seals it when full. Under `appending`.
    private func write(_ bytes: [UInt8], _ records: [(fence: String, length: Int)], to segment: Segment, now: Double) throws {
        guard !records.isEmpty else { return }
        if segment.descriptor >= 0 {
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { raw in
                    pwrite(segment.descriptor, raw.baseAddress! + written, bytes.count - written, off_t(segment.end + written))
                }
                guard n > 0 else {
                    let error = String(cString: strerror(errno))
                    // Cut what part of it went through, so that nothing of this append is found on opening.
                    _ = ftruncate(segment.descriptor, off_t(segment.end))
                    throw CatalogError.storage("fence events: writing \(segment.path!): \(error)")
                }
                written += n
            }
            state.withLock { _ in segment.take(records, now: now) }
        } else {
            state.withLock { _ in
                segment.memory += bytes
                segment.take(records, now: now)
            }
        }
        if segment.end >= segmentBytes { try seal(now: now) }
    }

    /// Seals the newest segment (its lists written beside it) and starts the next. Under `appending`.
    private func seal(now: Double) throws {
        let segment = state.withLock { $0.segments.last! }
        guard segment.count > 0 else { return }
        if segment.path != nil { try state.withLock { _ in try Self.writeIndex(of: segment) } }
        try startSegment(at: segment.next, now: now)
    }

    private func startSegment(at first: Int64, now: Double) throws {
        let segment: Segment
        if let directory {
            segment = try Self.open(directory: directory, first: first, now: now)
        } else {
            segment = Segment(first: first, path: nil, descriptor: -1, now: now)
        }
        state.withLock { $0.segments.append(segment) }
    }

    /// Drops the segments past the retention, oldest first (never the newest); first seals the newest when its first
    /// event is older than an eighth of the retention age, so that an idle store's events age out too.
    @discardableResult
    func trim(now: Double) throws -> Int {
        try appending.withLock { _ in
            if let age = retention.seconds, let started = state.withLock({ $0.segments.last!.firstWritten }), now - started > age / 8 {
                try seal(now: now)
            }
            let dropped: [Segment] = state.withLock { state in
                var total = state.segments.reduce(0) { $0 + $1.end }
                var dropped: [Segment] = []
                while state.segments.count > 1 {
                    let oldest = state.segments[0]
                    let tooOld = retention.seconds.map { now - oldest.lastWritten > $0 } ?? false
                    let tooMuch = retention.bytes.map { total > $0 } ?? false
                    guard tooOld || tooMuch else { break }
                    total -= oldest.end
                    dropped.append(state.segments.removeFirst())
                }
                let kept = state.segments[0].first
                state.cleared = state.cleared.filter { $0.value >= kept }
                return dropped
            }
            for segment in dropped {
                if let path = segment.path { unlink(path) }
                if let index = segment.indexPath { unlink(index) }
            }
            return dropped.count
        }
    }

    /// Forgets a fence's events (a deleted fence; the same id made again starts with none).
    func clear(fence: String) -> Int64 {
        state.withLock { state in
            let through = state.segments.last!.next - 1
            state.cleared[fence] = through
            for segment in state.segments { segment.fences[fence] = nil }
            return through
        }
    }

    /// Applies the clears kept in the store on opening.
    func restoreCleared(_ cleared: [String: Int64]) {
        state.withLock { state in
            state.cleared = cleared
            for (fence, through) in cleared {
                for segment in state.segments where segment.first <= through {
                    segment.fences[fence]?.removeAll { segment.first + Int64($0) <= through }
                    if segment.fences[fence]?.isEmpty == true { segment.fences[fence] = nil }
                }
            }
        }
    }

    /// A fence's events after `sequence`, oldest first, at most `limit`.
    func events(fence: String, after sequence: Int64, limit: Int) throws -> [FenceEvent] {
        guard limit > 0 else { return [] }
        var wanted: [(segment: Segment, offset: Int, length: Int)] = []
        var copies: [FenceEvent] = []
        state.withLock { state in
            let after = max(sequence, state.cleared[fence] ?? 0)
            for segment in state.segments where segment.next - 1 > after {
                guard let indices = segment.fences[fence] else { continue }
                let from = after < segment.first ? 0 : UInt32(after - segment.first + 1)
                var position = indices.partitioningIndex { $0 >= from }
                while position < indices.count, wanted.count < limit {
                    let index = Int(indices[position])
                    wanted.append((segment, Int(segment.offsets[index]), segment.length(of: index)))
                    position += 1
                }
                if wanted.count >= limit { break }
            }
            // In memory the bytes are read here, under the lock that guards them.
            if directory == nil {
                copies = wanted.compactMap { item in
                    Array(item.segment.memory[item.offset..<item.offset + item.length]).withUnsafeBytes { Self.decode($0) }
                }
            }
        }
        if directory == nil { return copies }
        return try wanted.map { item in
            var bytes = [UInt8](repeating: 0, count: item.length)
            let n = bytes.withUnsafeMutableBytes { pread(item.segment.descriptor, $0.baseAddress, item.length, off_t(item.offset)) }
            guard n == item.length, let event = bytes.withUnsafeBytes({ Self.decode($0) }) else {
                throw CatalogError.storage("fence events: \(item.segment.path!) has no whole event at byte \(item.offset)")
            }
            return event
        }
    }

    // MARK: - Records

    /// Appends an event's record to `bytes`; answers its length.
    static func encode(_ event: FenceEvent, into bytes: inout [UInt8]) -> Int {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: 8))
        withUnsafeBytes(of: event.sequence.littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(truncatingIfNeeded: event.detect.utf8.count))
        bytes.append(contentsOf: event.detect.utf8)
        withUnsafeBytes(of: UInt16(truncatingIfNeeded: event.fence.utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: event.fence.utf8)
        bytes.append(contentsOf: event.json.utf8)
        let body = bytes.count - start - 8
        let crc = bytes.withUnsafeBytes { checksum(UnsafeRawBufferPointer(rebasing: $0[(start + 8)...])) }
        withUnsafeBytes(of: UInt32(body).littleEndian) { for (i, b) in $0.enumerated() { bytes[start + i] = b } }
        withUnsafeBytes(of: crc.littleEndian) { for (i, b) in $0.enumerated() { bytes[start + 4 + i] = b } }
        return bytes.count - start
    }

    /// The event of a whole record, or nil when it is torn or does not check.
    static func decode(_ record: UnsafeRawBufferPointer) -> FenceEvent? {
        guard record.count >= 19 else { return nil }
        let body = Int(record.loadUnaligned(as: UInt32.self).littleEndian)
        guard body + 8 == record.count, body >= 11,
            record.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian == checksum(UnsafeRawBufferPointer(rebasing: record[8...]))
        else { return nil }
        let sequence = record.loadUnaligned(fromByteOffset: 8, as: Int64.self).littleEndian
        let detectLength = Int(record[16])
        guard 17 + detectLength + 2 <= record.count else { return nil }
        let fenceLength = Int(record.loadUnaligned(fromByteOffset: 17 + detectLength, as: UInt16.self).littleEndian)
        let fenceStart = 19 + detectLength
        guard fenceStart + fenceLength <= record.count else { return nil }
        func text(_ range: Range<Int>) -> String { String(decoding: UnsafeRawBufferPointer(rebasing: record[range]), as: UTF8.self) }
        return FenceEvent(
            sequence: sequence,
            fence: text(fenceStart..<fenceStart + fenceLength),
            detect: text(17..<17 + detectLength),
            json: text(fenceStart + fenceLength..<record.count)
        )
    }

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        return hardwareChecksum ? poi_crc32c_hardware(0, base, bytes.count) : poi_crc32c_software(0, base, bytes.count)
    }

    // MARK: - Files

    private static func open(directory: String, first: Int64, now: Double) throws -> Segment {
        let path = "\(directory)/\(String(format: "%020lld", first)).events"
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CatalogError.storage("fence events: opening \(path): \(String(cString: strerror(errno)))") }
        var info = stat()
        let modified = fstat(descriptor, &info) == 0 ? Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9 : now
        return Segment(first: first, path: path, descriptor: descriptor, now: modified)
    }

    /// Reads a segment's records one by one: each must check and carry the next number. The file is cut at the first
    /// that does not (a write the process did not finish).
    private static func scan(_ segment: Segment) throws {
        var info = stat()
        guard fstat(segment.descriptor, &info) == 0 else {
            throw CatalogError.storage("fence events: \(segment.path!): \(String(cString: strerror(errno)))")
        }
        let size = Int(info.st_size)
        var bytes = [UInt8](repeating: 0, count: size)
        var read = 0
        while read < size {
            let n = bytes.withUnsafeMutableBytes { pread(segment.descriptor, $0.baseAddress! + read, size - read, off_t(read)) }
            guard n > 0 else { throw CatalogError.storage("fence events: reading \(segment.path!): \(String(cString: strerror(errno)))") }
            read += n
        }
        var records: [(fence: String, length: Int)] = []
        var offset = 0
        bytes.withUnsafeBytes { raw in
            while offset + 8 <= size {
                let length = 8 + Int(raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
                guard offset + length <= size, let event = decode(UnsafeRawBufferPointer(rebasing: raw[offset..<offset + length])),
                    event.sequence == segment.first + Int64(records.count)
                else { break }
                records.append((event.fence, length))
                offset += length
            }
        }
        let modified = segment.lastWritten
        segment.take(records, now: modified)
        if offset < size { _ = ftruncate(segment.descriptor, off_t(offset)) }
    }

    /// The index written beside a sealed segment: `PFEIDX01`, first, count, end, the offsets, then per fence its
    /// id and indices; a CRC-32C of all that last.
    private static func writeIndex(of segment: Segment) throws {
        guard let path = segment.indexPath else { return }
        var bytes: [UInt8] = Array("PFEIDX01".utf8)
        func put<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
        put(segment.first)
        put(UInt32(segment.count))
        put(UInt32(segment.end))
        for offset in segment.offsets { put(offset) }
        put(UInt32(segment.fences.count))
        for (fence, indices) in segment.fences.sorted(by: { $0.key < $1.key }) {
            put(UInt16(fence.utf8.count))
            bytes.append(contentsOf: fence.utf8)
            put(UInt32(indices.count))
            for index in indices { put(index) }
        }
        put(bytes.withUnsafeBytes { checksum($0) })
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes)), rename(temporary, path) == 0 else {
            throw CatalogError.storage("fence events: writing \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Reads a sealed segment's index into it; false when there is none or it does not check (then it is scanned).
    private static func readIndex(of segment: Segment) -> Bool {
        guard let path = segment.indexPath, let data = FileManager.default.contents(atPath: path), data.count >= 28 else { return false }
        var info = stat()
        guard fstat(segment.descriptor, &info) == 0 else { return false }
        return data.withUnsafeBytes { raw -> Bool in
            guard raw.starts(with: "PFEIDX01".utf8),
                raw.loadUnaligned(fromByteOffset: raw.count - 4, as: UInt32.self).littleEndian
                    == checksum(UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 4)]))
            else { return false }
            var at = 8
            func get<T: FixedWidthInteger>(_: T.Type) -> T? {
                guard at + MemoryLayout<T>.size <= raw.count - 4 else { return nil }
                defer { at += MemoryLayout<T>.size }
                return T(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: T.self))
            }
            guard get(Int64.self) == segment.first, let count = get(UInt32.self), let end = get(UInt32.self), Int(end) == Int(info.st_size)
            else { return false }
            var offsets: [UInt32] = []
            offsets.reserveCapacity(Int(count))
            for _ in 0..<count {
                guard let offset = get(UInt32.self) else { return false }
                offsets.append(offset)
            }
            guard let fenceCount = get(UInt32.self) else { return false }
            var fences: [String: [UInt32]] = [:]
            for _ in 0..<fenceCount {
                guard let length = get(UInt16.self), at + Int(length) <= raw.count - 4 else { return false }
                let fence = String(decoding: UnsafeRawBufferPointer(rebasing: raw[at..<at + Int(length)]), as: UTF8.self)
                at += Int(length)
                guard let n = get(UInt32.self) else { return false }
                var indices: [UInt32] = []
                indices.reserveCapacity(Int(n))
                for _ in 0..<n {
                    guard let index = get(UInt32.self), index < count else { return false }
                    indices.append(index)
                }
                fences[fence] = indices
            }
            (segment.offsets, segment.end, segment.fences) = (offsets, Int(end), fences)
            return true
        }
    }
}

extension Array where Element == UInt32 {
    /// The first position whose element satisfies `predicate`, which is false and then true along the array.
    fileprivate func partitioningIndex(where predicate: (UInt32) -> Bool) -> Int {
        var (low, high) = (0, count)
        while low < high {
            let middle = (low + high) / 2
            if predicate(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
