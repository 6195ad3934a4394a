/// Where live areas (fences) and their events are kept (docs/ARCHITECTURE.md, "Live areas"): a fence as the JSON of
/// its definition, an event as the JSON clients receive, numbered by one sequence over all fences (the SSE `id`, and
/// `Last-Event-ID` to resume), and each webhook's progress. The SQLite file beside a database (`FenceStore`) is the
/// one kept today; the engine's `FenceBook` knows only this protocol.
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
    /// A webhook's progress: the last event delivered (0: none) and how many it gave up on.
    func delivery(fence: String) throws -> (delivered: Int64, dead: Int)
    /// Records that the webhook is done with events up to `sequence`: delivered, or given up on (`dead`).
    func setDelivered(fence: String, through sequence: Int64, dead: Bool) throws
}

extension FenceLog {
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
