import Foundation
import Gazetteer
import Parallelism
import Records
import SnapshotFile
import Synchronization

/// Keeps an engine over a shared store (PostgreSQL) up to date with the writes other servers commit: a thread that
/// waits for the store's wake-up (LISTEN/NOTIFY) or one poll interval, then reads what changed after the sequence
/// it has applied and applies it under the engine's `writer` lock. Nothing is missed across a dropped connection or
/// a restart of either side, because the sequence number, not the wake-up, says what to read.
public final class Replication: Sendable {
    /// Where the follower stands, for `/health` and tests.
    public struct Status: Sendable, Equatable {
        /// The store sequence the in-memory state has applied.
        public var applied: UInt64 = 0
        /// Whether the last attempt to read the feed reached the store.
        public var connected = true
        /// Why the last attempt failed.
        public var lastError: String?
        /// When the state was last known to be caught up with the store.
        public var caughtUpAt = Date()
        /// Full reloads because the log was trimmed past this replica or the store went back (a failover lost commits).
        public var reloads = 0
    }

    let feed: any ChangeFeed
    let status = Mutex(Status())
    let control = Mutex<(running: Bool, stop: Bool)>((false, false))

    init(feed: any ChangeFeed) { self.feed = feed }

    public var current: Status { status.withLock { $0 } }

    func caughtUp(at sequence: UInt64) {
        status.withLock { status in
            status.applied = sequence
            status.connected = true
            status.lastError = nil
            status.caughtUpAt = Date()
        }
    }

    func failed(_ error: CatalogError) {
        status.withLock { status in
            status.connected = false
            status.lastError = error.description
        }
    }

    var stopping: Bool { control.withLock { $0.stop } }

    /// Whether the follower thread runs (it retries the store every poll interval and reports when it is back).
    var following: Bool { control.withLock { $0.running && !$0.stop } }
}

extension SearchEngine {
    /// Whether the store is shared and this engine follows its change feed.
    public var followsStore: Bool { replication != nil }

    /// The embedded SQLite database this engine writes to (what `poi backup` copies); nil for PostgreSQL or none.
    public var databasePath: String? { store?.databaseFile }

    /// Where the follower stands (nil: the store is not shared).
    public var replicationStatus: Replication.Status? { replication?.current }

    /// The store server the follower reads from now (`HOST:PORT`), for `/health`.
    public var storeServer: String? { replication?.feed.server }

    /// How often the follower polls when no wake-up comes, how often it reports where it stands (so the store trims
    /// the change log behind every live replica), and how long unreported replicas and old changes are kept.
    public struct FollowerTiming: Sendable {
        public var poll: Double = 1
        public var report: Double = 10
        public var retention: Double = 7 * 24 * 3600

        public init(poll: Double = 1, report: Double = 10, retention: Double = 7 * 24 * 3600) {
            self.poll = poll
            self.report = report
            self.retention = retention
        }
    }

    /// Starts following the store's change feed on a thread of its own, under the replica name `name` (unique per
    /// server: the store trims its log behind every name it has seen lately). Does nothing for a store without a feed
    /// or when already following.
    public func startFollowing(as name: String, timing: FollowerTiming = FollowerTiming(), log: @escaping @Sendable (String) -> Void = { _ in }) {
        guard let replication else { return }
        let start = replication.control.withLock { control -> Bool in
            if control.running { return false }
            control = (true, false)
            return true
        }
        guard start else { return }
        let thread = Thread.named("poi-follower") { [self] in
            var lastReport = Date.distantPast
            var wasConnected = true
            var first = true
            while !replication.stopping {
                // The first round reads the feed at once (which opens the listening connection), then each waits for
                // a wake-up or the poll interval.
                if !first {
                    if replication.current.connected {
                        replication.feed.waitForChange(after: replication.current.applied, timeout: timing.poll)
                    } else {
                        // The store was unreachable: try again after the poll interval, not at once because a
                        // wake-up announced a change (that would hold the writer lock back to back, and writes
                        // queued for it would wait out every attempt).
                        Thread.sleep(forTimeInterval: timing.poll)
                    }
                    if replication.stopping { break }
                }
                first = false
                catchUp(log: log)
                let now = replication.current
                if now.connected != wasConnected {
                    log(now.connected ? "store reachable again; caught up at change \(now.applied)" : "store unreachable: \(now.lastError ?? "")")
                    wasConnected = now.connected
                }
                if now.connected && Date().timeIntervalSince(lastReport) >= timing.report {
                    lastReport = Date()
                    let snapshot = snapshotStatus.withLock { $0.written?.sequence }
                    do throws(CatalogError) {
                        try replication.feed.report(replica: name, applied: now.applied, snapshot: snapshotPolicy == nil ? nil : snapshot ?? 0)
                        try replication.feed.trim(retention: timing.retention)
                    } catch {
                        replication.failed(error)
                    }
                }
            }
            replication.control.withLock { $0.running = false }
        }
        thread.start()
    }

    /// Stops the follower thread and waits for it (graceful shutdown, tests).
    public func stopFollowing() {
        guard let replication else { return }
        replication.control.withLock { $0.stop = true }
        while replication.control.withLock({ $0.running }) { usleep(2_000) }
        replication.control.withLock { $0.stop = false }
    }

