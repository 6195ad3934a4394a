import CPrefetch
import GeoCore
import HeapModule
import Records
import SnapshotFile
import Synchronization
import TextIndex

extension KeywordRanker {
    // MARK: Total

    /// The records matching the first word (every result matches it): exact when that is at most
    /// `exactTotalLimit` postings, else the sum of its list sizes. Never less than the results found.
    func total(atLeast found: Int) -> Int {
        guard let group = matcher.groups.first else { return 0 }
        if !matcher.readings.isEmpty {
            // Read as pinyin too: an estimate, the first group's postings of each reading added to the words' total.
            let read = matcher.readings.reduce(0) { sum, reading in
                sum + (reading.groups.first?.expansions.reduce(0) { $0 + s.text.documentFrequency($1.term) } ?? 0)
            }
            return max(found, total(of: group, atLeast: 0) + read)
        }
        return total(of: group, atLeast: found)
    }

    /// The total of the words as typed, `group` the first word's.
    private func total(of group: TextMatcher.Group, atLeast found: Int) -> Int {
        let lists = group.expansions.map { s.text.postings(of: $0.term) }
        let members = s.members(ofCategoriesUnder: group.categories)
        let size = lists.reduce(0) { $0 + $1.count } + members.reduce(0) { $0 + $1.count }
        // Posting lists hold live records only: without a filter, one list's size is its exact count.
        let otherKindExists = query.kind == .poi ? !s.pinNumbers.isEmpty : (query.kind == .pin ? s.poiIDs.count > 0 : false)
        if query.categories.isEmpty && query.bbox == nil && !otherKindExists && lists.count + members.count == 1 { return size }
        guard size <= SearchEngine.exactTotalLimit else { return max(found, size) }
        // Without a category or box the count depends on the word and the kind only: counted once per state.
        let cached = query.categories.isEmpty && query.bbox == nil
        if cached, let known = engine.wordCursors.total(of: group, kind: query.kind, generation: s.generation) { return known }
        var marks = engine.scratchPool.withLock { $0.popLast() } ?? VisitMarks()
        marks.ensure(count: s.meta.count)
        defer {
            marks.reset()
            engine.scratchPool.withLock { pool in if pool.count < 4 { pool.append(marks) } }
        }
        var count = 0
        // A posting tells its record's kind: without a category or box the records themselves are not read.
        for list in lists { for posting in list where marks.visit(posting.doc) && accepts(posting) { count += 1 } }
        for list in members { for doc in list where marks.visit(doc) && accepts(doc) { count += 1 } }
        if cached { engine.wordCursors.store(total: count, of: group, kind: query.kind, generation: s.generation) }
        return count
    }
}
