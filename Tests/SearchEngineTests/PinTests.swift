import Catalog
import Foundation
import GeoCore
import Records
import TestSupport
import Testing

@testable import SearchEngine

@Suite struct PinTests {
    func input(_ key: String, _ name: String, lat: Double = 37.386, lon: Double = -122.083, url: String = "https://example.org") -> PinInput {
        PinInput(uniqueKey: key, firstName: name, lastName: "Lovelace", mapString: "Mountain View, CA", mediaURL: url, latitude: lat, longitude: lon)
    }

    @Test func createUpdateListDeletePersist() throws {
        let scratch = ScratchDirectory("poi-pins")
        let path = scratch.file("pins.sqlite")
        let engine = try SearchEngine(store: CatalogStore(path: path), taxonomy: testTaxonomy)
        var created: [PinRecord] = []
        for i in 0..<12 { created.append(try engine.createPin(input(i % 3 == 0 ? "u1" : "u2", "Ada\(i)"))) }
        #expect(Set(created.map(\.id)).count == 12)
        #expect(created.allSatisfy { $0.id.hasPrefix("p_") && $0.createdAt == $0.updatedAt && $0.createdAt.hasSuffix("Z") })
        // Updating moves a pin to the front of "newest first".
        let updated = try engine.updatePin(id: created[3].id, input("u1", "Ada3b", lat: 60.17, lon: 24.94))
        #expect(updated.createdAt == created[3].createdAt && updated.updatedAt > created[3].updatedAt)
        let all = engine.pins(limit: 100, skip: 0)
        #expect(all.total == 12)
        #expect(all.results.first?.id == created[3].id)
        #expect(zip(all.results, all.results.dropFirst()).allSatisfy { $0.updatedAt >= $1.updatedAt })
        // Pages of 5 concatenate to the whole list.
        var paged: [String] = []
        for skip in stride(from: 0, to: 12, by: 5) { paged += engine.pins(limit: 5, skip: skip).results.map(\.id) }
        #expect(paged == all.results.map(\.id))
        #expect(engine.pins(limit: 100, skip: 0, uniqueKey: "u1").results.allSatisfy { $0.uniqueKey == "u1" })
        #expect(engine.pins(limit: 100, skip: 0, uniqueKey: "u1").total == 4)
        // The moved pin is found at its new place; pins are kind=pin only.
        let near = try engine.nearby(NearbyQuery(Around(Coordinate(latitude: 60.17, longitude: 24.94)), kind: .pin, limit: 1))
        #expect(near.results.first?.id == created[3].id)
        #expect(try engine.nearby(NearbyQuery(Around(Coordinate(latitude: 60.17, longitude: 24.94)), kind: .poi)).results.isEmpty)
        #expect(try engine.search(SearchQuery(text: "ada3b", kind: .pin)).results.first?.id == created[3].id)
        try engine.deletePin(id: created[0].id)
        #expect(throws: SearchError.notFound(kind: "pin", id: created[0].id)) { try engine.deletePin(id: created[0].id) }
        // Everything is in SQLite: a fresh engine sees the same pins.
        let reopened = try SearchEngine(store: CatalogStore(path: path), taxonomy: testTaxonomy)
        #expect(reopened.pins(limit: 100, skip: 0).results.map(\.id) == engine.pins(limit: 100, skip: 0).results.map(\.id))
    }

