import Foundation
import Gazetteer
import Parallelism
import Records
import SnapshotFile
import Synchronization

/// The whole address index built again on a thread of its own between change files (docs/ARCHITECTURE.md,
/// "OpenStreetMap that stays current").
///
/// A change file's layer costs the objects changed since its lower level was made, and every few files that level is
/// made again from every change since the base (`AddressLayer.adding`), so a file's step still grows with the layer;
/// and at the layer's limit the whole index is built again in the file's step (~2 s for 2.35 M houses on idle
/// cores, ~10 s under read load). When a followed feed has no next file yet and the layer has passed `trigger`, the
/// whole index is built from it (`AddressLayer.whole`) on a thread under the kernel's idle policy (any thread of the
/// server preempts it), and its snapshot written beside the live one. Files that come meanwhile are laid over the old
/// base as before; the first after it is done lays the files since it began over the new base instead — a layer of a
/// few files — and the new snapshot takes the old one's place. A file whose layer passes the limit first drops the
/// build and builds the whole itself.
///
/// Used under the engine's writer lock: not for calls from several threads at once.
public final class AddressRebuild: Sendable {
    /// One change file's addresses, as `AddressChanges.add` takes them.
    struct Delta: Sendable {
        var changed: Set<String>
        var made: AddressData
        var sea: [MapArea]?
        var generation: String

        init(_ result: OSMChangeResult) {
            (changed, made, sea, generation) = (result.changedObjects, result.made, result.sea, result.addressGeneration)
        }
    }

    /// The index being built, and the files laid over the old base since it started.
    final class Flight: Sendable {
        /// The base of the layer it is built from: a layer over another base (an import replaced the addresses) makes
        /// it stale.
        let from: AddressIndex
        /// The store's address generation the new index is of.
        let generation: String
        let work: Background<Built>
        let pending: Mutex<[Delta]> = Mutex([])
        /// Set when the build is dropped: it stops at its next step, before writing a snapshot nobody will map.
        let dropped: Flag

        final class Flag: Sendable {
            let value = Atomic<Bool>(false)
        }

        init(from layer: AddressLayer, snapshot path: String?) {
            (from, generation) = (layer.base, layer.changes.generation)
            let generation = generation
            let dropped = Flag()
            self.dropped = dropped
            work = Background(named: "poi-addr-build") {
                // Idle, not only nice 19: the event loop runs under the batch policy and does not preempt a nice-19
                // thread when it wakes, so a build at nice 19 held answers for its time slices (nearby p99 of the
                // one-thread probe 3.9 ms against 0.43 while a feed was applied).
                if !Thread.idleCallingThread() { SearchEngine.lowerCallingThreadPriority() }
                let whole = layer.whole
                guard !dropped.value.load(ordering: .relaxed) else { return Built(index: .empty, file: nil) }
                let index = AddressIndex(whole)
                guard let path, !dropped.value.load(ordering: .relaxed) else { return Built(index: index, file: nil) }
                // Written beside the live snapshot, which keeps describing the base the changes file lies over until the
                // swap renames this one into its place.
                let file = "\(path).next-\(layer.serial)"
                do {
                    try index.writeSnapshot(to: file, generation: generation)
                    let mapped = try AddressIndex.readSnapshot(file, generation: generation)
                    return Built(index: mapped, file: file)
                } catch {
                    try? FileManager.default.removeItem(atPath: file)
                    return Built(index: index, file: nil)
                }
            }
        }

        /// Lets the build finish unused, and removes its snapshot then.
        func drop() {
            dropped.value.store(true, ordering: .relaxed)
            let work = work
            Thread.named("poi-addr-drop") {
                if let file = try? work.value().file { try? FileManager.default.removeItem(atPath: file) }
            }
            .start()
        }
    }

    /// The built index, mapped from its snapshot `file` when one could be written (nil: on the heap).
    struct Built: Sendable {
        var index: AddressIndex
        var file: String?
    }

    private let flight = Mutex<Flight?>(nil)
    /// Builds begun, swapped in, and dropped by a file that found its layer past the limit first (the follower's log
    /// says them).
    private let counts = Mutex((begun: 0, swapped: 0, dropped: 0))
    /// The layer's size past which a build is begun, and past which the whole index is built at once.
    private let trigger: @Sendable (AddressIndex) -> Int
    private let limit: @Sendable (AddressIndex) -> Int

