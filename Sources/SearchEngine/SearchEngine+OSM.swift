import Foundation
import Records

/// Where the OpenStreetMap data of a store stands, for `/health` and `/metrics`: the replication sequence and the
/// OSM time of the data, and, when the server follows a feed (`poi serve --replicate`), how that goes.
public struct OSMDataStatus: Sendable, Equatable {
    public var sequence: Int?
    /// The data's OSM time (ISO 8601): of the extract, then of the last change file applied.
    public var timestamp: String?
    /// The feed followed, if any.
    public var source: String?
    public var following = false
    /// Change files applied since start, and the failures to reach or apply the feed.
    public var applied = 0
    public var failures = 0
    public var lastError: String?
    public var checkedAt: Date?

    public init(sequence: Int? = nil, timestamp: String? = nil, source: String? = nil) {
        (self.sequence, self.timestamp, self.source) = (sequence, timestamp, source)
    }

    /// Seconds from the data's OSM time to now: how far behind OpenStreetMap the data is.
    public var lagSeconds: Double? {
        guard let timestamp, let date = Self.date(timestamp) else { return nil }
        return max(0, Date().timeIntervalSince(date))
    }

    public static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}

extension SearchEngine {
    /// Where the OpenStreetMap data stands; nil when the store holds no OpenStreetMap import.
    public var osmStatus: OSMDataStatus? { osmData.withLock { $0 } }

    /// Reads where the store's OpenStreetMap import stands (at start, and after an import replaced it).
    public func loadOSMStatus() {
        guard let store, let state = try? store.osmMirrorState() else { return }
        osmData.withLock { status in
            var next = status ?? OSMDataStatus()
            (next.sequence, next.timestamp) = (state.sequence, state.timestamp)
            next.source = next.source ?? state.source
            status = next
        }
    }

    /// Changes the status (the follower's bookkeeping).
    public func updateOSMStatus(_ body: (inout OSMDataStatus) -> Void) {
        osmData.withLock { status in
            var next = status ?? OSMDataStatus()
            body(&next)
            status = next
        }
    }
}
