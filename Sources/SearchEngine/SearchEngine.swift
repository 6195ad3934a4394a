import Catalog
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import GeoCore
import SpatialIndex
import TextIndex

/// The one query engine behind the CLI and the HTTP server: records in memory behind spatial and text indexes,
/// durably stored in SQLite.
///
/// Concurrency: all state sits behind one writer-preferring reader-writer lock. Queries run in parallel under the
/// read lock; a write first commits to SQLite (so an acknowledged write is durable), then updates the in-memory
/// indexes under the write lock, so readers see either the old state or the new one, never a mix.
public final class SearchEngine: @unchecked Sendable {
    // SAFETY: @unchecked Sendable because `state` is only read under `lock`'s read side and only mutated under its
    // write side.
    var state: EngineState
    let lock = ReadWriteLock()
    let store: CatalogStore?
    let taxonomy: CategoryTaxonomy
    /// Reusable per-query score buffers for keyword search.
    let scratchPool = Mutex<[ScoreScratch]>([])
    /// The last server timestamp issued (milliseconds since 1970).
    let clock = Mutex<Int64>(0)
    /// Forces a planner route in tests (nil: choose by cost).
    public var forcedRoute: Route?

    public enum Route: Sendable { case spatialFirst, textFirst }

    /// Opens the engine over a store, loading every record.
    public init(store: CatalogStore, taxonomy: CategoryTaxonomy) throws(SearchError) {
        self.store = store
        self.taxonomy = taxonomy
        do {
            var loader = EngineState.Loader(expected: try store.poiCount())
            try store.forEachPOIBlock(size: EngineState.Loader.blockSize) { loader.add($0[...]) }
            state = loader.finish(pins: try store.allPins())
        } catch {
            throw .storage(error.description)
        }
        SearchEngine.returnFreedMemory()
    }

    /// Gives the loading's freed heap (rows and strings read from SQLite) back to the system, so the resident size
    /// after start-up is what the engine holds.
    static func returnFreedMemory() {
        #if canImport(Glibc)
        // malloc_trim is glibc's (malloc.h is not in the Glibc module): looked up once by name.
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {  // RTLD_DEFAULT
            // SAFETY: glibc declares `int malloc_trim(size_t pad)`, which is what `Trim` says.
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        }
        #endif
    }

    /// An engine over records in memory only (no persistence): for tests and benchmarks.
    public init(pois: [POIRecord], pins: [PinRecord] = [], taxonomy: CategoryTaxonomy) {
        self.store = nil
        self.taxonomy = taxonomy
        state = EngineState(pois: pois, pins: pins)
    }

    func read<T, E: Error>(_ body: (EngineState) throws(E) -> T) throws(E) -> T {
        lock.lockRead()
        defer { lock.unlock() }
        return try body(state)
    }

    func write<T, E: Error>(_ body: (inout EngineState) throws(E) -> T) throws(E) -> T {
        lock.lockWrite()
        defer { lock.unlock() }
        return try body(&state)
    }

    /// Record counts by kind.
    public var counts: (pois: Int, pins: Int) { read { ($0.poiNumbers.count, $0.pinNumbers.count) } }

    // MARK: Filters

    /// The per-record test of a query's category and keyword filters (kind is handled by choosing the index).
    func filter(_ s: EngineState, category: String?, matcher: TextMatcher?) -> ((UInt32) -> Bool)? {
        if category == nil && matcher == nil { return nil }
        return { number in
            guard s.meta[Int(number)].live else { return false }
            let own = s.category(of: number)
            if let category {
                guard let own, own.isCategory(under: category) else { return false }
            }
            if let matcher {
                return matcher.contains(number, category: own, index: s.text, categoryMembers: s.categoryMembers)
            }
            return true
        }
    }

