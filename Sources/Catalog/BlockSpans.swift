import GRDB
import Records

/// The objects each block of a table spans, in block order (`address_block_range`, `map_area_range`: the first and last
/// house's or area's `OSMObjectKey.packed` key; the sea's blocks span `CatalogStore.seaSpan`, after every object's):
/// which blocks a change file reaches, and the numbers the blocks it writes again take between their neighbours'
/// (docs/ARCHITECTURE.md, "OpenStreetMap that stays current").
struct BlockSpans {
    typealias Span = (seq: Int64, first: Int64, last: Int64)
    let rows: [Span]
    /// How many blocks, from the first, hold objects; the rest are the sea's.
    let objectBlocks: Int

    init(_ db: Database, table: String) throws {
        var rows: [Span] = []
        let cursor = try Row.fetchCursor(db, sql: "SELECT seq, first, last FROM \(table) ORDER BY seq")
        while let row = try cursor.next() { rows.append((row[0], row[1], row[2])) }
        self.rows = rows
        objectBlocks = rows.prefix { $0.first != CatalogStore.seaSpan }.count
    }

    /// Whether every block after the objects' is the sea's.
    var seaIsLast: Bool { rows[objectBlocks...].allSatisfy { $0.first == CatalogStore.seaSpan } }

    /// The objects' blocks whose span holds one of `changed`, and the block each of `added` (in order) goes into: the
    /// first whose span ends at or after it, the last for what is past all (`objectBlocks` > 0 when any is added).
    func reached(changed: Set<Int64>, added: [Int64]) -> (touched: Set<Int>, addedTo: [Int]) {
        func firstEnding(atOrAfter key: Int64) -> Int {
            var (low, high) = (0, objectBlocks)
            while low < high {
                let mid = (low + high) / 2
                if rows[mid].last < key { low = mid + 1 } else { high = mid }
            }
            return low
        }
        var touched = Set<Int>()
        for key in changed {
            var i = firstEnding(atOrAfter: key)
            while i < objectBlocks && rows[i].first <= key {
                touched.insert(i)
                i += 1
            }
        }
        let addedTo = added.map { min(firstEnding(atOrAfter: $0), objectBlocks - 1) }
        touched.formUnion(addedTo)
        return (touched, addedTo)
    }

    /// The runs of consecutive block indices among `indices`, in order.
    static func runs(_ indices: some Sequence<Int>) -> [ClosedRange<Int>] {
        var runs: [ClosedRange<Int>] = []
        for i in indices.sorted() {
            if let last = runs.last, last.upperBound + 1 == i { runs[runs.count - 1] = last.lowerBound...i } else { runs.append(i...i) }
        }
        return runs
    }

    /// Numbers for `count` blocks in place of the blocks `run`, evenly strictly between their neighbours' (past the
    /// first or last block, as far out as `gap` apart), at least `spacing` apart; nil when there is no such room.
    func numbers(_ count: Int, replacing run: ClosedRange<Int>, gap: Int64, spacing: Int64 = 1) -> [Int64]? {
        let m = Int64(count)
        let low = run.lowerBound > 0 ? rows[run.lowerBound - 1].seq : rows[run.lowerBound].seq - (m + 1) * gap
        let high = run.upperBound + 1 < rows.count ? rows[run.upperBound + 1].seq : rows[run.upperBound].seq + (m + 1) * gap
        guard (high - low) / (m + 1) >= max(1, spacing) else { return nil }
        return (0..<m).map { low + (high - low) * ($0 + 1) / (m + 1) }
    }

    /// The objects' blocks around `run`, as many more again on each side, for a run whose blocks found no room
    /// between their neighbours' numbers: written again with it, they are numbered apart again (`widenedSpacing`).
    /// New objects' houses and areas go after the last of their type, file after file, and each split there leaves
    /// the last block a third of the room: on the country-shaped database the numbers ran out every ~12 files, and the
    /// whole list was written again (4 s). Nil when the run has all the objects' blocks already.
    func widened(_ run: ClosedRange<Int>) -> ClosedRange<Int>? {
        let wider = max(0, run.lowerBound - run.count)...min(objectBlocks - 1, run.upperBound + run.count)
        return wider == run ? nil : wider
    }

    /// How far apart at least a widened run's blocks are numbered: room for a dozen more splits in the same place.
    static func widenedSpacing(gap: Int64) -> Int64 { max(1, gap / 16) }

    /// Where the blocks made in place of a run go (`place`).
    enum Placement {
        /// Their numbers, in order.
        case numbered([Int64])
        /// No room: the run's neighbours were read into the blocks to make again; make the runs again.
        case widened
        /// No room, and the run has all the objects' blocks already.
        case full
    }

    /// Numbers for `count` blocks in place of `run` (`numbers`, at least `widenedSpacing` apart when the run holds a
    /// neighbour taken in); with no room, the neighbours around it (`widened`) read with `fetch` into `read`.
    func place<Block>(
        _ count: Int,
        replacing run: ClosedRange<Int>,
        gap: Int64,
        read: inout [Int: Block],
        widened: inout Set<Int>,
        fetch: (Int) throws -> Block
    ) throws -> Placement {
        let spacing = run.contains(where: widened.contains) ? Self.widenedSpacing(gap: gap) : 1
        if let seqs = numbers(count, replacing: run, gap: gap, spacing: spacing) { return .numbered(seqs) }
        guard let wider = self.widened(run) else { return .full }
        for i in wider where read[i] == nil {
            read[i] = try fetch(i)
            widened.insert(i)
        }
        return .widened
    }

    /// Each house block's span, as a whole write records it (`CatalogStore.writeHouses`), or nil when a house is not an
    /// OpenStreetMap object's or the houses are not in `OSMObjectKey` order (such a list is only ever rewritten whole).
    /// Only the ids are read.
    static func ofHouses(_ blocks: [HouseList.Block]) throws -> [(first: Int64, last: Int64)]? {
        var spans: [(first: Int64, last: Int64)] = []
        spans.reserveCapacity(blocks.count)
        var previous: (type: Int, id: Int64, part: Int)?
        var usable = true
        for (k, block) in blocks.enumerated() {
            var first: Int64?
            var last: Int64 = 0
            var failure: AddressBlock.CorruptBlock?
            block.bytes.withUnsafeBytes { bytes in
                do throws(AddressBlock.CorruptBlock) {
                    try AddressBlock.forEachID(bytes, count: block.count) { id in
                        guard usable, let key = OSMObjectKey.order(of: id.assumingMemoryBound(to: UInt8.self)) else {
                            usable = false
                            return
                        }
                        if let p = previous, OSMObjectKey.precedes(key, 1, p, 0) { usable = false }
                        previous = key
                        last = OSMObjectKey.packed(key)
                        if first == nil { first = last }
                    }
                } catch {
                    failure = error
                }
            }
            if let failure { throw CatalogError.storage("house block \(k) of \(blocks.count) is corrupt: \(failure.reason)") }
            guard usable, let first else { return nil }
            spans.append((first, last))
        }
        return spans
    }
}