    /// Applies every change the store committed after the state's sequence (or reloads everything when the log no
    /// longer reaches back that far). Runs under `writer`, so local writes and applied changes keep one order.
    public func catchUp(log: (String) -> Void = { _ in }) {
        writer.lock()
        defer { writer.unlock() }
        catchUpHoldingWriter(log: log)
    }

    /// `catchUp` for a caller that holds `writer`; answers why it could not (nil: caught up).
    @discardableResult
    func catchUpHoldingWriter(log: (String) -> Void = { _ in }) -> CatalogError? {
        guard let replication, let store else { return nil }
        guard let applied = read({ $0.sequence }) else { return nil }
        do throws(CatalogError) {
            do {
                let changes = try replication.feed.changes(after: applied.sequence)
                if changes.sequence != applied || !changes.isEmpty {
                    // Writes other servers made reach this server's fences too (docs/ARCHITECTURE.md, "Live areas"),
                    // unless the fences are shared: then the server that made a write made its events.
                    let watching = fences.map { !$0.isEmpty && $0.shared == nil } ?? false
                    var transitions: [RecordTransition] = []
                    write { state in
                        if watching { transitions = Self.transitions(of: changes, in: state) }
                        state.apply(changes)
                    }
                    if !transitions.isEmpty, let fences {
                        do { try fences.record(transitions, at: nextTimestamp()) } catch { fenceFailures.add(1, ordering: .relaxed) }
                    }
                }
                // Another server replaced the addresses (an OpenStreetMap import): a write of its own in the sequence,
                // so looked for only when the sequence moved — or when the last catch-up applied the records but did
                // not finish (the addresses' load failed: a deadline on a loaded store), which `caughtUp` marks.
                if changes.sequence != applied || replication.status.withLock({ $0.applied }) != changes.sequence.sequence {
                    try followAddresses(store, log: log)
                }
                replication.caughtUp(at: changes.sequence.sequence)
            } catch {
                guard error.requiresReload else { throw error }
                log("\(error.description): reloading every record from the store")
                let fresh = try SearchEngine.load(store)
                write { $0 = fresh }
                replication.status.withLock { $0.reloads += 1 }
                // The addresses may have been replaced among the changes no longer in the log: looked for here, as
                // after any move of the sequence (a failed load leaves `caughtUp` unmarked, so the next tries again).
                try followAddresses(store, log: log)
                replication.caughtUp(at: fresh.sequence!.sequence)
                ResidentMemory.returnFreedHeap()
            }
        } catch {
            replication.failed(error)
            return error
        }
        snapshotIfDue()
        return nil
    }
}

extension SearchEngine {
    /// What the changes from the feed do to each record, as the state has it before them: a record the state already
    /// has as the change leaves it (this server's own write, applied when it was made and read back from the feed) is
    /// no transition, so its fence events are not made twice.
    static func transitions(of changes: ChangeSet, in state: EngineState) -> [RecordTransition] {
        var transitions: [RecordTransition] = []
        for record in changes.records {
            switch record {
            case .poi(let poi):
                let before = state.record(.poi, id: poi.id)
                if case .poi(let old) = before, old == poi { continue }
                transitions.append(RecordTransition(before: before, after: .poi(poi)))
            case .pin(let pin):
                let before = state.record(.pin, id: pin.id)
                if case .pin(let old) = before, old == pin { continue }
                transitions.append(RecordTransition(before: before, after: .pin(pin)))
            }
        }
        for (kind, id) in changes.deleted {
            if let before = state.record(kind, id: id) { transitions.append(RecordTransition(before: before, after: nil)) }
        }
        return transitions
    }

    /// Loads the store's addresses again when their generation is not the one the index was built from, and swaps the
    /// rebuilt index in (reads go on against the old one meanwhile; the writer lock is held, so writes wait).
    func followAddresses(_ store: any StoreOfRecord, log: (String) -> Void) throws(CatalogError) {
        guard store.keepsAddresses, let generation = try store.addressGeneration(), generation != addressGenerationSeen.withLock({ $0 }) else {
            return
        }
        let started = ContinuousClock.now
        var index = AddressIndex(try store.loadAddresses())
        if let policy = snapshotPolicy { index = Self.keepSnapshot(of: index, at: policy.addressPath, generation: generation).index }
        replaceImportedAddresses(AddressLayer(base: index, generation: generation))
        addressGenerationSeen.withLock { $0 = generation }
        // A change file written to the shared store brings its sequence and time with the addresses.
        loadOSMStatus()
        log("addresses replaced in the store: \(index.houseCount) houses loaded again in \(ContinuousClock.now - started)")
    }
}

extension EngineState {
    /// Brings the state to the change set's sequence: every changed record as the store has it now, every deleted
    /// one gone. Records already as the store has them (this server's own writes) are left alone.
    mutating func apply(_ changes: ChangeSet) {
        for record in changes.records {
            switch record {
            case .poi(let poi):
                if let number = poiNumber(poi.id), case .poi(let old)? = self.record(Int(number)), old == poi { continue }
                _ = put(.poi(poi))
            case .pin(let pin):
                if let number = pinNumbers[pin.id], case .pin(let old)? = self.record(Int(number)), old == pin { continue }
                _ = put(.pin(pin))
            }
        }
        for (kind, id) in changes.deleted { _ = delete(kind, id: id) }
        sequence = changes.sequence
    }
}
