import Foundation
import GRDB
import GeoCore
import TestSupport
import Testing

@testable import Catalog
@testable import Records

/// A change file's houses replaced block by block (`OSMObjectKey.replacingHouses`) against the oracle of the whole
/// list: the stored houses filtered and `merged` with the added ones, as the store did before. Blocks of random sizes
/// (as an import seals them at its file's blocks), random objects changed (some with houses, some without), houses
/// added at random places, before the first and after the last.
@Suite struct HouseReplacementTests {
    static func house(_ type: String, _ id: Int64, part: Int?, _ random: inout SplitMix64) -> AddressPoint {
        AddressPoint(
            id: "osm-\(type)\(id)" + (part.map { "#\($0)" } ?? ""),
            street: ["Mannerheimintie", "Aleksanterinkatu", nil][Int(random.next() % 3)],
            housenumber: "\(1 + random.next() % 90)",
            postcode: "00100",
            city: "Helsinki",
            latitude: random.uniform(60...60.3),
            longitude: random.uniform(24.8...25.1)
        )
    }

    /// Houses of random objects (nodes, ways, relations; a way with several houses has parts), in the store's order.
    static func houses(_ count: Int, ids: ClosedRange<Int64>, _ random: inout SplitMix64) -> [AddressPoint] {
        var houses: [AddressPoint] = []
        while houses.count < count {
            let type = ["n", "n", "w", "r"][Int(random.next() % 4)]
            let id = Int64.random(in: ids, using: &random)
            let parts = random.next() % 5 == 0 ? Int(1 + random.next() % 3) : 0
            if parts == 0 {
                houses.append(house(type, id, part: nil, &random))
            } else {
                for part in 1...parts { houses.append(house(type, id, part: part, &random)) }
            }
        }
        return OSMObjectKey.inOrder(houses, id: \.id)
    }

    @Test func blockByBlockIsTheWholeListMerged() throws {
        let seed = testSeed("houseReplacement")
        var random = SplitMix64(seed: seed)
        for round in 0..<60 {
            let stored = Self.houses(Int(random.next() % 3_000), ids: 1...5_000, &random)
            // Blocks of 1 to 700 houses, with the occasional empty list.
            var list = HouseList()
            var start = 0
            while start < stored.count {
                let end = min(stored.count, start + 1 + Int(random.next() % 700))
                list.append(contentsOf: stored[start..<end])
                list.seal()
                start = end
            }
            let blocks = list.blocks
            // Objects changed: some of the stored ones, some that have no house.
            var changedIDs = Set<String>()
            for _ in 0..<Int(random.next() % 40) {
                if !stored.isEmpty, random.next() % 2 == 0 {
                    changedIDs.insert(OSMObjectKey.object(of: stored[Int(random.next() % UInt64(stored.count))].id))
                } else {
                    changedIDs.insert("osm-\(["n", "w", "r"][Int(random.next() % 3)])\(Int64.random(in: 0...5_100, using: &random))")
                }
            }
            // Houses added: of changed objects, and of new ones anywhere in the order (ids past the stored range too).
            var added = Self.houses(Int(random.next() % 30), ids: 0...5_100, &random)
            added = added.filter { changedIDs.contains(OSMObjectKey.object(of: $0.id)) || random.next() % 2 == 0 }
            for house in added { changedIDs.insert(OSMObjectKey.object(of: house.id)) }
            let changed = Set(changedIDs.compactMap { OSMObjectKey.order(of: $0).map(OSMObjectKey.packed) })

            let kept = stored.filter { !changedIDs.contains(OSMObjectKey.object(of: $0.id)) }
            let expected = OSMObjectKey.merged(kept, added, id: \.id)
            let got = try #require(try OSMObjectKey.replacingHouses(in: blocks, changed: changed, added: HouseList(added)))
            let houses = Array(got.houses)
            if houses != expected {
                let at = (0..<min(houses.count, expected.count)).first { houses[$0] != expected[$0] } ?? min(houses.count, expected.count)
                let gotID = at < houses.count ? houses[at].id : "none"
                let expectedID = at < expected.count ? expected[at].id : "none"
                Issue.record(
                    "seed \(seed), round \(round): \(houses.count) houses where the oracle has \(expected.count); first difference at \(at): \(gotID) against \(expectedID)"
                )
            }
            #expect(got.houses.count == expected.count && got.houses.idBytes == expected.reduce(0) { $0 + $1.id.utf8.count })
            // A block is encoded again when it loses a house or gains one: an added house goes into the first block
            // whose last kept house it comes before (the last block takes the rest). Every other block keeps its
            // bytes. (A block encoded again may still come out with its old bytes, when the houses before it shift
            // it by exactly a block: so the count is checked, and the blocks kept, not the bytes of those encoded.)
            let addedKeys = added.map { OSMObjectKey.order(of: $0.id) }
            var taken = 0
            var encoded = 0
            let written = Set(got.houses.blocks.map(\.bytes))
            for (k, block) in blocks.enumerated() {
                let houses = try HouseList.decode(block)
                let keptKeys = houses.filter { !changedIDs.contains(OSMObjectKey.object(of: $0.id)) }.map { OSMObjectKey.order(of: $0.id) }
                let lost = keptKeys.count < houses.count
                var end = taken
                if k == blocks.count - 1 {
                    end = addedKeys.count
                } else if let last = keptKeys.last {
                    while end < addedKeys.count && OSMObjectKey.precedes(addedKeys[end], 0, last, 0) { end += 1 }
                }
                if lost || end > taken {
                    encoded += 1
                } else {
                    #expect(written.contains(block.bytes), "seed \(seed), round \(round): block \(k), which no change reaches, kept as it was")
                }
                taken = end
            }
            #expect(got.encodedAgain == encoded, "seed \(seed), round \(round)")
        }
    }

