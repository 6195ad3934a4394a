import Foundation
import GRDB
import GeoCore
import TestSupport
import Testing

@testable import Catalog
@testable import Records

@Suite struct AddressBlockTests {
    let scratch = ScratchDirectory("poi-address-block")

    /// Random houses: absent, empty, ASCII, Latin and Chinese texts, and any Double position (its bits kept).
    func houses(_ count: Int, _ random: inout SplitMix64) -> [AddressPoint] {
        // "é" precomposed and decomposed: equal to Swift's `==`, two texts to the block.
        let texts: [String?] = [nil, "", "Mannerheimintie", "Mannerheimvägen 13 A", "中关村大街", "13-15", "00100", "a\u{1F}b", "\u{E9}", "e\u{301}"]
        func text() -> String? { texts[Int(random.next() % UInt64(texts.count))] }
        return (0..<count).map { i in
            AddressPoint(
                // Ids that share a part of a character's bytes with the one before ("é" and "è": C3 A9, C3 A8).
                id: ["osm-n\(i)", "é\(i)", "è\(i)", "\(i)", "osm-w\(i)"][Int(random.next() % 5)] + (i % 7 == 0 ? "#2" : ""),
                street: text(),
                place: text(),
                housenumber: text() ?? "1",
                unit: text(),
                postcode: text(),
                city: text(),
                latitude: random.uniform(-90...90),
                longitude: random.uniform(-180...180)
            )
        }
    }

    /// Every text of a house as its UTF-8 bytes (nil: none), for comparing what `==` would call equal.
    static func bytes(_ house: AddressPoint) -> [[UInt8]?] {
        [house.id, house.street, house.place, house.housenumber, house.unit, house.postcode, house.city].map { $0.map { Array($0.utf8) } }
    }

    @Test func blocksGiveBackWhatWasWritten() throws {
        var random = testRandom("blocksGiveBackWhatWasWritten")
        for count in [0, 1, 2, 317] {
            let written = houses(count, &random)
            var read: [AddressPoint] = []
            try AddressBlock.encode(written).withUnsafeBytes { try AddressBlock.decode($0, count: count, into: &read) }
            #expect(read == written, "\(count) houses")
            #expect(read.map(Self.bytes) == written.map(Self.bytes), "\(count) houses, byte for byte")
        }
    }

    @Test func aCorruptBlockIsRefusedWithItsReason() {
        var random = testRandom("aCorruptBlockIsRefusedWithItsReason")
        let bytes = AddressBlock.encode(houses(5, &random))
        func decode(_ bytes: [UInt8], count: Int = 5) -> String? {
            var read: [AddressPoint] = []
            do { try bytes.withUnsafeBytes { try AddressBlock.decode($0, count: count, into: &read) } } catch {
                return (error as? AddressBlock.CorruptBlock)?.reason
            }
            return nil
        }
        #expect(decode(Array(bytes.dropLast())) != nil, "a truncated block")
        #expect(decode(bytes, count: 4)?.contains("bytes after its 4 houses") == true)
        #expect(decode([3] + bytes.dropFirst())?.contains("version 3") == true)
        #expect(decode([]) != nil)
        // Version 2: no texts; a house id "x" (shares 0 bytes, 1 more), then a street reference to the first text.
        #expect(decode([2, 0, 0, 1, 0x78, 1], count: 1)?.contains("a reference to text 1 of 0") == true)
        // An id that shares 3 bytes with the empty id before it.
        #expect(decode([2, 0, 3, 0], count: 1)?.contains("sharing 3 bytes of the 0") == true)
        #expect(decode([2, 0x80], count: 0) != nil, "a cut varint")
    }

