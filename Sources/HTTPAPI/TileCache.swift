import HTTPServer
import Metrics
import Synchronization

/// Tiles already made, kept with the version of the data they were made from (docs/ARCHITECTURE.md, "Vector tiles").
///
/// A map shows the same tiles to everyone who looks at the same place, and a tile of POIs changes only when a POI
/// does: a tile asked again while its layer's version (`SearchEngine.tileVersion`, the base index's `serial`) is the
/// one it was made at is answered from here — its bytes, gzip-compressed or not, and its ETag — without searching or
/// encoding it again. A write of the layer's kind changes the version, so every tile made before it is made again
/// when next asked for; no tile is ever answered from data older than the request's.
///
/// The budget bounds the tiles' bytes. Tiles go into a young generation; when that holds half the budget it becomes
/// the old one and the old one is dropped. A tile found in the old generation moves to the young one, so what is
/// asked for keeps its place and what nobody asks for again leaves within two generations. A tile larger than an
/// eighth of the budget is not kept.
final class TileCache: Sendable {
    /// What a tile's answer depends on besides the data.
    struct Key: Hashable, Sendable {
        /// `layer/z/x/y` and the filters' query string (`TileFilters.queryString`: the same for the same filters,
        /// however they were written).
        var tile: String
        var gzip: Bool
    }

    /// A kept answer: a 200 with its body, or a 204; its fields carry the ETag.
    struct Entry: Sendable {
        var version: UInt64
        var answer: ReadAnswer

        var bytes: Int { answer.body.count + 256 }
    }

    private struct Generations {
        var young: [Key: Entry] = [:]
        var old: [Key: Entry] = [:]
        var youngBytes = 0
    }

    let budget: Int
    private let generations = Mutex(Generations())
    private let hits = Counter(label: "poi_tile_cache_hits_total")
    private let misses = Counter(label: "poi_tile_cache_misses_total")

    /// - Parameter budget: bytes of tiles at most; 0 keeps none.
    init(budget: Int) { self.budget = max(0, budget) }

    /// The answer kept for `key` at `version`, or nil.
    func answer(_ key: Key, version: UInt64) -> ReadAnswer? {
        guard budget > 0 else { return nil }
        let found = generations.withLock { g -> ReadAnswer? in
            if let entry = g.young[key] { return entry.version == version ? entry.answer : nil }
            guard let entry = g.old.removeValue(forKey: key), entry.version == version else { return nil }
            Self.insert(entry, key, into: &g, budget: budget)
            return entry.answer
        }
        if found != nil { hits.increment() } else { misses.increment() }
        return found
    }

    /// Keeps `answer` for `key`, made at `version`.
    func keep(_ answer: ReadAnswer, for key: Key, version: UInt64) {
        let entry = Entry(version: version, answer: answer)
        guard budget > 0, entry.bytes <= budget / 8 else { return }
        generations.withLock { g in
            g.old[key] = nil
            Self.insert(entry, key, into: &g, budget: budget)
        }
    }

    /// Bytes held (young and old generations).
    var heldBytes: Int {
        generations.withLock { g in g.youngBytes + g.old.values.reduce(0) { $0 + $1.bytes } }
    }

    /// Puts `entry` in the young generation, which first becomes the old one if `entry` would take it past half the
    /// budget: the two together never hold more than the budget.
    private static func insert(_ entry: Entry, _ key: Key, into g: inout Generations, budget: Int) {
        if let replaced = g.young.removeValue(forKey: key) { g.youngBytes -= replaced.bytes }
        if g.youngBytes + entry.bytes > budget / 2 {
            g.old = g.young
            g.young = [:]
            g.youngBytes = 0
        }
        g.young[key] = entry
        g.youngBytes += entry.bytes
    }
}
