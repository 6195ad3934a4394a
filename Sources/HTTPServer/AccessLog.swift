import BundledData
import Dispatch
import Foundation
import HTTPTypes
import Metrics
import Parallelism
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The request log (`poi serve --access-log FILE|-`): one JSON line per answered request, from both lanes —
///
/// ```json
/// {"time":"2026-11-28T16:35:24.123Z","request_id":"3f2a9c1e-1a","method":"GET","route":"/v1/nearby","status":200,
///  "bytes":1834,"duration_ms":0.093,"client":"127.0.0.1"}
/// ```
///
/// with `"user"` (a valid token's `sub`) or `"key"` (the API key's name) when the request proved one. The route is
/// the template the request matched (`/v1/pins/:id`; `NotFound` for none, as in the metrics), never the path or query as sent: queries are
/// what users typed and where they stood. The duration runs from the request's parse to its answer being made (the
/// same span as `poi_http_request_duration_seconds`); bytes are the body's.
///
/// Off the hot path: a request only appends a small record under a lock; a writer thread formats and writes the
/// records every 100 ms (sooner when half the buffer is used). When the buffer is full — the disk or the pipe
/// cannot keep up — the record is dropped and counted (`poi_access_log_dropped_total`), never waited for.
public final class AccessLog: Sendable {
    /// One answered request, as the lanes saw it.
    public struct Entry: Sendable {
        /// Wall-clock time the request was read, in nanoseconds since 1970.
        public var time: Int64
        public var requestID: String
        public var method: HTTPRequest.Method
        public var route: String
        public var status: Int
        public var bytes: Int
        public var durationNanoseconds: UInt64
        public var caller: Caller?
        public var client: String?

        public init(
            time: Int64,
            requestID: String,
            method: HTTPRequest.Method,
            route: String,
            status: Int,
            bytes: Int,
            durationNanoseconds: UInt64,
            caller: Caller?,
            client: String?
        ) {
            (self.time, self.requestID, self.method, self.route, self.status) = (time, requestID, method, route, status)
            (self.bytes, self.durationNanoseconds, self.caller, self.client) = (bytes, durationNanoseconds, caller, client)
        }
    }

    /// Who a request proved to be.
    public enum Caller: Sendable, Equatable {
        case user(String)
        case key(String)
    }

    private struct State {
        var pending: [Entry] = []
        var closed = false
    }

    /// Records held before the writer takes them; past it, records are dropped.
    public let capacity: Int
    private let state = Mutex(State())
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let dropped: Counter
    private let written: Counter
    private let droppedCount = Atomic<Int>(0)
    /// The writer thread's clock text (only the writer uses it).
    private nonisolated(unsafe) var clock = SecondText()
    private let writtenCount = Atomic<Int>(0)

    /// Opens `destination` for appending (`-` is standard output) and starts the writer.
    public init(destination: String, capacity: Int = 65_536) throws(AccessLogError) {
        self.capacity = capacity
        if destination == "-" {
            descriptor = STDOUT_FILENO
            ownsDescriptor = false
        } else {
            let fd = open(destination, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o640)
            guard fd >= 0 else { throw AccessLogError(path: destination, reason: String(cString: strerror(errno))) }
            descriptor = fd
            ownsDescriptor = true
        }
        dropped = Counter(label: "poi_access_log_dropped_total")
        written = Counter(label: "poi_access_log_lines_total")
        let thread = Thread.named("access-log") { [self] in run() }
        thread.start()
    }

    /// Records `entry` for the writer: never blocks on I/O; drops and counts it when the buffer is full.
    public func record(_ entry: Entry) {
        let (accepted, signal) = state.withLock { state -> (Bool, Bool) in
            guard !state.closed, state.pending.count < capacity else { return (false, false) }
            state.pending.append(entry)
            return (true, state.pending.count == capacity / 2)
        }
        if !accepted {
            droppedCount.add(1, ordering: .relaxed)
            dropped.increment()
        }
        if signal { wake.signal() }
    }

    /// Records dropped because the buffer was full, since start.
    public var droppedLines: Int { droppedCount.load(ordering: .relaxed) }
    /// Lines written, since start.
    public var writtenLines: Int { writtenCount.load(ordering: .relaxed) }

