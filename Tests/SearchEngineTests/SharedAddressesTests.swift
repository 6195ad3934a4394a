import Catalog
import Foundation
import Gazetteer
import GeoCore
import PostgresStore
import Records
import Synchronization
import TestSupport
import Testing

@testable import SearchEngine

/// Houses and street lines in the shared PostgreSQL store: an import puts them there, a replica running at the time
/// loads them again when the feed shows the replacement, and one started later opens with them — so every replica
/// geocodes houses as a single server does.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, Comment(rawValue: TestPostgres.unavailable ?? "")))
struct SharedAddressesTests {
    let scratch = ScratchDirectory("poi-shared-addresses")

    static func answer(_ engine: SearchEngine, _ text: String) throws -> AddressMatch? {
        try engine.addresses.search(GeocodeQuery(text: text, limit: 1)) { _, _ in nil }.first
    }

    @Test func everyReplicaGeocodesTheHousesAnImportPutInTheStore() throws {
        let url = try TestPostgres.database("addresses")
        let running = try SearchEngine(store: PostgresStore(url: url), taxonomy: testTaxonomy)
        #expect(try Self.answer(running, "Kirkkotie 7") == nil)

        let writer = try PostgresStore(url: url)
        #expect(writer.keepsAddresses)
        var data = AddressSnapshotEngineTests.data(["Koivukatu", "Kirkkotie"], town: "Testby")
        data.streets.append(
            StreetLine(
                id: "osm-w77",
                kind: .even,
                names: ["Kirkkotie"],
                points: [Coordinate2(60.203, 24.9), Coordinate2(60.2031234567, 24.9012345678)],
                numbers: [NumberedVertex(vertex: 0, number: 30), NumberedVertex(vertex: 1, number: 40)],
                city: "Testby",
                postcode: "00100"
            )
        )
        // Water and a building for the base tiles: every replica draws them too.
        data.areas = [
            MapArea(
                id: "osm-r5",
                kind: .water,
                name: "Lampi",
                rings: [
                    MapArea.Ring(outer: true, points: [Coordinate2(60.2, 24.9), Coordinate2(60.2, 24.91), Coordinate2(60.2051234567, 24.905)]),
                    MapArea.Ring(outer: false, points: [Coordinate2(60.201, 24.904), Coordinate2(60.201, 24.906), Coordinate2(60.202, 24.905)]),
                ]
            ),
            MapArea(
                id: MapArea.seaPrefix + "1",
                kind: .water,
                rings: [MapArea.Ring(outer: true, points: [Coordinate2(60.1, 24.8), Coordinate2(60.1, 24.9), Coordinate2(60.15, 24.85)])]
            ),
        ]
        let generation = try writer.replaceAddresses(data)
        #expect(try writer.addressGeneration() == generation)
        // What the store gives back is what was written, street vertices at OSM's precision (as SQLite keeps them).
        let stored = try writer.loadAddresses()
        #expect(stored.addresses == data.addresses)
        #expect(stored.streets == data.asStored.streets)
        #expect(stored.areas == data.asStored.areas)

        // The replica that was running: the replacement is a write in the sequence, and its catch-up loads them.
        running.catchUp()
        #expect(try Self.answer(running, "Kirkkotie 7")?.id == "osm-w107")
        let around = BoundingBox(uncheckedWest: 24.7, south: 60.0, east: 25.0, north: 60.3)
        #expect(running.addresses.areas(of: .water, in: around, limit: 10).areas == Array(data.asStored.areas))
        // One started now opens with them, with its own snapshot of them.
        let policy = SearchEngine.SnapshotPolicy(path: scratch.file("replica.snapshot"))
        let later = try SearchEngine(store: PostgresStore(url: url), taxonomy: testTaxonomy, snapshot: policy)
        #expect(try Self.answer(later, "Kirkkotie 7")?.id == "osm-w107")
        let again = try SearchEngine(store: PostgresStore(url: url), taxonomy: testTaxonomy, snapshot: policy)
        #expect(again.addressStartup == "read from the snapshot", "\(again.addressStartup)")
        #expect(again.addresses.base.areas.areas == Array(data.asStored.areas), "the areas from the replica's snapshot")

        // Replaced again: the running replica follows, and nothing is loaded when the sequence moves for other writes.
        try writer.replaceAddresses(AddressSnapshotEngineTests.data(["Rantatie"], town: "Testby"))
        running.catchUp()
        #expect(try Self.answer(running, "Kirkkotie 7") == nil)
        #expect(try Self.answer(running, "Rantatie 3")?.id == "osm-w3")
    }