    /// - Parameters:
    ///   - trigger: the layer's size over a base past which a build of the whole is begun;
    ///   - limit: the layer's size over a base past which the caller builds the whole index at once, dropping a build
    ///     in flight that is not done (`AddressLayer.limit`).
    public init(
        trigger: @escaping @Sendable (AddressIndex) -> Int = { AddressRebuild.trigger(over: $0) },
        limit: @escaping @Sendable (AddressIndex) -> Int = { AddressLayer.limit(over: $0) }
    ) {
        (self.trigger, self.limit) = (trigger, limit)
    }

    /// How many builds were begun, swapped in, and dropped unfinished by a file past the limit.
    public var tally: (begun: Int, swapped: Int, dropped: Int) { counts.withLock { $0 } }

    /// The layer passes which a build of the whole is begun: a quarter of its limit (`AddressLayer.limit`).
    public static func trigger(over base: some AddressBase) -> Int { AddressLayer.limit(over: base) / 4 }

    /// The imported addresses after a change file (`SearchEngine.layAddresses`): over the new base when a build
    /// begun earlier (`beginIfDue`) is done, else over `current`'s base. Nil when no layer can be made (the base is not in object order, or the layer passes its limit, when a build not done is
    /// dropped): the caller builds the whole index itself.
    ///
    /// `ahead`, when it was begun over `current` with this file's addresses, is the layer `current.adding` makes of
    /// them, laid while the store's transaction ran.
    func lay(_ result: OSMChangeResult, over current: AddressLayer, snapshot path: String?, ahead: AddressLayerAhead? = nil) -> AddressLayer? {
        let delta = Delta(result)
        let made = ahead?.layer(over: current, generation: delta.generation)
        var inFlight = flight.withLock { $0 }
        if let stale = inFlight, stale.from !== current.base {
            stale.drop()
            flight.withLock { $0 = nil }
            inFlight = nil
        }
        if let inFlight {
            if inFlight.work.isFinished { return swap(inFlight, adding: delta, snapshot: path) }
            if let layer = made ?? Self.layer(adding: delta, over: current), layer.size <= limit(current.base) {
                inFlight.pending.withLock { $0.append(delta) }
                Self.keepChanges(of: layer, beside: path)
                return layer
            }
            if inFlight.work.isFinished { return swap(inFlight, adding: delta, snapshot: path) }
            // Past the limit with the build not done, the file is not held for it: the build is dropped and the caller
            // builds the whole index now, as without one. Under the idle policy on cores kept busy, a build can take
            // many files' time (a file that waited for one took 15–21 s where building the whole took 9 s:
            // RESULTS.md, "The address index built again in the background").
            inFlight.drop()
            flight.withLock { $0 = nil }
            counts.withLock { $0.dropped += 1 }
            return nil
        }
        guard let layer = made ?? Self.layer(adding: delta, over: current), layer.size <= limit(current.base) else { return nil }
        Self.keepChanges(of: layer, beside: path)
        return layer
    }

    /// Waits for a build in flight over `current`'s base and swaps it in with the files since laid over it, for a writer
    /// that will lay no more files and wants the newest base now (the tests); `current` when none is in flight.
    func finish(over current: AddressLayer, snapshot path: String?) -> AddressLayer {
        guard let inFlight = flight.withLock({ $0 }) else { return current }
        guard inFlight.from === current.base, !inFlight.pending.withLock(\.isEmpty) else {
            inFlight.drop()
            flight.withLock { $0 = nil }
            return current
        }
        return swap(inFlight, adding: nil, snapshot: path) ?? current
    }

