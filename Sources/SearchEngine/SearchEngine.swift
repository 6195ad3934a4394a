import Foundation
import Gazetteer
import GeoCore
import Records
import SnapshotFile
import SpatialIndex
import Synchronization
import TextIndex

#if canImport(Glibc)
import Glibc
#endif

/// The one query engine behind the CLI and the HTTP server: records in memory behind spatial and text indexes,
/// durably stored in SQLite.
///
/// Concurrency: all state sits behind one writer-preferring reader-writer lock. Queries run in parallel under the
/// read lock; a write first commits to the store (so an acknowledged write is durable), then updates the in-memory
/// indexes under the write lock, so readers see either the old state or the new one, never a mix. Writes are
/// ordered by one more lock, `writer`: a write makes its checks ("does this pin exist", its createdAt) and queues its
/// changes under it, against the state with the writes still waiting for the store laid over it (`pending`); one
/// write at a time, holding `committer`, then commits every waiting write in one transaction and applies them to
/// the state under `writer` (a group commit: docs/ARCHITECTURE.md, "The walk of a write"). Two writes to one id apply in
/// the same order in the store and in memory, and the check a write makes still holds when it commits. Readers
/// never wait on `writer` or `committer`.
public final class SearchEngine: @unchecked Sendable {
    // SAFETY: @unchecked Sendable because `state` is only read under `lock`'s read side and only mutated under its
    // write side, and `pending` is only used under `writer`.
    var state: EngineState
    let lock = ReadWriteLock()
    let writer = NSLock()
    /// Held by the write that commits the waiting writes, and by a write that must have the store to itself
    /// (`exclusively`). Taken before `writer` when both are.
    let committer = NSLock()
    /// Writes checked and queued, waiting for the commit that takes them.
    var pending = PendingWrites()
    let store: (any StoreOfRecord)?
    /// The follower of a shared store's change feed (nil for a store this process owns).
    let replication: Replication?
    let taxonomy: CategoryTaxonomy
    /// Houses and streets of the last OpenStreetMap import, for address geocoding: read from its snapshot or built
    /// from the store at start-up (`openAddresses`), and replaced whole by an import (`applyOSMImport`); with the
    /// POIs' own houses laid over them, brought up to the state's by a background step after each write
    /// (`AddressShelf`).
    let addressShelf: AddressShelf
    /// Held while a snapshot file is written (`writeSnapshot`).
    let snapshotFileWriter = NSLock()
    /// Reusable per-query visit marks for keyword search.
    let scratchPool = Mutex<[VisitMarks]>([])
    /// Keyword query words as compiled against the state, for the queries that follow.
    let wordCursors = WordCursorCache()
    /// Mandarin readings, to find Chinese names by their pinyin (nil: queries are read only as typed); read from the
    /// data directory on first use (`preparePinyin`, or the first keyword query).
    var pinyin: PinyinDictionary? {
        guard !pinyinOff.load(ordering: .relaxed) else { return nil }
        return pinyinTable.withLock { $0 } ?? PinyinDictionary.bundled
    }
    /// Set by `disablePinyin()`.
    let pinyinOff = Atomic<Bool>(false)
    /// The table read from a data directory named by `preparePinyin(directory:)` (nil: the default directory's).
    let pinyinTable = Mutex<PinyinDictionary?>(nil)
    /// The state's Han terms by reading (`pinyinContext`).
    let pinyinTerms = Mutex(PinyinTerms())
    /// The last server timestamp issued (milliseconds since 1970).
    let clock = Mutex<Int64>(0)
    /// The generation of the store's addresses the address index was built from, on a replica of a shared store.
    let addressGenerationSeen: Mutex<String?>
    /// The whole address index built again in the background while change files keep coming (`applyOSMChange`).
    public let addressRebuild = AddressRebuild()
    /// Where the OpenStreetMap data stands (`OSMDataStatus`); nil when the store holds no OpenStreetMap import.
    let osmData = Mutex<OSMDataStatus?>(nil)
    /// Runs between a write's commit and its index update: tests widen that window to check that writes stay ordered.
    var afterCommit: (@Sendable () -> Void)?
    /// Forces a planner route in tests (nil: choose by cost).
    public var forcedRoute: Route?
    /// The live areas whose events writes make (`poi serve` sets it before serving); nil: none.
    public var fences: FenceBook?
    /// Writes whose fence events could not be stored (`/metrics`).
    public let fenceFailures = Atomic<Int>(0)

    public enum Route: Sendable { case spatialFirst, textFirst }

