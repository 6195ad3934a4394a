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

    /// Blocks written in version 1 (every text in full) are still read.
    @Test func olderBlocksAreStillRead() throws {
        var random = testRandom("olderBlocksAreStillRead")
        let written = houses(500, &random)
        var bytes: [UInt8] = [1]
        func text(_ value: String?) {
            guard let value else { return bytes.append(0) }
            bytes.append(UInt8(value.utf8.count + 1))  // every test text is shorter than 127 bytes: a one-byte varint
            bytes.append(contentsOf: value.utf8)
        }
        for house in written {
            for value in [house.id, house.street, house.place, house.housenumber, house.unit, house.postcode, house.city] { text(value) }
            for value in [house.latitude, house.longitude] { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
        }
        var read: [AddressPoint] = []
        try bytes.withUnsafeBytes { try AddressBlock.decode($0, count: written.count, into: &read) }
        #expect(read == written)
        // The same houses in version 2 take fewer bytes: four of the texts are referred to.
        #expect(AddressBlock.encode(written).count < bytes.count)
    }

    /// More houses than a block holds go through the store and come back in order; a re-import replaces them.
    @Test func theStoreKeepsHousesInBlocks() throws {
        var random = testRandom("theStoreKeepsHousesInBlocks")
        let store = try CatalogStore(path: scratch.file("blocks.sqlite"))
        let first = houses(AddressBlock.size * 2 + 5, &random)
        try store.replaceAddresses(AddressData(addresses: first))
        #expect(try store.loadAddresses().addresses == first)
        let second = houses(10, &random)
        try store.replaceAddresses(AddressData(addresses: second))
        #expect(try store.loadAddresses().addresses == second)
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
        #expect(decoded == stored)
        try store.replaceAddresses(AddressData(areas: Array(areas.prefix(3))))
        #expect(try store.loadAddresses().areas == Array(stored.prefix(3)))
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
            #expect(try CatalogStore.houses(db) == written)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM address_block") == 2)
        }
    }
}