    /// Writes what is pending and stops the writer; later records are dropped. Call once, at shutdown.
    public func close() {
        let first = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        wake.signal()
        finished.wait()
        if ownsDescriptor { _ = Glibc.close(descriptor) }
    }

    /// The current wall-clock time, in nanoseconds since 1970 (vDSO: no system call).
    public static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    private func run() {
        while true {
            _ = wake.wait(timeout: .now() + .milliseconds(100))
            let (batch, closed) = state.withLock { state -> ([Entry], Bool) in
                var taken: [Entry] = []
                taken.reserveCapacity(min(capacity, max(64, state.pending.count)))
                swap(&taken, &state.pending)
                return (taken, state.closed)
            }
            if !batch.isEmpty { write(batch) }
            if closed {
                finished.signal()
                return
            }
        }
    }

    private func write(_ batch: [Entry]) {
        var json = JSONWriter(capacity: 200 * batch.count)
        for entry in batch {
            Self.line(entry, clock: &clock, to: &json)
            json.endLine()
        }
        json.withBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                // A log that cannot be written is not a reason to stop serving: what is left of the batch is dropped.
                guard n > 0 else { break }
                offset += n
            }
        }
        writtenCount.add(batch.count, ordering: .relaxed)
        written.increment(by: batch.count)
    }

    /// One entry's JSON object, its fields in a fixed order. `clock` keeps the last second's text.
    static func line(_ entry: Entry, clock: inout SecondText, to json: inout JSONWriter) {
        json.beginObject()
        json.key("time")
        clock.write(entry.time, to: &json)
        json.field("request_id", entry.requestID)
        json.field("method", entry.method.rawValue)
        json.field("route", entry.route)
        json.field("status", entry.status)
        json.field("bytes", entry.bytes)
        json.field("duration_ms", Double(entry.durationNanoseconds / 1_000) / 1_000)
        switch entry.caller {
        case .user(let subject): json.field("user", subject)
        case .key(let name): json.field("key", name)
        case nil: break
        }
        if let client = entry.client { json.field("client", client) }
        json.endObject()
    }

    /// RFC 3339 UTC to the millisecond, `2026-11-28T16:35:24.123Z`: the text up to the second is made once a second.
    struct SecondText {
        private var second = Int64.min
        private var text: [UInt8] = []

        mutating func write(_ nanoseconds: Int64, to json: inout JSONWriter) {
            let second = nanoseconds / 1_000_000_000
            if second != self.second {
                self.second = second
                var seconds = time_t(second)
                var parts = tm()
                gmtime_r(&seconds, &parts)
                func digits(_ value: Int32, _ width: Int) -> [UInt8] {
                    var out = [UInt8](repeating: UInt8(ascii: "0"), count: width)
                    var value = value
                    for i in stride(from: width - 1, through: 0, by: -1) {
                        out[i] = UInt8(ascii: "0") + UInt8(value % 10)
                        value /= 10
                    }
                    return out
                }
                text =
                    digits(parts.tm_year + 1900, 4) + [UInt8(ascii: "-")] + digits(parts.tm_mon + 1, 2) + [UInt8(ascii: "-")]
                    + digits(parts.tm_mday, 2) + [UInt8(ascii: "T")] + digits(parts.tm_hour, 2) + [UInt8(ascii: ":")]
                    + digits(parts.tm_min, 2) + [UInt8(ascii: ":")] + digits(parts.tm_sec, 2) + [UInt8(ascii: ".")]
            }
            let milliseconds = Int(nanoseconds % 1_000_000_000) / 1_000_000
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: text.count + 4) { full in
                for (i, byte) in text.enumerated() { full[i] = byte }
                full[text.count] = UInt8(ascii: "0") + UInt8(milliseconds / 100)
                full[text.count + 1] = UInt8(ascii: "0") + UInt8(milliseconds / 10 % 10)
                full[text.count + 2] = UInt8(ascii: "0") + UInt8(milliseconds % 10)
                full[text.count + 3] = UInt8(ascii: "Z")
                json.string(utf8: UnsafeBufferPointer(full))
            }
        }
    }
}

/// A request log that cannot be opened, named by its path.
public struct AccessLogError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "--access-log \(path): cannot open for appending: \(reason)" }
}