    /// Where the engine keeps its snapshot and when it writes one.
    public struct SnapshotPolicy: Sendable {
        public var path: String
        /// Write a new snapshot in the background once the store has moved this many write transactions past the last
        /// one (0: only when `writeSnapshot()` is called).
        public var every: Int
        /// A background snapshot is not started until this many times as long as the last one took (writing it and
        /// mapping it back) has passed since it ended, however many transactions are due: background snapshots then
        /// take at most 1 ÷ (1 + pause) of the time. Each is also followed by a stall of the first writes after it,
        /// which copy the arrays they change out of the mapping. At 1 M POIs under ~6 000 writes a second, a
        /// snapshot every 10 000 transactions came every ~2 s, and the writes' p99 was 160–176 ms against 22 ms
        /// without (RESULTS.md, issue 59).
        public var pause: Double

        public init(path: String, every: Int = 10_000, pause: Double = 9) {
            (self.path, self.every, self.pause) = (path, every, pause)
        }

        /// The address index's snapshot, beside the engine's.
        public var addressPath: String { path + ".addresses" }

        /// The snapshot beside a database file.
        public static func beside(database path: String, every: Int = 10_000) -> SnapshotPolicy {
            SnapshotPolicy(path: path + ".snapshot", every: every)
        }
    }

    /// How the in-memory state was made at start-up.
    public enum Startup: Sendable, Equatable, CustomStringConvertible {
        /// Read from the snapshot file.
        case snapshot
        /// Read from the snapshot file, then brought up to date from the store's change feed (`changes` records).
        case snapshotAndChanges(Int)
        /// Read from the snapshot file, then brought up to date with the records a change file's writer kept beside it
        /// (`SnapshotChanges`).
        case snapshotAndKeptChanges(Int)
        /// Built from the store's records; `reason` says why the snapshot was not used (nil: no snapshot policy).
        case rebuilt(reason: String?)

        public var description: String {
            switch self {
            case .snapshot: return "read from the snapshot"
            case .snapshotAndChanges(let count): return "read from the snapshot and \(count) changed records from the store's change feed"
            case .snapshotAndKeptChanges(let count): return "read from the snapshot and the \(count) changed records kept beside it"
            case .rebuilt(nil): return "built from the database"
            case .rebuilt(let reason?): return "built from the database (\(reason))"
            }
        }
    }

    public let snapshotPolicy: SnapshotPolicy?
    public let startup: Startup
    /// How the address index was made at start-up (read from its snapshot, or built and why).
    public let addressStartup: String
    /// The sequence of the last snapshot written or read, and whether a background write is running.
    /// The last snapshot written, whether one is being written, and when the next background one may start
    /// (`SnapshotPolicy.pause`).
    let snapshotStatus = Mutex<(written: ChangeSequence?, running: Bool, notBefore: ContinuousClock.Instant?)>((nil, false, nil))

