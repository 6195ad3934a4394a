import Records

/// The writes that passed their checks and wait for the store, in write order (docs/ARCHITECTURE.md, "The walk of a
/// write": group commit), with each record as they leave it, so that the checks of the writes behind them see them.
/// Guarded by the engine's `writer` lock; a ticket's outcome by its `committer` lock.
struct PendingWrites {
    /// A write's place in the queue and, once the commit that took it is over, whether it is durable.
    final class Ticket: @unchecked Sendable {
        // SAFETY: `outcome` is set and read only under the engine's `committer` lock.
        let number: UInt64
        var outcome: Result<Void, SearchError>?

        init(number: UInt64) { self.number = number }
    }

    struct Key: Hashable {
        let kind: RecordKind
        let id: String
    }

    private var changes: [StoreChange] = []
    private var tickets: [Ticket] = []
    /// Each record the waiting writes wrote, as they leave it (nil: deleted), with the ticket of the last of them.
    private var overlay: [Key: (record: Hit.Record?, ticket: UInt64)] = [:]
    private var issued: UInt64 = 0

    var count: Int { tickets.count }

    /// Queues a write's changes; answers its ticket.
    mutating func add(_ changes: [StoreChange]) -> Ticket {
        issued += 1
        for change in changes {
            switch change {
            case .put(.poi(let poi)): overlay[Key(kind: .poi, id: poi.id)] = (.poi(poi), issued)
            case .put(.pin(let pin)): overlay[Key(kind: .pin, id: pin.id)] = (.pin(pin), issued)
            case .delete(let kind, let id): overlay[Key(kind: kind, id: id)] = (nil, issued)
            }
        }
        self.changes += changes
        let ticket = Ticket(number: issued)
        tickets.append(ticket)
        return ticket
    }

    /// The record as the waiting writes leave it: `.some(nil)` when they delete it, nil when none of them wrote it.
    func record(_ kind: RecordKind, id: String) -> Hit.Record?? { overlay[Key(kind: kind, id: id)].map { $0.record } }

    /// The records of one kind the waiting writes wrote, as they leave them.
    func records(_ kind: RecordKind) -> [(id: String, record: Hit.Record?)] {
        overlay.compactMap { key, value in key.kind == kind ? (key.id, value.record) : nil }
    }

    /// Takes every waiting write for one commit. Their records stay laid over the state until `settle` (the state has
    /// them) or `abandon` (the commit failed).
    mutating func take() -> (changes: [StoreChange], tickets: [Ticket]) {
        defer {
            changes = []
            tickets = []
        }
        return (changes, tickets)
    }

    /// The commit of the writes up to `ticket` reached the state: their records are read from it from now on (those a
    /// later waiting write wrote again stay).
    mutating func settle(through ticket: UInt64) {
        overlay = overlay.filter { $0.value.ticket > ticket }
    }

    /// A commit failed: the writes still waiting were checked against its records, so they fail with it. Answers their
    /// tickets; the queue is empty afterwards.
    mutating func abandon() -> [Ticket] {
        defer {
            changes = []
            tickets = []
            overlay = [:]
        }
        return tickets
    }
}