    @Test func ownersKeepTheirPinsWithinTheirCap() throws {
        let scratch = ScratchDirectory("poi-pin-owners")
        let path = scratch.file("pins.sqlite")
        let engine = try SearchEngine(store: CatalogStore(path: path), taxonomy: testTaxonomy)
        let first = try engine.createPin(input("k", "A"), owner: "alice", maximumPerOwner: 2)
        _ = try engine.createPin(input("k", "A2"), owner: "alice", maximumPerOwner: 2)
        #expect(throws: SearchError.quota("you have 2 pins, the most one user may have here: delete or move one instead")) {
            try engine.createPin(input("k", "A3"), owner: "alice", maximumPerOwner: 2)
        }
        _ = try engine.createPin(input("k", "B"), owner: "bob", maximumPerOwner: 2)
        _ = try engine.createPin(input("k", "keyed"))
        // Moving keeps the owner; the owner's list holds only theirs.
        #expect(try engine.updatePin(id: first.id, input("k", "A moved")).owner == "alice")
        #expect(engine.pins(limit: 10, skip: 0, owner: .user("alice")).results.map(\.owner) == ["alice", "alice"])
        #expect(engine.pins(limit: 10, skip: 0, owner: .nobody).results.map(\.firstName) == ["keyed"])
        #expect(engine.pinCount(owner: "bob") == 1)
        // Deleting one makes room again.
        try engine.deletePin(id: first.id)
        _ = try engine.createPin(input("k", "A4"), owner: "alice", maximumPerOwner: 2)
        let reopened = try SearchEngine(store: CatalogStore(path: path), taxonomy: testTaxonomy)
        #expect(
            reopened.pins(limit: 10, skip: 0).results.sorted { $0.id < $1.id } == engine.pins(limit: 10, skip: 0).results.sorted { $0.id < $1.id }
        )
        #expect(reopened.pinCount(owner: "alice") == 2)
    }

    @Test func pinValidation() throws {
        let engine = SearchEngine(pois: [], taxonomy: testTaxonomy)
        #expect(throws: SearchError.self) { try engine.createPin(input("u", "A", lat: 91)) }
        #expect(throws: SearchError.notFound(kind: "pin", id: "nope")) { try engine.updatePin(id: "nope", input("u", "A")) }
    }

    @Test func poiWritesAreValidatedAndVisible() throws {
        let engine = SearchEngine(pois: [], taxonomy: testTaxonomy)
        _ = try engine.upsertPOI(poi("x", "Cafe X", "food.cafe", 60.17, 24.94))
        #expect(engine.poi(id: "x")?.name == "Cafe X")
        _ = try engine.upsertPOI(poi("x", "Cafe Y", "food.cafe", 60.18, 24.95))
        #expect(try engine.search(SearchQuery(text: "cafe y")).results.first?.id == "x")
        // The old name's words are gone from the index ("cafe x" still finds the record through "cafe" alone).
        #expect(try engine.search(SearchQuery(text: "x")).results.isEmpty)
        #expect(throws: SearchError.invalid(parameter: "category", rule: "must be a lowercase dot path such as food.cafe")) {
            try engine.upsertPOI(poi("z", "Z", "Food Cafe", 0, 0))
        }
        try engine.deletePOI(id: "x")
        #expect(engine.poi(id: "x") == nil)
        #expect(try engine.search(SearchQuery(text: "cafe")).results.isEmpty)
    }

    /// The keyword test of a nearby or within walk reads only postings when there is no category: a record moved or
    /// deleted must answer by its current words and place through either planner route.
    @Test(arguments: [SearchEngine.Route.spatialFirst, .textFirst])
    func nearbyAndWithinKeywordsFollowWrites(route: SearchEngine.Route) throws {
        let engine = SearchEngine(pois: [], taxonomy: testTaxonomy)
        engine.forcedRoute = route
        _ = try engine.upsertPOI(poi("a", "Cafe A", "food.cafe", 60.17, 24.94))
        _ = try engine.upsertPOI(poi("b", "Cafe B", "food.cafe", 60.171, 24.941))
        _ = try engine.upsertPOI(poi("c", "Bar C", "food.bar", 60.172, 24.942))
        let origin = try Coordinate(latitude: 60.17, longitude: 24.94)
        let box = QueryArea.box(try BoundingBox(west: 24.9, south: 60.1, east: 25, north: 60.2))
        func nearby(_ text: String) -> [String] { engine.nearby(NearbyQuery(Around(origin, radius: 5_000), text: text)).results.map(\.id) }
        func within(_ text: String) -> [String] { engine.within(WithinQuery(box, text: text)).results.map(\.id).sorted() }
        #expect(nearby("cafe") == ["a", "b"])
        #expect(within("cafe") == ["a", "b"])
        _ = try engine.upsertPOI(poi("b", "Bar B", "food.bar", 60.171, 24.941))
        _ = try engine.upsertPOI(poi("a", "Cafe A", "food.cafe", 61.5, 23.8))  // moved 150 km away
        try engine.deletePOI(id: "c")
        #expect(nearby("cafe").isEmpty)
        #expect(within("cafe").isEmpty)
        #expect(nearby("bar") == ["b"])
        #expect(within("bar") == ["b"])
    }
}
