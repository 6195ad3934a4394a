import Catalog
import Foundation
import Gazetteer
import GeoCore
import Records
import TestSupport
import Testing

@testable import SearchEngine

/// Writes update the addresses: a POI written with `addr:*` tags is a house at once, its update moves it, its
/// deletion removes it, and a restart — from the snapshot, from the store, or the CLI's read of the store — answers
/// the same.
@Suite struct RecordHousesEngineTests {
    let scratch = ScratchDirectory("poi-record-houses")

    static func poi(_ id: String, number: String?, street: String = "Kirkkotie", name: String = "Kahvila Kivi") -> POIRecord {
        var tags = ["opening_hours": "Mo-Fr 08:00-16:00"]
        if let number { (tags["addr:housenumber"], tags["addr:street"]) = (number, street) }
        return POIRecord(id: id, name: name, category: "food.cafe", city: "Testby", lat: 60.2031, lon: 24.915, tags: tags)
    }

    /// The best address for `text`, once the background step has indexed every write made so far.
    static func answer(_ engine: SearchEngine, _ text: String) async throws -> String {
        await engine.addressesSettled()
        let match = try engine.addresses.search(GeocodeQuery(text: text, limit: 1)) { _, _ in nil }.first
        guard let match else { return "none" }
        return match.kind == .house ? "\(match.id) \(match.street) \(match.housenumber ?? "")" : "\(match.kind)"
    }

    /// An engine without records over an extract's houses 1–20 on Koivukatu and Kirkkotie (`osm-w1…`, `osm-w101…`).
    static func engineOverTwoStreets() -> SearchEngine {
        SearchEngine(pois: [], addresses: AddressSnapshotEngineTests.data(["Koivukatu", "Kirkkotie"], town: "Testby"), taxonomy: testTaxonomy)
    }

    @Test func aWrittenPOIsHouseIsAnsweredUntilItIsDeleted() async throws {
        let engine = Self.engineOverTwoStreets()
        #expect(try await Self.answer(engine, "Kirkkotie 99") == "street")

        try engine.upsertPOI(Self.poi("cafe-1", number: "99"))
        #expect(try await Self.answer(engine, "Kirkkotie 99") == "cafe-1 Kirkkotie 99")
        #expect(try await Self.answer(engine, "Kirkkotie 7") == "osm-w107 Kirkkotie 7", "the extract's houses stay")
        await engine.addressesSettled()
        let reverse = engine.addresses.reverse(Coordinate2(60.2031, 24.9151))
        #expect(reverse?.match.id == "cafe-1")

        // Moved to another number, then its address tags dropped: the house goes with them.
        try engine.upsertPOI(Self.poi("cafe-1", number: "101;103"))
        #expect(try await Self.answer(engine, "Kirkkotie 99") == "street")
        #expect(try await Self.answer(engine, "Kirkkotie 103") == "cafe-1#2 Kirkkotie 103")
        try engine.upsertPOI(Self.poi("cafe-1", number: nil))
        #expect(try await Self.answer(engine, "Kirkkotie 101") == "street")

        try engine.upsertPOI(Self.poi("cafe-2", number: "5", street: "Uusikatu"))
        #expect(try await Self.answer(engine, "Uusikatu 5") == "cafe-2 Uusikatu 5")
        try engine.deletePOI(id: "cafe-2")
        #expect(try await Self.answer(engine, "Uusikatu 5") == "none")
    }

    @Test func aPOIsOwnAddressReplacesTheExtractsHouseOfTheSameID() async throws {
        let engine = Self.engineOverTwoStreets()
        #expect(try await Self.answer(engine, "Kirkkotie 7") == "osm-w107 Kirkkotie 7")
        // The extract's house osm-w107 corrected to number 77 by a POI of its id.
        try engine.upsertPOI(Self.poi("osm-w107", number: "77"))
        #expect(try await Self.answer(engine, "Kirkkotie 7") == "street")
        #expect(try await Self.answer(engine, "Kirkkotie 77") == "osm-w107 Kirkkotie 77")
        // Without address tags the POI no longer says where the house is: the extract's answer is back.
        try engine.upsertPOI(Self.poi("osm-w107", number: nil))
        #expect(try await Self.answer(engine, "Kirkkotie 7") == "osm-w107 Kirkkotie 7")
        #expect(try await Self.answer(engine, "Kirkkotie 77") == "street")
    }

    @Test func writtenHousesSurviveARestartFromTheSnapshotOrTheStore() async throws {
        let path = scratch.file("r.sqlite")
        let store = try CatalogStore(path: path)
        try store.replaceAddresses(AddressSnapshotEngineTests.data(["Koivukatu", "Kirkkotie"], town: "Testby"))
        let policy = SearchEngine.SnapshotPolicy(path: scratch.file("r.snapshot"))
        let first = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        try first.upsertPOI(Self.poi("cafe-1", number: "99"))
        try first.upsertPOI(Self.poi("osm-w107", number: "77"))
        try first.upsertPOI(Self.poi("plain", number: nil, name: "Kioski"))
        // The first write started a background snapshot (none was there); this one waits for it and writes the rest.
        try first.writeSnapshot()
        first.waitForSnapshot()
        try first.writeSnapshot()

        let fromSnapshot = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        #expect(fromSnapshot.startup == .snapshot)
        let fromStore = try SearchEngine(store: store, taxonomy: testTaxonomy)
        #expect(fromStore.startup == .rebuilt(reason: nil))
        for engine in [fromSnapshot, fromStore] {
            #expect(try await Self.answer(engine, "Kirkkotie 99") == "cafe-1 Kirkkotie 99")
            #expect(try await Self.answer(engine, "Kirkkotie 77") == "osm-w107 Kirkkotie 77")
            #expect(try await Self.answer(engine, "Kirkkotie 7") == "street")
        }
        // The CLI reads them from the store (through its partial index).
        let houses = try store.poiHouses()
        #expect(houses.keys.sorted() == ["cafe-1", "osm-w107"])
        #expect(houses["cafe-1"]?.first?.housenumber == "99")
    }