    /// Opens the engine over a store: from the snapshot when the policy names one that matches the store, else by
    /// loading every record (the caller may then `writeSnapshot()`). With a shared store (a change feed), a snapshot
    /// made from the same store at an earlier sequence is used too, brought up to date with the changes after it —
    /// unless the log no longer reaches back that far. Without `addresses`, the store's addresses are not loaded (an
    /// engine opened only to write the snapshot, whose address index is built when a server starts).
    public init(
        store: any StoreOfRecord,
        taxonomy: CategoryTaxonomy,
        snapshot policy: SnapshotPolicy? = nil,
        addresses: Bool = true
    ) throws(SearchError) {
        self.store = store
        self.taxonomy = taxonomy
        snapshotPolicy = policy
        replication = store.feed.map { Replication(feed: $0) }
        do throws(CatalogError) {
            let opened =
                addresses
                ? try SearchEngine.openAddresses(store, snapshot: policy.map(\.addressPath)) : (layer: AddressLayer(base: .empty), how: "not loaded")
            addressShelf = AddressShelf(AddressBook(osm: opened.layer))
            addressStartup = opened.how
            // A replica loads the addresses again when another server replaces them (`catchUpHoldingWriter`).
            addressGenerationSeen = Mutex(addresses && store.feed != nil ? try store.addressGeneration() : nil)
        } catch {
            throw SearchError.from(error)
        }
        var reason: String?
        if let policy {
            let current: ChangeSequence
            do { current = try store.changeSequence() } catch { throw SearchError.from(error) }
            // A writer that serves no query keeps what it committed beside the snapshot, when it brings it to the store.
            let kept = store.feed == nil ? SnapshotChanges.read(beside: policy.path).flatMap { $0.after.changeSequence == current ? $0 : nil } : nil
            do {
                var restored = try EngineState.readSnapshot(from: policy.path) { found in
                    if let kept, found == kept.before.changeSequence { return nil }
                    if let reason = EngineState.staleness(of: found, store: current, followingChanges: store.feed != nil) { return reason }
                    return SearchEngine.tooManyChanges(store, after: found.sequence)
                }
                let snapshotSequence = restored.sequence!
                if let feed = store.feed {
                    let changes = try feed.changes(after: snapshotSequence.sequence)
                    restored.apply(changes)
                    startup = .snapshotAndChanges(changes.records.count + changes.deleted.count)
                } else if let kept, snapshotSequence == kept.before.changeSequence, snapshotSequence != current {
                    kept.apply(to: &restored)
                    startup = .snapshotAndKeptChanges(kept.changes.count)
                } else {
                    startup = .snapshot
                }
                state = restored
                snapshotStatus.withLock { $0.written = snapshotSequence }
                replication?.caughtUp(at: restored.sequence!.sequence)
                markAddresses()
                return
            } catch let error as SnapshotError {
                reason = error.description
            } catch let error as CatalogError {
                if error.requiresReload { reason = error.description } else { throw SearchError.from(error) }
            } catch {
                throw .storage("\(error)")
            }
        }
        do throws(CatalogError) {
            state = try SearchEngine.load(store)
        } catch {
            throw SearchError.from(error)
        }
        replication?.caughtUp(at: state.sequence!.sequence)
        startup = .rebuilt(reason: reason)
        ResidentMemory.returnFreedHeap()
        markAddresses()
    }

    /// Why applying the changes after a snapshot would be slower than building from the store (nil: it would not):
    /// records are applied one by one, so past a fifth of the store (and at least 50 000 records, e.g. a large import
    /// while this server was down) a build from the tables wins. An error asking is left to reading the changes.
    static func tooManyChanges(_ store: any StoreOfRecord, after sequence: UInt64) -> String? {
        guard let feed = store.feed, let changed = try? feed.changedRecordCount(after: sequence), let total = try? store.poiCount() else {
            return nil
        }
        let limit = max(50_000, total / 5)
        return changed > limit ? "\(changed) records changed after it, more than \(limit): building from the store is faster" : nil
    }

    /// Every record of the store, indexed.
    static func load(_ store: any StoreOfRecord) throws(CatalogError) -> EngineState {
        var loader = EngineState.Loader(expected: try store.poiCount())
        let rest = try store.loadAll(blockSize: EngineState.Loader.blockSize) { loader.add($0[...]) }
        var state = loader.finish(pins: rest.pins)
        state.sequence = rest.sequence
        return state
    }

    /// An engine over records in memory only (no persistence): for tests and benchmarks.
    public init(pois: [POIRecord], pins: [PinRecord] = [], addresses: AddressData = AddressData(), taxonomy: CategoryTaxonomy) {
        self.store = nil
        addressShelf = AddressShelf(AddressBook(base: AddressIndex(addresses)))
        addressStartup = "built from the records given"
        addressGenerationSeen = Mutex(nil)
        self.taxonomy = taxonomy
        snapshotPolicy = nil
        replication = nil
        startup = .rebuilt(reason: nil)
        state = EngineState(pois: pois, pins: pins)
        settleAddresses()
    }

    /// An engine over a given state, without a store (tests of the snapshot).
    init(state: EngineState, taxonomy: CategoryTaxonomy) {
        store = nil
        addressShelf = AddressShelf(AddressBook.empty)
        addressStartup = "not loaded"
        addressGenerationSeen = Mutex(nil)
        self.taxonomy = taxonomy
        snapshotPolicy = nil
        replication = nil
        startup = .snapshot
        self.state = state
    }

    /// Runs `body` on the state under the read lock. The state is lent `inout` only so that it is not copied: passed
    /// by value, the ~60 reference-counted arrays inside it were retained and released for every query (4–5 % of a
    /// nearby request, on counters both event loops share). `body` must not mutate it (readers run in parallel);
    /// it must not call `read` or `write` either.
    func read<T, E: Error>(_ body: (inout EngineState) throws(E) -> T) throws(E) -> T {
        lock.lockRead()
        defer { lock.unlock() }
        return try body(&state)
    }