    /// Records satisfying every group of the matcher, with their BM25 scores (each group scores its best expansion,
    /// groups add up).
    ///
    /// Accumulates in dense per-record arrays borrowed from a pool (reset only where touched), so a common word with
    /// tens of thousands of postings costs a pass over them, not as many hash-table inserts.
    func textCandidates(_ s: EngineState, _ matcher: TextMatcher) -> [(number: UInt32, score: Double)] {
        var scratch = scratchPool.withLock { $0.popLast() } ?? ScoreScratch()
        scratch.ensure(count: s.records.count)
        defer {
            scratch.reset()
            scratchPool.withLock { pool in if pool.count < 4 { pool.append(scratch) } }
        }
        var candidates: [UInt32] = []
        for (g, group) in matcher.groups.enumerated() {
            var touched: [UInt32] = []
            func offer(_ doc: UInt32, _ value: Float) {
                let i = Int(doc)
                // Only records that matched every earlier group stay candidates.
                guard scratch.matched[i] == UInt8(g) else { return }
                if scratch.groupBest[i] == 0 { touched.append(doc) }
                if value > scratch.groupBest[i] { scratch.groupBest[i] = value }
            }
            for expansion in group.expansions {
                let postings = s.text.postings(of: expansion.term)
                let idf = s.text.idf(documentFrequency: postings.count)
                for posting in postings { offer(posting.doc, Float(s.text.score(posting, idf: idf) * expansion.weight)) }
            }
            for category in group.categories {
                let members = s.categoryMembers.filter { $0.key.isCategory(under: category) }.values
                let value = Float(s.text.idf(documentFrequency: members.reduce(0) { $0 + $1.count }) * 0.8)
                for set in members { for number in set { offer(number, value) } }
            }
            for doc in touched {
                let i = Int(doc)
                scratch.score[i] += scratch.groupBest[i]
                scratch.groupBest[i] = 0
                scratch.matched[i] = UInt8(g + 1)
            }
            scratch.touched += touched
            if g == matcher.groups.count - 1 { candidates = touched }
            if touched.isEmpty { return [] }
        }
        return candidates.map { ($0, Double(scratch.score[Int($0)])) }
    }

    /// Records satisfying every group, in record order, without scoring: sorted posting lists merged per group and
    /// intersected across groups.
    func matchingRecords(_ s: EngineState, _ matcher: TextMatcher) -> [UInt32] {
        var result: [UInt32]?
        for group in matcher.groups {
            var lists: [[UInt32]] = group.expansions.map { s.text.postings(of: $0.term).map(\.doc) }
            for category in group.categories {
                for (key, members) in s.categoryMembers where key.isCategory(under: category) { lists.append(members.sorted()) }
            }
            var union: [UInt32]
            if lists.count == 1 {
                union = lists[0]
            } else {
                union = Array(Set(lists.joined())).sorted()
            }
            if let current = result {
                var merged: [UInt32] = []
                var i = 0
                var j = 0
                while i < current.count && j < union.count {
                    if current[i] == union[j] {
                        merged.append(current[i])
                        i += 1
                        j += 1
                    } else if current[i] < union[j] { i += 1 } else { j += 1 }
                }
                result = merged
            } else {
                result = union
            }
            if result?.isEmpty == true { break }
        }
        return result ?? []
    }

    /// Estimated number of text candidates: the smallest group's posting and category sizes.
    func estimatedCandidates(_ s: EngineState, _ matcher: TextMatcher) -> Int {
        matcher.groups.map { group in
            group.expansions.reduce(0) { $0 + s.text.postings(of: $1.term).count }
                + group.categories.reduce(0) { total, category in
                    total + s.categoryMembers.filter { $0.key.isCategory(under: category) }.values.reduce(0) { $0 + $1.count }
                }
        }.min() ?? 0
    }

    func hit(_ s: EngineState, _ number: UInt32, distance: Double?, score: Double?) -> Hit? {
        if let packed = s.records.packed(Int(number)) { return Hit(storage: .packed(packed), distance: distance, score: score) }
        return s.records[Int(number)].map { Hit(storage: .record($0), distance: distance, score: score) }
    }

    static func kinds(_ filter: KindFilter) -> [RecordKind] {
        switch filter {
        case .poi: return [.poi]
        case .pin: return [.pin]
        case .all: return [.poi, .pin]
        }
    }
}

/// Dense per-record buffers for scoring one keyword query.
struct ScoreScratch: Sendable {
    var score: [Float] = []
    var groupBest: [Float] = []
    var matched: [UInt8] = []
    var touched: [UInt32] = []

    mutating func ensure(count: Int) {
        if score.count < count {
            let extra = count - score.count
            score += repeatElement(0, count: extra)
            groupBest += repeatElement(0, count: extra)
            matched += repeatElement(0, count: extra)
        }
    }

    mutating func reset() {
        for doc in touched {
            score[Int(doc)] = 0
            groupBest[Int(doc)] = 0
            matched[Int(doc)] = 0
        }
        touched.removeAll(keepingCapacity: true)
    }
}
