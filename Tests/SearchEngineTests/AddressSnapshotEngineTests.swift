import Catalog
import Foundation
import Gazetteer
import GeoCore
import Records
import TestSupport
import Testing

@testable import SearchEngine

/// The engine's address index across restarts: built from the store and its snapshot written at the first start,
/// mapped from that snapshot at the next, and rebuilt — never served stale — once the store's addresses change
/// behind it; an OpenStreetMap import through the engine leaves the new snapshot behind.
@Suite struct AddressSnapshotEngineTests {
    let scratch = ScratchDirectory("poi-address-snapshot")

    static func data(_ streets: [String], town: String) -> AddressData {
        var houses: [AddressPoint] = []
        var lines: [StreetLine] = []
        for (s, street) in streets.enumerated() {
            let lat = 60.2 + Double(s) * 0.003
            for n in 1...20 {
                houses.append(
                    AddressPoint(
                        id: "osm-w\(s * 100 + n)",
                        street: street,
                        housenumber: "\(n)",
                        city: town,
                        latitude: lat,
                        longitude: 24.9 + Double(n) * 0.0002
                    )
                )
            }
            lines.append(StreetLine(id: "osm-w\(9_000 + s)", names: [street], points: [Coordinate2(lat, 24.9), Coordinate2(lat, 24.905)]))
        }
        return AddressData(addresses: houses, streets: lines)
    }

    static func answer(_ engine: SearchEngine, _ text: String) throws -> AddressMatch? {
        try engine.addresses.search(GeocodeQuery(text: text, limit: 1)) { _, _ in nil }.first
    }

    @Test func theAddressIndexIsMappedFromItsSnapshotWhileItMatchesTheStore() throws {
        let store = try CatalogStore(path: scratch.file("a.sqlite"))
        try store.replaceAddresses(Self.data(["Koivukatu", "Kirkkotie"], town: "Testby"))
        let policy = SearchEngine.SnapshotPolicy(path: scratch.file("a.snapshot"))

        let first = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        #expect(
            first.addressStartup.hasPrefix("built from the database") && first.addressStartup.hasSuffix("snapshot written"),
            "\(first.addressStartup)"
        )
        let second = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        #expect(second.addressStartup == "read from the snapshot")
        #expect(try Self.answer(second, "Kirkkotie 7") == Self.answer(first, "Kirkkotie 7"))
        #expect(try Self.answer(second, "Kirkkotie 7")?.id == "osm-w107")

        // Addresses replaced behind the engines' back: the snapshot is of the old generation and is not used.
        try store.replaceAddresses(Self.data(["Rantatie"], town: "Testby"))
        let third = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        #expect(third.addressStartup.contains("written for other addresses"), "\(third.addressStartup)")
        #expect(try Self.answer(third, "Kirkkotie 7")?.kind != .house)
        #expect(try Self.answer(third, "Rantatie 7")?.id == "osm-w7")

        // An import through the engine writes the snapshot of what it stored: the next start maps it.
        var result = OSMImport()
        result.addresses = Self.data(["Pajukuja"], town: "Testby")
        try third.applyOSMImport(result)
        #expect(try Self.answer(third, "Pajukuja 3")?.id == "osm-w3")
        let fourth = try SearchEngine(store: store, taxonomy: testTaxonomy, snapshot: policy)
        #expect(fourth.addressStartup == "read from the snapshot")
        #expect(try Self.answer(fourth, "Pajukuja 3") == Self.answer(third, "Pajukuja 3"))
    }

    @Test func everyReplacementGivesTheAddressesANewGeneration() throws {
        let store = try CatalogStore(path: scratch.file("g.sqlite"))
        let initial = try #require(try store.addressGeneration())
        let first = try store.replaceAddresses(Self.data(["Koivukatu"], town: "Testby"))
        let second = try store.replaceAddresses(Self.data(["Koivukatu"], town: "Testby"))
        #expect(Set([initial, first, second]).count == 3)
        #expect(try store.addressGeneration() == second)
    }
}