    /// Runs `body` on the state under the write lock; when it changed the POIs' houses, the address step is asked to
    /// index them once the lock is let go (`markAddresses`).
    func write<T, E: Error>(_ body: (inout EngineState) throws(E) -> T) throws(E) -> T {
        lock.lockWrite()
        // Words compiled against the state hold its posting lists: let go of them first, so that the write changes
        // lists only it holds instead of copying them.
        wordCursors.removeAll()
        let houses = AddressShelf.Mark(state.recordHouses)
        var moved = false
        defer {
            state.generation = EngineState.newGeneration()
            moved = AddressShelf.Mark(state.recordHouses) != houses
            lock.unlock()
            if moved { markAddresses() }
        }
        return try body(&state)
    }

    /// The addresses reads answer from: the imported ones with the POIs' houses laid over them, as the last
    /// background step indexed them (an immutable value: a query keeps the one it started with). Never built here: a
    /// write marks the houses it changed and `AddressShelf` indexes them after it, so until that step ends a read
    /// sees the houses as they were before the write (`addressesSettled()` waits for it).
    public var addresses: AddressBook { addressShelf.book }

    /// Returns once `addresses` holds every house written before the call (the HTTP POI writes wait for this before
    /// they answer, so a client reads its own write).
    public func addressesSettled() async { await addressShelf.settled(through: AddressShelf.Mark(read { $0.recordHouses })) }

    /// Indexes the POIs' houses now, on the caller's thread, if a write changed them: for a process that opens the
    /// engine to answer once (the CLI), and for tests.
    public func settleAddresses() { addressShelf.settleNow(read { $0.recordHouses }) }

    /// Asks the background step to index the houses the last write changed.
    func markAddresses() {
        addressShelf.mark { [weak self] in self?.read { $0.recordHouses } ?? RecordHouses() }
    }

    /// Replaces the imported addresses under the POIs' houses.
    func replaceImportedAddresses(_ imported: AddressLayer) { addressShelf.replaceImported(imported, records: read { $0.recordHouses }) }

    /// Record counts by kind.
    public var counts: (pois: Int, pins: Int) { read { ($0.poiIDs.count, $0.pinNumbers.count) } }

    // MARK: Filters

