import Catalog
import Datasets
import Foundation
import Gazetteer
import OSM
import PostgresStore
import Records
import TestSupport
import Testing

@testable import SearchEngine

/// Change files over a shared PostgreSQL store: the extract's working copy is a SQLite database (`--mirror`), each
/// file is applied to it and what it makes written to the store in the same step, and a replica takes it from the
/// store's change feed. The store then holds exactly what the working copy holds (which `OSMChangeTests` checks
/// against a fresh import of osmium's changed extract).
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, Comment(rawValue: TestPostgres.unavailable ?? ""))) struct SharedOSMChangeTests {
    static let dataDirectory = Repository.data.path
    static let gazetteer = BundledGazetteer.shared
    static let importer = OSMImporter(mapping: try! OSMTagMapping.load(directory: dataDirectory)) {
        gazetteer.cityAndCountry(latitude: $0, longitude: $1)
    }
    let scratch = ScratchDirectory("poi-shared-osm-change")

    /// The OpenStreetMap POIs by id and the addresses, as a store has them.
    static func outputs(_ store: any StoreOfRecord) throws -> (pois: [String: POIRecord], addresses: AddressData) {
        var pois: [String: POIRecord] = [:]
        _ = try store.loadAll(blockSize: 10_000) { block in for poi in block where poi.id.hasPrefix(OSMImport.idPrefix) { pois[poi.id] = poi } }
        return (pois, try store.loadAddresses())
    }

    static func expectSame(_ copy: CatalogStore, _ shared: PostgresStore, _ what: String) throws {
        let (a, b) = (try outputs(copy), try outputs(shared))
        #expect(a.pois.count == b.pois.count, "\(what): POIs")
        if let id = a.pois.keys.sorted().first(where: { a.pois[$0] != b.pois[$0] }) {
            Issue.record(
                "\(what): POI \(id) is \(String(describing: b.pois[id])) in the store, \(String(describing: a.pois[id])) in the working copy"
            )
        }
        #expect(Array(a.addresses.addresses) == Array(b.addresses.addresses), "\(what): houses")
        #expect(a.addresses.streets == b.addresses.streets, "\(what): streets")
        #expect(Array(a.addresses.areas) == Array(b.addresses.areas), "\(what): areas")
    }

    @Test func changeFilesReachTheSharedStoreAndItsReplicas() throws {
        let seed = testSeed("changeFilesReachTheSharedStoreAndItsReplicas") % 1_000_000
        let url = try TestPostgres.database("shared_osm_change")
        var extract = scratch.file("base.osm.pbf")
        _ = try PythonScript.run(["scripts/osm/synthetic.py", extract, "--nodes", "6000", "--seed", "\(seed)"])
        let copy = try CatalogStore(path: scratch.file("copy.sqlite"))
        try OSMImporter.write(try Self.importer.read(extract), to: copy)
        let shared = try PostgresStore(url: url)
        // A POI of another source stays; an OSM POI the extract no longer has goes.
        let other = POIRecord(id: "mine-1", name: "Oma kahvila", category: "food.cafe", lat: 60.17, lon: 24.94)
        let stale = POIRecord(id: "osm-n999999999", name: "Gone", category: "food.cafe", lat: 60.17, lon: 24.94)
        try shared.commit([.put(.poi(other)), .put(.poi(stale))])
        let copied = try OSMImporter.copyOutputs(of: copy, to: shared)
        #expect(copied.put > 0 && copied.removed == 1)
        try Self.expectSame(copy, shared, "after the import (SEED=\(seed))")
        let replica = try SearchEngine(store: PostgresStore(url: url), taxonomy: testTaxonomy)
        #expect(replica.poi(id: "mine-1") == other)
        for step in 1...2 {
            let change = scratch.file("change-\(step).osc.gz")
            _ = try PythonScript.run(["scripts/osm/changes.py", extract, change, "--seed", "\(seed + UInt64(step))", "--changes", "250"])
            let result = try Self.importer.apply(try OSMChange.read(change), name: "change-\(step)", to: copy, alsoTo: shared)
            #expect(result.report.poisPut + result.report.poisRemoved > 0)
            try Self.expectSame(copy, shared, "after change \(step) (SEED=\(seed))")
            // The replica takes the POIs and the new addresses from the feed.
            replica.catchUp()
            let pois = try Self.outputs(copy).pois
            #expect(pois.values.allSatisfy { replica.poi(id: $0.id) == $0 }, "the replica's POIs after change \(step)")
            for change in result.changes {
                if case .delete(_, let id) = change { #expect(replica.poi(id: id) == nil, "\(id), deleted by change \(step)") }
            }
            #expect(replica.addresses.houseCount == result.addresses?.addresses.count, "the replica's houses after change \(step)")
            // The next file is drawn against the extract as this one leaves it.
            let changed = scratch.file("changed-\(step).osm.pbf")
            _ = try Tool.run("osmium", ["apply-changes", extract, change, "-o", changed, "--overwrite"])
            extract = changed
        }
        #expect(replica.poi(id: "mine-1") == other)
    }
}