    /// The store's own replacement (`CatalogStore.replaceHouses`), which reads and writes only the blocks whose
    /// spans a change reaches: change after change on one store, each against the oracle, with gaps between the
    /// blocks' numbers small enough that some run out (and the run takes its neighbours in, numbered apart again).
    @Test(arguments: [1, CatalogStore.houseBlockGap])
    func inTheStoreOnlyTheBlocksReachedAreWritten(gap: Int64) throws {
        let seed = testSeed("houseReplacementInStore-\(gap)")
        var random = SplitMix64(seed: seed)
        let scratch = ScratchDirectory("poi-house-spans")
        let store = try CatalogStore(path: scratch.file("houses.sqlite"))
        var expected = Self.houses(2_000 + Int(random.next() % 2_000), ids: 1...5_000, &random)
        try store.pool.write { db in try CatalogStore.writeHouses(HouseList(expected), db, gap: gap) }
        var incremental = 0
        var whole = 0
        for round in 0..<40 {
            let before = try store.pool.read { db in try Self.storedBlocks(db) }
            // Objects changed: stored ones (near each other in some rounds, to split the same blocks again) and new ones.
            var changedIDs = Set<String>()
            let near = Int(random.next() % UInt64(max(1, expected.count)))
            for _ in 0..<Int(1 + random.next() % 30) {
                if !expected.isEmpty, random.next() % 3 != 0 {
                    let at = round % 2 == 0 ? Int(random.next() % UInt64(expected.count)) : min(expected.count - 1, near + Int(random.next() % 40))
                    changedIDs.insert(OSMObjectKey.object(of: expected[at].id))
                } else {
                    changedIDs.insert("osm-\(["n", "w", "r"][Int(random.next() % 3)])\(Int64.random(in: 0...5_100, using: &random))")
                }
            }
            // Added houses are the changed objects' (as a change file's are): some objects gain several.
            var added: [AddressPoint] = []
            for id in changedIDs where random.next() % 3 != 0 {
                let key = try #require(OSMObjectKey.order(of: id))
                let type = ["n", "w", "r"][key.type]
                let parts = Int(random.next() % 4)
                if parts == 0 {
                    added.append(Self.house(type, key.id, part: nil, &random))
                } else {
                    for part in 1...parts { added.append(Self.house(type, key.id, part: part, &random)) }
                }
            }
            added = OSMObjectKey.inOrder(added, id: \.id)
            let changed = Set(changedIDs.compactMap { OSMObjectKey.order(of: $0).map(OSMObjectKey.packed) })
            expected = OSMObjectKey.merged(expected.filter { !changedIDs.contains(OSMObjectKey.object(of: $0.id)) }, added, id: \.id)

            let done = try store.pool.write { db in
                try CatalogStore.replaceHouses(changed: changed, added: HouseList(added), db, gap: gap)
            }
            if done == nil {
                // No room between two blocks' numbers: the caller writes the list whole.
                try store.pool.write { db in try CatalogStore.writeHouses(HouseList(expected), db, gap: gap) }
                whole += 1
            } else {
                incremental += 1
            }
            let after = try store.pool.read { db in try Self.storedBlocks(db) }
            let houses = after.flatMap(\.houses)
            let same = houses == expected  // not the lists themselves in the message: thousands of houses
            #expect(same, "seed \(seed), round \(round): \(houses.count) houses where the oracle has \(expected.count)")
            // Every block's span is its first and last house's object, in order of the blocks' numbers.
            for block in after {
                let first = block.houses.first.flatMap { OSMObjectKey.order(of: $0.id) }.map(OSMObjectKey.packed)
                let last = block.houses.last.flatMap { OSMObjectKey.order(of: $0.id) }.map(OSMObjectKey.packed)
                #expect(block.span?.first == first && block.span?.last == last, "seed \(seed), round \(round): block \(block.seq)'s span")
                #expect(!block.houses.isEmpty && block.houses.count <= AddressBlock.size)
            }
            // Only the blocks whose span holds a changed object, or where an added house goes, are written anew;
            // a block that loses a house is among them.
            if let done {
                let lost = before.filter { block in
                    block.houses.contains { changed.contains(OSMObjectKey.packed(OSMObjectKey.order(of: $0.id)!)) }
                }
                let spanning = before.filter { block in changed.contains { block.span!.first <= $0 && $0 <= block.span!.last } }
                let now = Dictionary(uniqueKeysWithValues: after.map { ($0.seq, $0.bytes) })
                let untouched = before.filter { now[$0.seq] == $0.bytes }
                #expect(lost.allSatisfy { now[$0.seq] != $0.bytes }, "seed \(seed), round \(round)")
                #expect(done.of == after.count && done.encoded >= after.count - untouched.count, "seed \(seed), round \(round)")
                // (With gaps of 1 most runs take their neighbours in, and those are written again too.)
                #expect(gap == 1 || untouched.count >= before.count - spanning.count - added.count, "seed \(seed), round \(round)")
            }
        }
        // Where numbers run out (gaps of 1), the run takes its neighbours in: never the whole list.
        #expect(whole == 0, "seed \(seed): \(whole) lists written whole with gaps of \(gap)")
        // No room: a full middle block that gains a house splits in two, with no number free between its neighbours.
        // They are read and written again with it, numbered apart; the blocks past them stay as they were.
        try store.pool.write { db in try CatalogStore.writeHouses(HouseList(expected), db, gap: 1) }
        let middle = try #require(OSMObjectKey.order(of: expected[AddressBlock.size + AddressBlock.size / 2].id))
        let own = expected.filter { OSMObjectKey.order(of: $0.id).map { ($0.type, $0.id) } ?? (-1, -1) == (middle.type, middle.id) }
        let gained = own + [Self.house(["n", "w", "r"][middle.type], middle.id, part: 1_000, &random)]
        let beforeSplit = try store.pool.read { db in try Self.storedBlocks(db) }
        let split = try store.pool.write { db in
            try CatalogStore.replaceHouses(changed: [OSMObjectKey.packed(middle)], added: HouseList(gained), db, gap: 1)
        }
        expected = OSMObjectKey.merged(expected.filter { !own.map(\.id).contains($0.id) }, OSMObjectKey.inOrder(gained, id: \.id), id: \.id)
        let afterSplit = try store.pool.read { db in try Self.storedBlocks(db) }
        #expect(afterSplit.flatMap(\.houses) == expected, "seed \(seed): the split's houses")
        let kept = Dictionary(uniqueKeysWithValues: afterSplit.map { ($0.seq, $0.bytes) })
        let untouched = beforeSplit.filter { kept[$0.seq] == $0.bytes }.count
        #expect(
            split != nil && untouched == beforeSplit.count - 3,
            "seed \(seed): \(untouched) of \(beforeSplit.count) blocks kept (\(split.map { "\($0)" } ?? "refused"))"
        )
        let numbers = afterSplit.map(\.seq)
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count)
        // A database from before the spans (migration v11 leaves the table empty): written whole by the caller.
        let withoutSpans = try store.pool.write { db in
            try db.execute(sql: "DELETE FROM address_block_range")
            return try CatalogStore.replaceHouses(changed: [OSMObjectKey.packed(middle)], added: HouseList(gained), db)
        }
        #expect(withoutSpans == nil)
        #expect(incremental == 40, "seed \(seed): \(incremental) of 40 changes written block by block")
    }

    struct StoredBlock {
        let seq: Int64
        let bytes: [UInt8]
        let houses: [AddressPoint]
        let span: (first: Int64, last: Int64)?
    }

    static func storedBlocks(_ db: Database) throws -> [StoredBlock] {
        let spans = Dictionary(
            uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT seq, first, last FROM address_block_range").map {
                row -> (Int64, (Int64, Int64)) in
                (row[0], (row[1], row[2]))
            }
        )
        return try Row.fetchAll(db, sql: "SELECT seq, count, data FROM address_block ORDER BY seq").map { row in
            let bytes = [UInt8](row[2] as Data)
            let seq: Int64 = row[0]
            return StoredBlock(seq: seq, bytes: bytes, houses: try HouseList.decode(HouseList.Block(bytes: bytes, count: row[1])), span: spans[seq])
        }
    }

    @Test func anIDThatIsNoObjectsLeavesTheListToBeMergedWhole() throws {
        var random = testRandom("houseReplacementOtherIDs")
        var stored = Self.houses(50, ids: 1...100, &random)
        stored[10] = AddressPoint(id: "csv-7", street: nil, housenumber: "1", latitude: 60, longitude: 25)
        let list = HouseList(stored)
        #expect(try OSMObjectKey.replacingHouses(in: list.blocks, changed: [], added: []) == nil)
        let added = [AddressPoint(id: "house-1", street: nil, housenumber: "2", latitude: 60, longitude: 25)]
        #expect(try OSMObjectKey.replacingHouses(in: HouseList(Array(stored[11...])).blocks, changed: [], added: HouseList(added)) == nil)
    }

    @Test func aCorruptBlockIsNamedByItsPlace() {
        var random = testRandom("houseReplacementCorrupt")
        var list = HouseList(Self.houses(20, ids: 1...100, &random))
        list.seal()
        list.append(contentsOf: Self.houses(20, ids: 200...300, &random))
        var blocks = list.blocks
        blocks[1] = HouseList.Block(bytes: Array(blocks[1].bytes.dropLast()), count: blocks[1].count)
        #expect {
            _ = try OSMObjectKey.replacingHouses(in: blocks, changed: [], added: [])
        } throws: { error in
            (error as? AddressBlock.CorruptBlock)?.reason.hasPrefix("block 1 of 2:") == true
        }
    }
}