    /// The per-record test of a query's category and keyword filters (kind is handled by choosing the index).
    ///
    /// Compiled once per query: category tests become a lookup by the record's category code, and each query word
    /// a binary search in its expansions' posting lists, so a record costs no string comparison.
    func filter(_ s: EngineState, categories: [String], matcher: TextMatcher?) -> ((UInt32) -> Bool)? {
        if categories.isEmpty && matcher == nil { return nil }
        let meta = s.meta
        let allowed = categories.isEmpty ? nil : s.categoryNames.map { categories.admits($0) }
        // The words as typed and, for a query read as pinyin, each reading: a record matching any of them passes.
        let alternatives = (matcher?.alternatives ?? [[]]).map { groups in
            groups.map { group in
                WordFilter(
                    lists: group.expansions.map { s.text.postings(of: $0.term) },
                    labelled: group.categories.isEmpty ? [] : s.categoryNames.map { name in group.categories.contains { name.isCategory(under: $0) } }
                )
            }.sorted { $0.postingCount < $1.postingCount }  // the rarest word first: most records fail there
        }
        if allowed == nil && alternatives.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.labelled.isEmpty } }) {
            // Postings hold live records only: a record in every word's postings is live, and its facts (a cache miss
            // per visited record) are not read.
            if alternatives.count == 1 {
                let words = alternatives[0]
                return { number in words.allSatisfy { $0.inPostings(number) } }
            }
            return { number in alternatives.contains { words in words.allSatisfy { $0.inPostings(number) } } }
        }
        return { number in
            let record = meta[Int(number)]
            guard record.live else { return false }
            let code = Int(record.category)
            if let allowed, !(code < allowed.count && allowed[code]) { return false }
            return alternatives.contains { words in words.allSatisfy { $0.matches(number, category: code) } }
        }
    }

    /// Records satisfying every group, in record order, without scoring: the group with the fewest postings gives the
    /// candidates (its sorted lists and label members merged), and each other group is tested per candidate — a binary
    /// search in its lists or its label table — so a group with large lists (a one-letter word's completions) is
    /// never merged.
    func matchingRecords(_ s: EngineState, _ matcher: TextMatcher) -> [UInt32] {
        // The words as typed, and any reading as pinyin: their records merged.
        matcher.alternatives.map { matchingRecords(s, $0) }.reduce([], KeywordRanker.merge)
    }

    private func matchingRecords(_ s: EngineState, _ alternative: [TextMatcher.Group]) -> [UInt32] {
        let groups = alternative.map { group in
            (
                lists: group.expansions.map { s.text.postings(of: $0.term) }, members: s.members(ofCategoriesUnder: group.categories),
                categories: group.categories
            )
        }
        func size(_ g: Int) -> Int { groups[g].lists.reduce(0) { $0 + $1.count } + groups[g].members.reduce(0) { $0 + $1.count } }
        guard let first = groups.indices.min(by: { size($0) < size($1) }) else { return [] }
        var candidates = (groups[first].lists.map { $0.map(\.doc) } + groups[first].members).reduce([], KeywordRanker.merge)
        let others = groups.indices.filter { $0 != first }.map { g in
            WordFilter(
                lists: groups[g].lists,
                labelled: groups[g].categories.isEmpty
                    ? [] : s.categoryNames.map { name in groups[g].categories.contains { name.isCategory(under: $0) } }
            )
        }.sorted { $0.postingCount < $1.postingCount }
        if !others.isEmpty {
            candidates.removeAll { doc in !others.allSatisfy { $0.matches(doc, category: Int(s.meta[Int(doc)].category)) } }
        }
        return candidates
    }

    /// Estimated number of text candidates: the smallest group's posting and category sizes.
    func estimatedCandidates(_ s: EngineState, _ matcher: TextMatcher) -> Int {
        matcher.alternatives.reduce(0) { sum, groups in
            sum
                + (groups.map { group in
                    group.expansions.reduce(0) { $0 + s.text.documentFrequency($1.term) }
                        + s.members(ofCategoriesUnder: group.categories).reduce(0) { $0 + $1.count }
                }.min() ?? 0)
        }
    }

    func hit(_ s: EngineState, _ number: UInt32, distance: Double?, score: Double?) -> Hit? {
        if let packed = s.packed(Int(number)) { return Hit(storage: .packed(packed), distance: distance, score: score) }
        return s.record(Int(number)).map { Hit(storage: .record($0), distance: distance, score: score) }
    }

    /// The hits of `numbers` with their distances, in order, made into an array reserved once: built by
    /// `compactMap`, it grew three times per answer (issue 17, `poi bench wire`).
    func hits(_ s: EngineState, _ neighbors: ArraySlice<Neighbor>) -> [Hit] {
        var results: [Hit] = []
        results.reserveCapacity(neighbors.count)
        for neighbor in neighbors {
            if let hit = hit(s, neighbor.id, distance: neighbor.distance, score: nil) { results.append(hit) }
        }
        return results
    }

    /// The hits of `numbers`, in order, without distances.
    func hits(_ s: EngineState, _ numbers: ArraySlice<UInt32>) -> [Hit] {
        var results: [Hit] = []
        results.reserveCapacity(numbers.count)
        for number in numbers {
            if let hit = hit(s, number, distance: nil, score: nil) { results.append(hit) }
        }
        return results
    }

    static func kinds(_ filter: KindFilter) -> [RecordKind] {
        switch filter {
        case .poi: return [.poi]
        case .pin: return [.pin]
        case .all: return [.poi, .pin]
        }
    }
}

/// A per-record mark for one keyword query (records already visited), reset only where set.
struct VisitMarks: Sendable {
    var marks: [Bool] = []
    var touched: [UInt32] = []

    mutating func ensure(count: Int) {
        if marks.count < count { marks += repeatElement(false, count: count - marks.count) }
    }

    /// Marks a record; false when it was marked already.
    @inline(__always)
    mutating func visit(_ doc: UInt32) -> Bool {
        if marks[Int(doc)] { return false }
        marks[Int(doc)] = true
        touched.append(doc)
        return true
    }

    mutating func reset() {
        for doc in touched { marks[Int(doc)] = false }
        touched.removeAll(keepingCapacity: true)
    }
}

/// One query word as a record test: its expansions' posting lists and, per category code, whether the word labels it.
struct WordFilter {
    let lists: [FlatArray<InvertedIndex.Posting>]
    let labelled: [Bool]

    @inline(__always)
    func matches(_ number: UInt32, category code: Int) -> Bool {
        (code < labelled.count && labelled[code]) || inPostings(number)
    }

    var postingCount: Int { lists.reduce(0) { $0 + $1.count } }

    @inline(__always)
    func inPostings(_ number: UInt32) -> Bool {
        for list in lists {
            let i = InvertedIndex.lowerBound(list, number)
            if i < list.count && list[i].doc == number { return true }
        }
        return false
    }
}
