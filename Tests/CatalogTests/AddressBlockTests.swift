import Foundation
import GRDB
import GeoCore
import TestSupport
import Testing

@testable import Catalog

@Suite struct AddressBlockTests {
    let scratch = ScratchDirectory("poi-address-block")

    /// Random houses: absent, empty, ASCII, Latin and Chinese texts, and any Double position (its bits kept).
    func houses(_ count: Int, _ random: inout SplitMix64) -> [AddressPoint] {
        let texts: [String?] = [nil, "", "Mannerheimintie", "Mannerheimvägen 13 A", "中关村大街", "13-15", "00100", "a\u{1F}b"]
        func text() -> String? { texts[Int(random.next() % UInt64(texts.count))] }
        return (0..<count).map { i in
            AddressPoint(
                id: "osm-n\(i)" + (i % 7 == 0 ? "#2" : ""),
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

    @Test func blocksGiveBackWhatWasWritten() throws {
        var random = testRandom("blocksGiveBackWhatWasWritten")
        for count in [0, 1, 2, 317] {
            let written = houses(count, &random)
            var read: [AddressPoint] = []
            try AddressBlock.encode(written).withUnsafeBytes { try AddressBlock.decode($0, count: count, into: &read) }
            #expect(read == written, "\(count) houses")
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
        #expect(decode([2] + bytes.dropFirst())?.contains("version 2") == true)
        #expect(decode([]) != nil)
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
        let stored = CatalogStore.asStored(AddressData(streets: lines)).streets
        #expect(loaded.count == lines.count)
        for (a, b) in zip(loaded, stored) { #expect(a.points == b.points, "\(a.id)") }
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
