/// Where live areas (fences) and their events are kept (docs/ARCHITECTURE.md, "Live areas"): a fence as the JSON of
/// its definition, an event as the JSON clients receive, numbered by one sequence over all fences (the SSE `id`, and
/// `Last-Event-ID` to resume), and each webhook's progress. The SQLite file beside a database (`FenceStore`) is the
/// one a single server keeps; PostgreSQL's (`PostgresFenceLog`, a `SharedFenceLog`) is the one several servers share.
/// The engine's `FenceBook` knows only these protocols.
public protocol FenceLog: Sendable {
    /// Every fence's definition, by id.
    func fences() throws -> [(id: String, definition: String)]
    func put(id: String, definition: String) throws
    /// Removes a fence with its events and delivery state.
    func delete(id: String) throws
    /// Appends events in one transaction; each `json` is made by `make` from its new sequence number.
    func append(_ events: [(fence: String, detect: String, make: (Int64) -> String)]) throws -> [FenceEvent]
    /// A fence's events after `sequence`, oldest first, at most `limit`.
    func events(fence: String, after sequence: Int64, limit: Int) throws -> [FenceEvent]
    /// The lowest event number still kept: the ones before it are past the retention (1: none was dropped).
    func keptFrom() throws -> Int64
    /// A webhook's progress: the last event delivered (0: none) and how many it gave up on.
    func delivery(fence: String) throws -> (delivered: Int64, dead: Int)
    /// Records that the webhook is done with events up to `sequence`: delivered, or given up on (`dead`).
    func setDelivered(fence: String, through sequence: Int64, dead: Bool) throws
}

/// A fence log several servers share (docs/ARCHITECTURE.md, "Live areas"): a server reads the definitions and events
/// the others add, and the events are numbered by one sequence that commits in its order, so that every server hands
/// them out in the same order under the same numbers and a client may resume on any of them. Each event is made once,
/// by the server that made the write; a webhook is delivered by one server at a time, the one holding its lease.
public protocol SharedFenceLog: FenceLog {
    /// The highest event sequence number and definition version stored so far.
    func latest() throws -> (sequence: Int64, version: Int64)
    /// Every fence's events after `sequence`, oldest first, at most `limit`.
    func events(after sequence: Int64, limit: Int) throws -> [FenceEvent]
    /// The fences put or deleted after `version` (a deleted one's definition is nil), in the order they changed, and
    /// the version they leave.
    func definitions(after version: Int64) throws -> (changes: [(id: String, definition: String?)], version: Int64)
    /// Blocks until another server may have added events or definitions, or until `seconds` pass.
    func waitForNews(seconds: Double)
    /// Takes or renews the lease on delivering the fence's webhook for `seconds`: true when `holder` has it (no one
    /// else held it, theirs ran out, or it was already `holder`'s).
    func claimDelivery(fence: String, holder: String, seconds: Int) throws -> Bool
    /// The fences with events not yet delivered whose lease no other holder than `holder` has now — run out, never
    /// taken, or `holder`'s own: what a waiting server should take over (one query, however many fences).
    func deliveriesWaiting(for holder: String) throws -> Set<String>
}

extension FenceLog {
    /// A log that keeps every event.
    public func keptFrom() throws -> Int64 { 1 }

    /// A fence's events after `sequence`, oldest first, at most 1 000.
    public func events(fence: String, after sequence: Int64) throws -> [FenceEvent] { try events(fence: fence, after: sequence, limit: 1000) }
}

/// An event as kept: its number in the one sequence, its fence, what it reports and its JSON.
public struct FenceEvent: Sendable, Equatable {
    public let sequence: Int64
    public let fence: String
    /// What it reports (enter, exit, inside): the SSE event's name.
    public let detect: String
    public let json: String

    public init(sequence: Int64, fence: String, detect: String, json: String) {
        (self.sequence, self.fence, self.detect, self.json) = (sequence, fence, detect, json)
    }
}