    /// `AddressBlock.forEachID` (what a change file reads of the blocks it keeps) gives the ids `decode` reads, and
    /// refuses exactly the blocks `decode` refuses: blocks of both versions, then each damaged at random — truncated,
    /// a byte changed, a byte inserted, read with another count — hundreds of times.
    @Test func theIDWalkAcceptsWhatDecodingAccepts() throws {
        let seed = testSeed("theIDWalkAcceptsWhatDecodingAccepts")
        var random = SplitMix64(seed: seed)
        func decoded(_ bytes: [UInt8], _ count: Int) -> [String]? {
            var read: [AddressPoint] = []
            do { try bytes.withUnsafeBytes { try AddressBlock.decode($0, count: count, into: &read) } } catch { return nil }
            return read.map(\.id)
        }
        func walked(_ bytes: [UInt8], _ count: Int) -> [String]? {
            var ids: [String] = []
            do {
                try bytes.withUnsafeBytes { try AddressBlock.forEachID($0, count: count) { ids.append(String(decoding: $0, as: UTF8.self)) } }
            } catch {
                return nil
            }
            return ids
        }
        var refused = 0
        for round in 0..<400 {
            let written = houses(Int(random.next() % 12), &random)
            var bytes = round % 4 == 0 ? Self.versionOne(written) : AddressBlock.encode(written)
            var count = written.count
            #expect(walked(bytes, count) == written.map(\.id), "seed \(seed), round \(round): an intact block")
            switch random.next() % 4 {
            case 0: bytes.removeLast(Int(random.next() % UInt64(bytes.count + 1)))
            case 1 where !bytes.isEmpty: bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
            case 2: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: Int(random.next() % UInt64(bytes.count + 1)))
            default: count = Int(random.next() % 14)
            }
            let decodedIDs = decoded(bytes, count)
            if decodedIDs == nil { refused += 1 }
            #expect(walked(bytes, count) == decodedIDs, "seed \(seed), round \(round): \(bytes) with count \(count)")
        }
        #expect(refused > 50, "seed \(seed): only \(refused) damaged blocks refused")
    }

    /// Houses as version 1 wrote them: every text in full.
    static func versionOne(_ houses: [AddressPoint]) -> [UInt8] {
        var bytes: [UInt8] = [1]
        func text(_ value: String?) {
            guard let value else { return bytes.append(0) }
            bytes.append(UInt8(value.utf8.count + 1))  // every test text is shorter than 127 bytes: a one-byte varint
            bytes.append(contentsOf: value.utf8)
        }
        for house in houses {
            for value in [house.id, house.street, house.place, house.housenumber, house.unit, house.postcode, house.city] { text(value) }
            for value in [house.latitude, house.longitude] { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
        }
        return bytes
    }

    /// Blocks written in version 1 (every text in full) are still read.
    @Test func olderBlocksAreStillRead() throws {
        var random = testRandom("olderBlocksAreStillRead")
        let written = houses(500, &random)
        let bytes = Self.versionOne(written)
        var read: [AddressPoint] = []
        try bytes.withUnsafeBytes { try AddressBlock.decode($0, count: written.count, into: &read) }
        #expect(read == written)
        // The same houses in version 2 take fewer bytes: four of the texts are referred to.
        #expect(AddressBlock.encode(written).count < bytes.count)
    }

    /// A house list gives back the houses in the order appended however they were put in: one by one past a block's
    /// size, in sealed blocks of any size, lists appended to lists; it counts them and their ids' bytes, and two lists
    /// of the same houses in different blocks are equal.
    @Test func aHouseListKeepsItsHousesInOrderWhateverItsBlocks() throws {
        var random = testRandom("aHouseListKeepsItsHousesInOrderWhateverItsBlocks")
        let all = houses(AddressBlock.size * 2 + AddressBlock.size / 3, &random)
        let oneByOne = HouseList(all)
        #expect(Array(oneByOne) == all)
        #expect(oneByOne.count == all.count && oneByOne.idBytes == all.reduce(0) { $0 + $1.id.utf8.count })
        #expect(oneByOne.blocks.map(\.count) == [AddressBlock.size, AddressBlock.size, AddressBlock.size / 3])
        // Pieces of random sizes, some sealed, some not, gathered as an import gathers its threads' pieces, with
        // single houses and empty lists between them.
        var gathered = HouseList()
        var expected: [AddressPoint] = []
        var start = 0
        while start < all.count {
            if random.next() % 5 == 0 {
                gathered.append(all[start])
                expected.append(all[start])
                start += 1
                continue
            }
            let end = min(all.count, start + 1 + Int(random.next() % 3_000))
            var piece = HouseList(all[start..<end])
            if random.next() % 3 != 0 { piece.seal() }
            gathered.append(contentsOf: piece)
            expected += all[start..<end]
            if random.next() % 5 == 0 { gathered.append(contentsOf: HouseList()) }
            if random.next() % 4 == 0 { gathered.seal() }
            start = end
        }
        #expect(Array(gathered) == expected && gathered == oneByOne)
        var byBlock: [AddressPoint] = []
        gathered.forEachBlock { byBlock += $0 }
        #expect(byBlock == expected)
        #expect(gathered.count == expected.count && gathered.idBytes == oneByOne.idBytes)
        #expect(HouseList(all) != HouseList(all.dropLast()))
        // Out of object order (ids of several shapes here): put in `OSMObjectKey`'s order as the records' own sort.
        let shuffled = all.shuffled(using: &random)
        #expect(Array(OSMObjectKey.inOrder(HouseList(shuffled))) == OSMObjectKey.inOrder(shuffled, id: \.id))
        let sorted = HouseList(OSMObjectKey.inOrder(all, id: \.id))
        #expect(OSMObjectKey.inOrder(sorted) == sorted)
        var changed = all
        changed[AddressBlock.size + 3].housenumber += "a"
        #expect(HouseList(all) != HouseList(changed), "a house differing in the second block")
        // Blocks as a store reads them back: checked, and a damaged one named by its place.
        let blocks = oneByOne.blocks
        #expect(try Array(HouseList(checking: blocks)) == all)
        var damaged = blocks
        damaged[1] = HouseList.Block(bytes: Array(blocks[1].bytes.dropLast()), count: blocks[1].count)
        #expect(throws: AddressBlock.CorruptBlock.self) { try HouseList(checking: damaged) }
        do {
            _ = try HouseList(checking: damaged)
        } catch {
            #expect(error.reason.hasPrefix("block 1 of 3:"), "\(error.reason)")
        }
    }

    /// More houses than a block holds go through the store and come back in order; a re-import replaces them.
    @Test func theStoreKeepsHousesInBlocks() throws {
        var random = testRandom("theStoreKeepsHousesInBlocks")
        let store = try CatalogStore(path: scratch.file("blocks.sqlite"))
        let first = houses(AddressBlock.size * 2 + 5, &random)
        try store.replaceAddresses(AddressData(addresses: first))
        #expect(try Array(store.loadAddresses().addresses) == first)
        let second = houses(10, &random)
        try store.replaceAddresses(AddressData(addresses: second))
        #expect(try Array(store.loadAddresses().addresses) == second)
    }

    /// A stored block that does not decode is a storage error saying which blocks and why, not a crash or an empty book.
    @Test func aCorruptStoredBlockIsAStorageErrorThatSaysWhich() throws {
        var random = testRandom("aCorruptStoredBlockIsAStorageErrorThatSaysWhich")
        let path = scratch.file("corrupt.sqlite")
        let store = try CatalogStore(path: path)
        try store.replaceAddresses(AddressData(addresses: houses(10, &random)))
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in try db.execute(sql: "UPDATE address_block SET data = x'FFFF'") }
        #expect {
            _ = try store.loadAddresses()
        } throws: { error in
            guard case .storage(let message) = error as? CatalogError else { return false }
            return message.hasPrefix("the address blocks are corrupt: ")
        }
    }

    /// `asStored` — what an import builds its address index from, without a round trip through the database — gives
    /// the street lines exactly as the store gives them back: random vertices anywhere on Earth, halves of the last
    /// unit included.
    @Test func streetLinesAsStoredAreWhatTheStoreGivesBack() throws {
        var random = testRandom("streetLinesAsStoredAreWhatTheStoreGivesBack")
        let lines = (0..<200).map { i in
            StreetLine(
                id: "osm-w\(i)",
                names: ["Katu \(i)"],
                points: (0..<(1 + i % 9)).map { _ in
                    let half = random.next() % 3 == 0
                    func degrees(_ range: ClosedRange<Double>) -> Double {
                        half ? (Double(Int(random.uniform(range) * 1e7)) + 0.5) / 1e7 : random.uniform(range)
                    }
                    return Coordinate2(degrees(-90...90), degrees(-180...180))
                }
            )
        }
        let store = try CatalogStore(path: scratch.file("lines.sqlite"))
        try store.replaceAddresses(AddressData(streets: lines))
        let loaded = try store.loadAddresses().streets
        let stored = AddressData(streets: lines).asStored.streets
        #expect(loaded.count == lines.count)
        for (a, b) in zip(loaded, stored) { #expect(a.points == b.points, "\(a.id)") }
    }

    /// An area list gives back its areas in order with every vertex at 1e-7° (rounded here by hand), however it was
    /// filled — one by one, list after list — and cut into store blocks of any size; a damaged block is named.
    @Test func anAreaListKeepsItsAreasInOrderAtTheStoresPrecision() throws {
        var random = testRandom("anAreaListKeepsItsAreasInOrderAtTheStoresPrecision")
        let names: [String?] = [nil, "Töölönlahti", "", "中关村"]
        let areas: [MapArea] = (0..<500).map { i in
            let rings = (0..<(1 + Int(random.next() % 3))).map { r in
                MapArea.Ring(
                    outer: r == 0 || random.next() % 3 == 0,
                    points: (0..<(3 + Int(random.next() % 9))).map { _ in Coordinate2(random.uniform(-90...90), random.uniform(-180...180)) }
                )
            }
            return MapArea(id: "osm-w\(i)", kind: random.next() % 2 == 0 ? .water : .building, name: names[Int(random.next() % 4)], rings: rings)
        }
        func degrees(_ x: Double) -> Double { (x * 1e7).rounded() / 1e7 }
        let rounded = areas.map { area in
            var area = area
            for r in area.rings.indices {
                area.rings[r].points = area.rings[r].points.map { Coordinate2(degrees($0.latitude), degrees($0.longitude)) }
            }
            return area
        }
        let oneByOne = AreaList(areas)
        #expect(Array(oneByOne) == rounded)
        var gathered = AreaList()
        var start = 0
        while start < areas.count {
            let end = min(areas.count, start + 1 + Int(random.next() % 60))
            if random.next() % 3 == 0 {
                gathered.append(contentsOf: areas[start..<end])
            } else {
                gathered.append(contentsOf: AreaList(areas[start..<end]))
            }
            start = end
        }
        #expect(gathered == oneByOne && gathered.byteCount == oneByOne.byteCount)
        #expect(oneByOne != AreaList(areas.dropLast()))
        // In object order as an extract's are (read by their ids alone), and put in it when they are not.
        #expect(OSMObjectKey.inOrder(oneByOne) == oneByOne)
        let shuffled = areas.shuffled(using: &random)
        #expect(Array(OSMObjectKey.inOrder(AreaList(shuffled))) == Array(AreaList(OSMObjectKey.inOrder(shuffled, id: \.id))))
        #expect(OSMObjectKey.inOrder(AreaList(shuffled)) == oneByOne)
        for size in [1, 7, 499, 500, 20_000] {
            let blocks = oneByOne.blocks(size: size)
            #expect(blocks.count == (areas.count + size - 1) / size, "blocks of \(size)")
            #expect(try Array(AreaList(checking: blocks)) == rounded, "blocks of \(size)")
            var decoded: [MapArea] = []
            for block in blocks { try block.withUnsafeBytes { try MapAreaBlock.decode($0, into: &decoded) } }
            #expect(decoded == rounded, "blocks of \(size), decoded as a store decodes them")
        }
        var damaged = oneByOne.blocks(size: 100)
        damaged[2].removeLast(5)
        do {
            _ = try AreaList(checking: damaged)
            Issue.record("a damaged block was taken")
        } catch {
            #expect(error.reason.hasPrefix("block 2 of 5:"), "\(error.reason)")
        }
    }

    /// Map areas (rings, holes, names or none, both kinds) come back from the store and from their blocks as
    /// `asStored` gives them; a replacement drops the ones before; a damaged block is refused.
    @Test func mapAreasAsStoredAreWhatTheStoreGivesBack() throws {
        var random = testRandom("mapAreasAsStoredAreWhatTheStoreGivesBack")
        let names: [String?] = [nil, "Töölönlahti", "", "中关村"]
        var areas: [MapArea] = []
        for i in 0..<300 {
            let type = i % 2 == 0 ? "w" : "r"
            let id: String = i == 299 ? MapArea.seaPrefix + "1" : "osm-\(type)\(i)"
            var rings: [MapArea.Ring] = []
            for r in 0..<(1 + i % 4) {
                var points: [Coordinate2] = []
                for _ in 0..<(3 + i % 11) { points.append(Coordinate2(random.uniform(-90...90), random.uniform(-180...180))) }
                rings.append(MapArea.Ring(outer: r == 0 || random.next() % 4 == 0, points: points))
            }
            let kind: MapArea.Kind = random.next() % 2 == 0 ? .water : .building
            areas.append(MapArea(id: id, kind: kind, name: names[Int(random.next() % 4)], rings: rings))
        }
        let stored = AddressData(areas: areas).asStored.areas
        let store = try CatalogStore(path: scratch.file("areas.sqlite"))
        try store.replaceAddresses(AddressData(areas: areas))
        #expect(try store.loadAddresses().areas == stored)
        var decoded: [MapArea] = []
        try MapAreaBlock.encode(areas).withUnsafeBytes { try MapAreaBlock.decode($0, into: &decoded) }
        #expect(decoded == Array(stored))
        try store.replaceAddresses(AddressData(areas: Array(areas.prefix(3))))
        #expect(try Array(store.loadAddresses().areas) == Array(stored.prefix(3)))
        var damaged = MapAreaBlock.encode(areas.prefix(5))
        damaged.removeLast(7)
        #expect(throws: AddressBlock.CorruptBlock.self) {
            var out: [MapArea] = []
            try damaged.withUnsafeBytes { try MapAreaBlock.decode($0, into: &out) }
        }
    }

    /// Migration v5 turns an older database's house rows into blocks.
    @Test func olderHouseRowsMoveIntoBlocks() throws {
        var random = testRandom("olderHouseRowsMoveIntoBlocks")
        let written = houses(AddressBlock.size + 1_000, &random)
        let queue = try DatabaseQueue(path: scratch.file("old.sqlite"))
        try queue.write { db in
            try db.execute(sql: CatalogStore.addressTablesSQL)
            for a in written {
                try db.execute(
                    sql: "INSERT INTO address (id, street, place, housenumber, unit, postcode, city, lat, lon) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    arguments: [a.id, a.street, a.place, a.housenumber, a.unit, a.postcode, a.city, a.latitude, a.longitude]
                )
            }
            try CatalogStore.moveAddressesIntoBlocks(db)
            #expect(try db.tableExists("address") == false)
            #expect(try Array(CatalogStore.houses(db)) == written)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM address_block") == (written.count + AddressBlock.size - 1) / AddressBlock.size)
        }
    }
}