    /// The new base with the files since its build began laid over it; its snapshot in the live one's place.
    private func swap(_ inFlight: Flight, adding delta: Delta?, snapshot path: String?) -> AddressLayer? {
        flight.withLock { $0 = nil }
        if let delta { inFlight.pending.withLock { $0.append(delta) } }
        guard let built = try? inFlight.work.value() else { return nil }
        var changes = AddressChanges(baseGeneration: inFlight.generation)
        for delta in inFlight.pending.withLock({ $0 }) {
            changes.add(changed: delta.changed, made: delta.made, sea: delta.sea, generation: delta.generation, over: built.index)
        }
        // Not held to the limit: the files since the build began are laid over a base that holds every one before
        // them; the next file past the limit builds the whole itself (`lay`).
        guard let layer = AddressLayer(base: built.index, changes: changes) else {
            if let file = built.file { try? FileManager.default.removeItem(atPath: file) }
            return nil
        }
        if let path {
            // The old changes first: a stop between the two leaves a snapshot of the new base and no changes beside
            // it, which the next start sees is behind the store (and builds the index from it), never a mismatch.
            try? FileManager.default.removeItem(atPath: SearchEngine.changesPath(path))
            if let file = built.file {
                if rename(file, path) != 0 { try? FileManager.default.removeItem(atPath: file) }
                Self.keepChanges(of: layer, beside: path)
            }
        }
        counts.withLock { $0.swapped += 1 }
        return layer
    }

    /// Begins a build of the whole from `layer` when it has passed `trigger` and none is in flight. Called when the
    /// writer has nothing more to apply (a followed feed caught up), so that the build takes the time between files:
    /// begun while files came back to back, it took what their application needed and was dropped at the limit
    /// unfinished (RESULTS.md, "The address index built again in the background").
    /// - Returns: whether a build was begun.
    @discardableResult public func beginIfDue(over layer: AddressLayer, snapshot path: String?) -> Bool {
        guard !layer.changes.isEmpty, layer.size > trigger(layer.base) else { return false }
        let begun = flight.withLock { flight -> Bool in
            if let flight, flight.from === layer.base { return false }
            if let stale = flight {
                stale.drop()
            } else if let path {
                // A build's snapshot left by a process stopped before it was swapped in (each is the size of the index).
                let url = URL(fileURLWithPath: path)
                let prefix = url.lastPathComponent + ".next-"
                let directory = url.deletingLastPathComponent()
                for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where name.hasPrefix(prefix) {
                    try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
                }
            }
            flight = Flight(from: layer, snapshot: path)
            return true
        }
        if begun { counts.withLock { $0.begun += 1 } }
        return begun
    }

    /// `current` with one more file laid over it, in two levels while the files since the lower one are few
    /// (`AddressLayer.adding`; nil: the base is not in object order).
    fileprivate static func layer(adding delta: Delta, over current: AddressLayer) -> AddressLayer? {
        current.adding(changed: delta.changed, made: delta.made, sea: delta.sea, generation: delta.generation)
    }

    /// Writes the layer's changes beside the snapshot at `path`: the next start maps the base and lays them over it.
    /// Without them it builds the index from the store: slower, not wrong.
    private static func keepChanges(of layer: AddressLayer, beside path: String?) {
        guard let path else { return }
        let changesPath = SearchEngine.changesPath(path)
        do { try layer.changes.write(to: changesPath) } catch { try? FileManager.default.removeItem(atPath: changesPath) }
    }
}

/// A change file's layer laid over the address index on a thread of its own while the store's transaction writes the
/// file (`OSMImporter.apply(…addressesMade:)`): the step then costs the longer of the two, not their sum, when a core
/// is free (docs/ARCHITECTURE.md, "OpenStreetMap that stays current"). Nothing of it is seen or kept before the
/// transaction has committed: `AddressRebuild.lay` takes it then, and a transaction that fails leaves it unused.
public final class AddressLayerAhead: Sendable {
    let over: AddressLayer
    let generation: String
    let work: Background<AddressLayer?>

    /// Begins laying `early`'s addresses (`changedObjects`, `made`, `sea`, `addressGeneration`) over `current`.
    public init(over current: AddressLayer, _ early: OSMChangeResult) {
        let delta = AddressRebuild.Delta(early)
        (over, generation) = (current, delta.generation)
        work = Background(named: "poi-addr-layer") {
            // As the writer that asked for it (a followed feed's thread runs at nice 19): readers first.
            SearchEngine.lowerCallingThreadPriority()
            return AddressRebuild.layer(adding: delta, over: current)
        }
    }

    /// The layer, when it was begun over `current` with the file of that generation (nil otherwise, or when the
    /// base is not in object order).
    func layer(over current: AddressLayer, generation: String) -> AddressLayer? {
        guard over === current, self.generation == generation else { return nil }
        return (try? work.value()) ?? nil
    }
}
