import Foundation
import OSM

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where an OpenStreetMap replication feed stands: a sequence number and its time.
public struct ReplicationState: Sendable, Equatable {
    public var sequence: Int
    /// ISO 8601, as `state.txt` says it (without its backslashes).
    public var timestamp: String?

    public init(sequence: Int, timestamp: String?) { (self.sequence, self.timestamp) = (sequence, timestamp) }

    /// Reads a `state.txt` (Java properties: `sequenceNumber=…`, `timestamp=2024-05-01T12\:00\:00Z`).
    public static func parse(_ text: String, name: String) throws(OSMChangeError) -> ReplicationState {
        var values: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[line[..<equals].trimmingCharacters(in: .whitespaces)] = line[line.index(after: equals)...]
                .replacingOccurrences(of: "\\", with: "").trimmingCharacters(in: .whitespaces)
        }
        guard let number = values["sequenceNumber"].flatMap(Int.init), number >= 0 else {
            throw OSMChangeError(file: name, line: nil, reason: "no sequenceNumber (not a replication state file)")
        }
        return ReplicationState(sequence: number, timestamp: values["timestamp"])
    }
}

/// A replication feed in the standard layout (planet.openstreetmap.org/replication/minute, Geofabrik's updates, or
/// a directory written by osmium or pyosmium): `state.txt` at the top, and for sequence 1 234 567 the change file
/// `001/234/567.osc.gz` beside its `001/234/567.state.txt`. Read over http(s) or from a directory.
public struct ReplicationSource: Sendable {
    /// A URL (`https://…`, `file://…`) or a directory.
    public let location: String

    public init(_ location: String) { self.location = location.hasSuffix("/") ? String(location.dropLast()) : location }

    /// `001/234/567` for 1 234 567.
    public static func path(of sequence: Int) -> String {
        let digits = String(format: "%09d", sequence)
        let d = Array(digits)
        return String(d[0..<3]) + "/" + String(d[3..<6]) + "/" + String(d[6..<9])
    }

    /// The feed's latest state.
    public func latest() throws(OSMChangeError) -> ReplicationState {
        guard let data = try fetch("state.txt") else {
            throw OSMChangeError(file: location, line: nil, reason: "has no state.txt (not a replication feed)")
        }
        return try ReplicationState.parse(String(decoding: data, as: UTF8.self), name: "\(location)/state.txt")
    }

    /// The state of `sequence`, nil when the feed does not have it.
    public func state(of sequence: Int) throws(OSMChangeError) -> ReplicationState? {
        let name = Self.path(of: sequence) + ".state.txt"
        return try fetch(name).map { data throws(OSMChangeError) in
            try ReplicationState.parse(String(decoding: data, as: UTF8.self), name: "\(location)/\(name)")
        }
    }

    /// The change file of `sequence`, read, or nil when the feed does not have it.
    public func change(_ sequence: Int) throws(OSMChangeError) -> OSMChange? {
        let name = Self.path(of: sequence) + ".osc.gz"
        guard let data = try fetch(name) else { return nil }
        // Through a file: the reader takes gzip from a path (zlib's gzread tells a truncated stream).
        let temporary = NSTemporaryDirectory() + "poi-change-\(UUID().uuidString).osc.gz"
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        guard FileManager.default.createFile(atPath: temporary, contents: data) else {
            throw OSMChangeError(file: name, line: nil, reason: "cannot write \(temporary)")
        }
        let change = try OSMChange.read(temporary, name: "\(location)/\(name)")
        return change
    }

    /// The bytes of `name` under the feed, nil when it has no such file.
    func fetch(_ name: String) throws(OSMChangeError) -> Data? {
        if location.hasPrefix("http://") || location.hasPrefix("https://") {
            guard let url = URL(string: location + "/" + name) else { throw OSMChangeError(file: location, line: nil, reason: "not a URL") }
            return try Self.get(url)
        }
        let directory = location.hasPrefix("file://") ? String(location.dropFirst("file://".count)) : location
        return FileManager.default.contents(atPath: directory + "/" + name)
    }

    /// A GET that answers the body of a 200, nil for a 404 or 410, and an error for anything else.
    static func get(_ url: URL) throws(OSMChangeError) -> Data? {
        final class Outcome: @unchecked Sendable {
            var data: Data?
            var status = 0
            var error: String?
        }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        var request = URLRequest(url: url)
        request.timeoutInterval = 60
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            outcome.data = data
            outcome.status = (response as? HTTPURLResponse)?.statusCode ?? 0
            outcome.error = error.map { "\($0.localizedDescription)" }
            done.signal()
        }
        task.resume()
        done.wait()
        if let error = outcome.error { throw OSMChangeError(file: url.absoluteString, line: nil, reason: "cannot fetch: \(error)") }
        switch outcome.status {
        case 200: return outcome.data ?? Data()
        case 404, 410: return nil
        default: throw OSMChangeError(file: url.absoluteString, line: nil, reason: "the server answered \(outcome.status)")
        }
    }
}

/// Follows a replication feed: the change files after the data's sequence, in order, each applied whole.
public struct Replicator: Sendable {
    public let source: ReplicationSource

    public init(source: ReplicationSource) { self.source = source }

    /// Applies the change files after `current` up to the feed's latest, at most `limit` of them, each through
    /// `apply(change, name, state)`; answers the last sequence applied (`current` when none was due).
    /// - Throws: when the feed is behind the data (its latest sequence is older than `current`), or a change file it
    ///   should have is missing (a gap) — nothing after the last one applied is applied.
    public func catchUp(
        from current: Int,
        limit: Int = .max,
        apply: (OSMChange, String, ReplicationState) throws -> Void
    ) throws -> Int {
        let latest = try source.latest()
        guard latest.sequence >= current else {
            throw OSMChangeError(
                file: source.location,
                line: nil,
                reason: "the feed is at sequence \(latest.sequence), older than the data's \(current): is it the feed the extract came from?"
            )
        }
        var applied = current
        while applied < latest.sequence && applied - current < limit {
            let next = applied + 1
            let name = ReplicationSource.path(of: next) + ".osc.gz"
            guard let change = try source.change(next) else {
                throw OSMChangeError(
                    file: source.location,
                    line: nil,
                    reason: "sequence \(next) (\(name)) is missing while the feed is at \(latest.sequence): a gap; the data stays at \(applied)"
                )
            }
            let state = try source.state(of: next) ?? ReplicationState(sequence: next, timestamp: nil)
            try apply(change, name, state)
            applied = next
        }
        return applied
    }
}
