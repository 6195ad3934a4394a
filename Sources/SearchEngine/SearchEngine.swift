import Catalog
import Foundation
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
            state = EngineState(pois: try store.allPOIs(), pins: try store.allPins())
        } catch {
            throw .storage(error.description)
        }
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
            guard let record = s.records[Int(number)] else { return false }
            if let category {
                guard let own = EngineState.category(record), own.isCategory(under: category) else { return false }
            }
            if let matcher {
                return matcher.matches(fields: EngineState.fields(record), category: EngineState.category(record), index: s.text)
            }
            return true
        }
    }

    /// Records satisfying every group of the matcher, with their BM25 scores (each group scores its best expansion).
    func textCandidates(_ s: EngineState, _ matcher: TextMatcher) -> [UInt32: Double] {
        var result: [UInt32: Double]?
        for group in matcher.groups {
            var scores: [UInt32: Double] = [:]
            for expansion in group.expansions {
                let postings = s.text.postings(of: expansion.term)
                let idf = s.text.idf(documentFrequency: postings.count)
                for posting in postings {
                    let value = s.text.score(posting, idf: idf) * expansion.weight
                    if value > scores[posting.doc] ?? 0 { scores[posting.doc] = value }
                }
            }
            for category in group.categories {
                let members = s.categoryMembers.filter { $0.key.isCategory(under: category) }.values
                let count = members.reduce(0) { $0 + $1.count }
                let value = s.text.idf(documentFrequency: count) * 0.8
                for set in members { for number in set where value > scores[number] ?? 0 { scores[number] = value } }
            }
            if var current = result {
                current = current.filter { scores[$0.key] != nil }
                for key in current.keys { current[key]! += scores[key]! }
                result = current
            } else {
                result = scores
            }
            if result?.isEmpty == true { break }
        }
        return result ?? [:]
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
        s.records[Int(number)].map { Hit(record: $0, distance: distance, score: score) }
    }

    static func kinds(_ filter: KindFilter) -> [RecordKind] {
        switch filter {
        case .poi: return [.poi]
        case .pin: return [.pin]
        case .all: return [.poi, .pin]
        }
    }
}
