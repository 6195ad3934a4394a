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
            // Blocks no change reaches keep their bytes; with nothing added, only the blocks that lose a house are
            // encoded again.
            let reached = blocks.map { block in
                try! HouseList.decode(block).contains { changedIDs.contains(OSMObjectKey.object(of: $0.id)) }
            }
            let written = Set(got.houses.blocks.map(\.bytes))
            let reused = zip(blocks, reached).filter { !$1 && written.contains($0.bytes) }.count
            #expect(got.encodedAgain <= blocks.count - reused, "seed \(seed), round \(round)")
            if added.isEmpty {
                #expect(got.encodedAgain == reached.filter { $0 }.count, "seed \(seed), round \(round)")
                #expect(reused == reached.filter { !$0 }.count, "seed \(seed), round \(round): untouched blocks kept as they were")
            }
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