    /// A replica whose load of the replaced addresses fails (a deadline on a loaded store) has applied the records of
    /// that change but not the addresses: its next catch-up loads them, though the sequence has not moved since.
    @Test func aFailedLoadOfTheAddressesIsTriedAgain() throws {
        let url = try TestPostgres.database("addresses_retry")
        let store = FailingAddressLoads(try PostgresStore(url: url))
        let running = try SearchEngine(store: store, taxonomy: testTaxonomy)
        try PostgresStore(url: url).replaceAddresses(AddressSnapshotEngineTests.data(["Rantatie"], town: "Testby"))
        store.failures.withLock { $0 = 1 }
        running.catchUp()
        #expect(store.failures.withLock { $0 } == 0, "the load was tried and failed")
        #expect(try Self.answer(running, "Rantatie 3") == nil)
        running.catchUp()
        #expect(try Self.answer(running, "Rantatie 3")?.id == "osm-w3", "the addresses loaded on the next catch-up")
    }

    /// A replica behind a trimmed change log reloads every record; the addresses replaced among the changes it never
    /// read are loaded with them (as a server that applied nothing of its own, beside a following one, saw under
    /// `make test`), and tried again at the next catch-up when that load fails.
    @Test(arguments: [0, 1]) func aReloadAfterATrimmedLogLoadsTheReplacedAddresses(failures: Int) throws {
        let url = try TestPostgres.database("addresses_reload_\(failures)")
        let store = FailingAddressLoads(try PostgresStore(url: url))
        let behind = try SearchEngine(store: store, taxonomy: testTaxonomy)
        let writer = try PostgresStore(url: url)
        try writer.replaceAddresses(AddressSnapshotEngineTests.data(["Rantatie"], town: "Testby"))
        try writer.commit([.put(.poi(POIRecord(id: "after", name: "After", category: "food.cafe", lat: 60.2, lon: 24.9)))])
        // Another replica is past every change and the retention is 0: the log is trimmed past `behind`.
        try writer.report(replica: "other", applied: try writer.changeSequence().sequence, snapshot: nil)
        try writer.trim(retention: 0)
        store.failures.withLock { $0 = failures }
        behind.catchUp()
        #expect(behind.replicationStatus?.reloads == 1)
        #expect(behind.poi(id: "after") != nil)
        if failures > 0 {
            #expect(try Self.answer(behind, "Rantatie 3") == nil, "the load failed")
            behind.catchUp()
        }
        #expect(try Self.answer(behind, "Rantatie 3")?.id == "osm-w3", "the replaced addresses after the reload")
    }
}

/// A store whose next `failures` loads of the addresses fail, as a deadline on a loaded PostgreSQL does.
final class FailingAddressLoads: StoreOfRecord {
    let store: PostgresStore
    let failures = Mutex(0)
    init(_ store: PostgresStore) { self.store = store }

    var location: String { store.location }
    func changeSequence() throws(CatalogError) -> ChangeSequence { try store.changeSequence() }
    func poiCount() throws(CatalogError) -> Int { try store.poiCount() }
    func loadAll(blockSize: Int, pois: ([POIRecord]) -> Void) throws(CatalogError) -> (pins: [PinRecord], sequence: ChangeSequence) {
        try store.loadAll(blockSize: blockSize, pois: pois)
    }
    func commit(_ changes: [StoreChange]) throws(CatalogError) -> (before: ChangeSequence, after: ChangeSequence) { try store.commit(changes) }
    var feed: (any ChangeFeed)? { store.feed }
    func poiIDs(prefix: String) throws(CatalogError) -> [String] { try store.poiIDs(prefix: prefix) }
    var keepsAddresses: Bool { store.keepsAddresses }
    func loadAddresses() throws(CatalogError) -> AddressData {
        let fail = failures.withLock { failures in
            defer { failures = max(0, failures - 1) }
            return failures > 0
        }
        if fail { throw .unavailable("the addresses' load ran past its deadline (a test's failure)") }
        return try store.loadAddresses()
    }
    func replaceAddresses(_ data: AddressData, osm: OSMMirrorState?) throws(CatalogError) -> String { try store.replaceAddresses(data, osm: osm) }
    func addressGeneration() throws(CatalogError) -> String? { try store.addressGeneration() }
    func replaceOSMMirror(_ encoded: EncodedOSMMirror) throws(CatalogError) { try store.replaceOSMMirror(encoded) }
    var appliesOSMChanges: Bool { store.appliesOSMChanges }
    func osmMirrorState() throws(CatalogError) -> OSMMirrorState? { try store.osmMirrorState() }
    var databaseFile: String? { store.databaseFile }
}
