import Catalog
import Datasets
import Foundation
import OSM
import Parallelism
import Records
import SearchEngine
import Synchronization

/// `poi serve --replicate FEED`: a thread that looks at an OpenStreetMap replication feed every `interval` seconds and
/// applies each new change file to the running server (`SearchEngine.applyOSMChange`): one store transaction a file,
/// then the POIs and the rebuilt address index swapped in, while reads go on against what was there before. A feed
/// that cannot be reached, or a change that cannot be applied, is retried at the next look; the server's status says
/// so (`/health` `osm.lastError`, `poi_osm_change_failures`).
///
/// Over a shared PostgreSQL store (`poi serve --store URL --replicate FEED --mirror FILE`) the extract's working copy is
/// a SQLite database, `mirror`: each file is applied to it and what it makes written to the store in the same step
/// (`OSMImporter.apply(…alsoTo:)`), and this server and every replica take it from the store's change feed. One
/// server (or one `poi replicate --store`) follows a feed for a store.
public final class OSMFollower: Sendable {
    let engine: SearchEngine
    let importer: OSMImporter
    let mirror: CatalogStore?
    let replicator: Replicator
    let interval: Double
    let log: @Sendable (String) -> Void
    private let stopped = Atomic<Bool>(false)
    private let wake = NSCondition()
    /// Signalled by the thread as it ends; `running` says whether it was started.
    private let ended = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)

    /// - Throws: `OSMChangeError` when the store holds no OpenStreetMap import or its sequence is unknown.
    public init(
        engine: SearchEngine,
        importer: OSMImporter,
        source: String,
        interval: Double,
        mirror: CatalogStore? = nil,
        log: @escaping @Sendable (String) -> Void
    ) throws {
        engine.loadOSMStatus()
        if mirror != nil, !engine.followsStore {
            throw OSMChangeError(file: source, line: nil, reason: "a working copy (--mirror) goes with a shared store (--store)")
        }
        // The data's sequence: nil when there is no import, .some(nil) when the extract did not say.
        let known: Int??
        if let mirror { known = try mirror.osmMirrorState().map(\.sequence) } else { known = engine.osmStatus.map(\.sequence) }
        guard let sequence = known else {
            throw OSMChangeError(
                file: source,
                line: nil,
                reason: "\(mirror?.location ?? "the store") holds no OpenStreetMap import to keep current (import the extract's .osm.pbf first)"
            )
        }
        guard sequence != nil else {
            throw OSMChangeError(
                file: source,
                line: nil,
                reason: "the data's replication sequence is unknown (the extract does not say): set it with poi replicate --from N --once"
            )
        }
        (self.engine, self.importer, self.mirror, self.interval, self.log) = (engine, importer, mirror, interval, log)
        replicator = Replicator(source: ReplicationSource(source))
        engine.updateOSMStatus { $0.source = source }
    }

    public func start() {
        engine.updateOSMStatus { $0.following = true }
        running.store(true, ordering: .releasing)
        let thread = Thread.named("osm-replication") { [self] in
            // At nice 19, as the background snapshot: readers first. With wrk -t1 -c4 beside a one-thread
            // probe on 2 cores, the probe's nearby p99 while the 5 M-node feed was applied went from 4.3× idle at
            // nice 0 to 1.35× (benchmarks/RESULTS.md, 2026-12-02 20:40); the files took ~18 % longer.
            SearchEngine.lowerCallingThreadPriority()
            while !stopped.load(ordering: .acquiring) {
                step()
                wake.lock()
                if !stopped.load(ordering: .acquiring) { _ = wake.wait(until: Date().addingTimeInterval(interval)) }
                wake.unlock()
            }
            ended.signal()
        }
        thread.start()
    }

    /// Stops following and returns once the thread has ended: a change file being applied is finished first (it is
    /// one transaction).
    public func stop() {
        stopped.store(true, ordering: .releasing)
        wake.lock()
        wake.broadcast()
        wake.unlock()
        if running.exchange(false, ordering: .acquiringAndReleasing) { ended.wait() }
        engine.updateOSMStatus { $0.following = false }
    }

    /// One look at the feed: every change file after the data's sequence, applied in order.
    func step() {
        let source = replicator.source.location
        do {
            // A working copy's sequence is read each time: it is what the files are applied to.
            let sequence: Int?
            if let mirror { sequence = try mirror.osmMirrorState()?.sequence } else { sequence = engine.osmStatus?.sequence }
            guard let current = sequence else { return }
            _ = try replicator.catchUp(from: current) { change, name, state in
                let started = Date()
                let result: OSMChangeResult
                if let mirror {
                    result = try engine.applySharedOSMChange { shared in
                        try importer.apply(
                            change,
                            name: name,
                            to: mirror,
                            sequence: state.sequence,
                            timestamp: state.timestamp,
                            source: source,
                            alsoTo: shared
                        )
                    }
                } else {
                    result = try engine.applyOSMChange { store, addressesMade in
                        try importer.apply(
                            change,
                            name: name,
                            to: store,
                            sequence: state.sequence,
                            timestamp: state.timestamp,
                            source: source,
                            addressesMade: addressesMade
                        )
                    }
                }
                let r = result.report
                let whole = Date().timeIntervalSince(started)
                let builds = engine.addressRebuild.tally
                engine.updateOSMStatus { $0.applied += 1 }
                // The whole step (what readers wait for to see the file), and the store's transaction within it.
                log(
                    "osm: applied \(name) (sequence \(state.sequence)): \(r.nodes) nodes, \(r.ways) ways, \(r.relations) relations, "
                        + "\(r.poisPut) POIs put, \(r.poisRemoved) removed, in \(String(format: "%.3f", whole)) s "
                        + "(the store's transaction \(String(format: "%.3f", r.seconds)) s); data at \(r.timestamp ?? "?"); "
                        + "address index built again in the background \(builds.begun) times, swapped in \(builds.swapped), dropped \(builds.dropped)"
                )
                if stopped.load(ordering: .acquiring) { throw CancellationError() }
            }
            // Caught up: the address index may be built again whole until the next file comes.
            if mirror == nil, engine.beginAddressBuildIfDue() { log("osm: building the address index again in the background") }
            engine.updateOSMStatus {
                $0.lastError = nil
                $0.checkedAt = Date()
            }
        } catch is CancellationError {
            return
        } catch {
            let message = "\(error)"
            engine.updateOSMStatus {
                $0.failures += 1
                $0.lastError = message
                $0.checkedAt = Date()
            }
            log("osm: \(message) (looking again in \(Int(interval)) s)")
        }
    }
}
