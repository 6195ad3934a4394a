import CPrefetch
import GeoCore
import HeapModule
import Records
import SnapshotFile
import Synchronization
import TextIndex

/// Keyword query words compiled against one state of the engine: a word's groups (`TextMatcher`: its expansions and
/// labels, found in the dictionary and the taxonomy), and its cursor (`KeywordRanker.WordCursor` as made, before a
/// query moves it: the posting lists, idfs, labels and bounds — for a common word, its thousand blocks read for the
/// best; for a short prefix, its 65 lists). Each is found once and copied to every later query with the word, not
/// found again (of a query's time at 1 M, 5 % went to making cursors and 3 % to finding groups). A cursor is keyed by
/// its group and by whether the query has an origin (which weighs the bounds); a first word's total without filters,
/// by its group and the kind asked for (counting a common word's records on every query was 2 % of the keyword
/// classes' engine time). Emptied when the state changes (`SearchEngine.write` empties it first, and an entry made
/// from another state is never answered), and when it holds `capacity` entries of a kind.
final class WordCursorCache: Sendable {
    struct Key: Hashable, Sendable {
        let expansions: [InvertedIndex.Expansion]
        let categories: [String]
        let weighted: Bool
    }

    static let capacity = 4_096
    private let entries = Mutex<(generation: UInt64, cursors: [Key: KeywordRanker.WordCursor])>((0, [:]))

    /// A query word's groups (`TextMatcher`): its expansions — the last word's include its completions — and labels.
    struct WordKey: Hashable, Sendable {
        let word: String
        let isLast: Bool
        let typos: Bool
    }

    private let words = Mutex<(generation: UInt64, groups: [WordKey: [TextMatcher.Group]])>((0, [:]))

    func groups(of word: String, isLast: Bool, typos: Bool = true, generation: UInt64) -> [TextMatcher.Group]? {
        words.withLock { $0.generation == generation ? $0.groups[WordKey(word: word, isLast: isLast, typos: typos)] : nil }
    }

    func store(_ groups: [TextMatcher.Group], of word: String, isLast: Bool, typos: Bool = true, generation: UInt64) {
        words.withLock { words in
            if words.generation != generation || words.groups.count >= WordCursorCache.capacity { words = (generation, [:]) }
            words.groups[WordKey(word: word, isLast: isLast, typos: typos)] = groups
        }
    }

    private let pinyin = Mutex<(generation: UInt64, readings: [String: [TextMatcher.Reading]])>((0, [:]))

    /// A normalized query's readings as pinyin (`TextMatcher.readings`).
    func readings(of query: String, generation: UInt64) -> [TextMatcher.Reading]? {
        pinyin.withLock { $0.generation == generation ? $0.readings[query] : nil }
    }

    func store(readings: [TextMatcher.Reading], of query: String, generation: UInt64) {
        pinyin.withLock { pinyin in
            if pinyin.generation != generation || pinyin.readings.count >= WordCursorCache.capacity { pinyin = (generation, [:]) }
            pinyin.readings[query] = readings
        }
    }

    /// The cursor of `group` for the ranker's state and query, from the cache or made by `make` (outside the lock).
    func cursor(
        for group: TextMatcher.Group,
        ranker: borrowing KeywordRanker,
        make: () -> KeywordRanker.WordCursor
    )
        -> KeywordRanker.WordCursor
    {
        let key = Key(expansions: group.expansions, categories: group.categories, weighted: ranker.query.origin != nil)
        let generation = ranker.s.generation
        if let known = entries.withLock({ $0.generation == generation ? $0.cursors[key] : nil }) { return known }
        let made = make()
        entries.withLock { entries in
            if entries.generation != generation || entries.cursors.count >= WordCursorCache.capacity {
                entries = (generation, [:])
            }
            entries.cursors[key] = made
        }
        return made
    }

    /// The records a word's group matches, of a kind, without other filters (`KeywordRanker.total`).
    struct TotalKey: Hashable, Sendable {
        let expansions: [InvertedIndex.Expansion]
        let categories: [String]
        let kind: KindFilter
    }

    private let totals = Mutex<(generation: UInt64, counts: [TotalKey: Int])>((0, [:]))

    func total(of group: TextMatcher.Group, kind: KindFilter, generation: UInt64) -> Int? {
        let key = TotalKey(expansions: group.expansions, categories: group.categories, kind: kind)
        return totals.withLock { $0.generation == generation ? $0.counts[key] : nil }
    }

    func store(total: Int, of group: TextMatcher.Group, kind: KindFilter, generation: UInt64) {
        let key = TotalKey(expansions: group.expansions, categories: group.categories, kind: kind)
        totals.withLock { totals in
            if totals.generation != generation || totals.counts.count >= WordCursorCache.capacity { totals = (generation, [:]) }
            totals.counts[key] = total
        }
    }

    func removeAll() {
        entries.withLock { $0 = (0, [:]) }
        words.withLock { $0 = (0, [:]) }
        totals.withLock { $0 = (0, [:]) }
        pinyin.withLock { $0 = (0, [:]) }
    }
}
