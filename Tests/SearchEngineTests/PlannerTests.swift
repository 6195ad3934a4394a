import Catalog
import GeoCore
import SpatialIndex
import Testing

@testable import SearchEngine

@Suite struct PlannerTests {
    /// Both routes of the planner return exactly the same records in the same order.
    @Test func bothRoutesAgree() throws {
        var random = testRandom("bothRoutesAgree")
        let pois = randomPOIs(4_000, &random)
        let spatial = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        spatial.forcedRoute = .spatialFirst
        let text = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        text.forcedRoute = .textFirst
        let keywords = [
            "cafe", "java", "kahv", "pizza bar", "咖啡", "中关村", "coffee", "sushii", "harbour market", "university", "星巴克咖啡", "cafe b", "咖啡 c", "bar k",
            "coffee shop",
        ]
        for round in 0..<200 {
            let origin = pois[Int(random.next() % UInt64(pois.count))]
            let query = try NearbyQuery(
                origin: Coordinate(latitude: origin.lat, longitude: origin.lon),
                radius: round % 3 == 0 ? random.uniform(100...30_000) : nil,
                text: keywords[Int(random.next() % UInt64(keywords.count))],
                category: round % 4 == 0 ? "food" : nil,
                limit: 1 + Int(random.next() % 30)
            )
            let a = spatial.nearby(query)
            let b = text.nearby(query)
            #expect(a.results.map(\.id) == b.results.map(\.id), "round \(round): \(query.text ?? "")")
            #expect(a.next == b.next)
        }
    }

    /// Without a keyword, nearby equals brute force over the category filter.
    @Test func nearbyMatchesBruteForce() throws {
        var random = testRandom("nearbyMatchesBruteForce")
        let pois = randomPOIs(3_000, &random)
        let engine = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        for _ in 0..<100 {
            let o = pois[Int(random.next() % UInt64(pois.count))]
            let origin = try Coordinate(latitude: o.lat, longitude: o.lon)
            let category: String? = random.nextUnit() < 0.5 ? "food" : nil
            let page = engine.nearby(NearbyQuery(origin: origin, category: category, limit: 25))
            var ranked: [(index: Int, key: Double)] = []
            for (index, p) in pois.enumerated() where category == nil || p.category.hasPrefix("food.") {
                ranked.append((index, ChordDistance.key(latitude1: o.lat, longitude1: o.lon, latitude2: p.lat, longitude2: p.lon)))
            }
            ranked.sort { $0.key != $1.key ? $0.key < $1.key : $0.index < $1.index }
            let expected = ranked.prefix(25).map { pois[$0.index].id }
            #expect(page.results.map(\.id) == Array(expected))
        }
    }

    /// Paging with the cursor gives the same records as one long page, even when records are inserted between
    /// pages: new records nearer than the cursor are not repeated, nothing farther is skipped.
    @Test func cursorIsStableUnderInserts() throws {
        var random = testRandom("cursorIsStableUnderInserts")
        let pois = randomPOIs(2_000, &random)
        let engine = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        let origin = try Coordinate(latitude: 60.17, longitude: 24.94)
        let long = engine.nearby(NearbyQuery(origin: origin, limit: 100)).results.map(\.id)
        var paged: [String] = []
        var after: Page.Position?
        for page in 0..<10 {
            let result = engine.nearby(NearbyQuery(origin: origin, limit: 10, after: after?.nearest))
            paged += result.results.map(\.id)
            after = result.next
            // Insert a record right at the origin (nearer than the cursor) and one far away.
            _ = try engine.upsertPOI(poi("new-near-\(page)", "new", "office", 60.17, 24.94))
            _ = try engine.upsertPOI(poi("new-far-\(page)", "new", "office", -60, -100))
        }
        #expect(paged == long)
    }

    @Test func withinPagesInRecordOrder() throws {
        var random = testRandom("withinPagesInRecordOrder")
        let pois = randomPOIs(1_000, &random)
        let engine = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        let box = try BoundingBox(west: 24, south: 59.9, east: 26, north: 60.5)
        let expected = pois.filter { box.contains(latitude: $0.lat, longitude: $0.lon) }.map(\.id)
        var paged: [String] = []
        var after: Page.Position?
        repeat {
            let page = engine.within(WithinQuery(area: .box(box), limit: 37, after: after?.record))
            paged += page.results.map(\.id)
            after = page.next
        } while after != nil
        #expect(paged == expected)
    }
}

extension Hit {
    var id: String {
        switch record {
        case .poi(let poi): return poi.id
        case .pin(let pin): return pin.id
        }
    }

    var name: String {
        switch record {
        case .poi(let poi): return poi.name
        case .pin(let pin): return pin.firstName
        }
    }
}