    @Test func changesFromTheFeedUpdateTheHousesAsLocalWritesDo() {
        var state = EngineState(pois: [Self.poi("a", number: "1")], pins: [])
        #expect(state.recordHouses.all.keys.sorted() == ["a"])
        let before = state.recordHouses.recentVersion
        state.apply(
            ChangeSet(
                sequence: ChangeSequence(identity: "x", sequence: 2),
                records: [.poi(Self.poi("b", number: "2")), .poi(Self.poi("a", number: nil))],
                deleted: []
            )
        )
        #expect(state.recordHouses.all.keys.sorted() == ["b"])
        #expect(state.recordHouses.recentVersion != before)
        state.apply(ChangeSet(sequence: ChangeSequence(identity: "x", sequence: 3), deleted: [(.poi, "b")]))
        #expect(state.recordHouses.isEmpty)
    }

    /// An import's batch is settled at once, single writes once more than `recentLimit` records changed: the answers
    /// stay those of the records as they are, across the settling.
    @Test func manyWritesSettleIntoOneIndexWithoutChangingAnswers() async throws {
        let engine = Self.engineOverTwoStreets()
        let count = 3_000
        let rows: [ImportedRecord] = (0..<count).map { k in .poi(Self.poi("shop-\(k)", number: "\(100 + k)", street: "Pajukuja")) }
        try engine.applyImported(Array(rows.prefix(2_000)))
        #expect(try await Self.answer(engine, "Pajukuja 150") == "shop-50 Pajukuja 150")
        try engine.applyImported(Array(rows.dropFirst(2_000)))
        await engine.addressesSettled()
        let settledBefore = engine.addresses.records.settledVersion
        #expect(engine.addresses.records.recent.isEmpty)
        #expect(engine.addresses.records.recentLimit == 77, "√(2 × 3000)")
        // A write after the settling: only the recent layer is indexed again.
        try engine.upsertPOI(Self.poi("shop-7", number: "9999", street: "Pajukuja"))
        await engine.addressesSettled()
        #expect(engine.addresses.records.settledVersion == settledBefore)
        #expect(engine.addresses.records.recent.count == 1)
        for k in 0..<80 { try engine.upsertPOI(Self.poi("shop-\(1_000 + k)", number: "\(20_000 + k)", street: "Pajukuja")) }
        await engine.addressesSettled()
        #expect(engine.addresses.records.settledVersion != settledBefore, "more than 77 changed: settled")
        #expect(try await Self.answer(engine, "Pajukuja 20079") == "shop-1079 Pajukuja 20079")
        #expect(try await Self.answer(engine, "Pajukuja 1100") == "street", "shop-1000 moved to 20000")
        #expect(try await Self.answer(engine, "Pajukuja 107") == "street", "shop-7 moved away from 107")
        #expect(try await Self.answer(engine, "Pajukuja 9999") == "shop-7 Pajukuja 9999")
        #expect(try await Self.answer(engine, "Pajukuja \(100 + count - 1)") == "shop-\(count - 1) Pajukuja \(100 + count - 1)")
        try engine.deletePOI(id: "shop-8")
        #expect(try await Self.answer(engine, "Pajukuja 108") == "street")
        #expect(try await Self.answer(engine, "Kirkkotie 7") == "osm-w107 Kirkkotie 7")
    }

    /// A read never indexes: until the background step has run, a read gets the book from before the write, and a
    /// caller that waits for the step gets the write's houses.
    @Test func aReadSeesTheBookBeforeTheWriteUntilTheStepHasRun() async {
        let shelf = AddressShelf(AddressBook(base: .empty))
        var records = RecordHouses()
        let poi = Self.poi("cafe-1", number: "5")
        let houses = AddressPoint.houses(id: poi.id, tags: poi.tags, city: poi.city, latitude: poi.lat, longitude: poi.lon)
        #expect(houses.count == 1)
        records.set("cafe-1", houses)
        let written = records
        let release = DispatchSemaphore(value: 0)
        shelf.mark {
            release.wait()  // the step is held here until the reads below are done
            return written
        }
        for _ in 0..<3 { #expect(shelf.book.records.isEmpty, "a read before the step sees the houses before the write") }
        release.signal()
        await shelf.settled(through: AddressShelf.Mark(written))
        #expect(shelf.book.records.houses(of: "cafe-1") == houses)
        #expect(shelf.book.houseCount == 1)
    }
}
