import Catalog
import GeoCore
import Records
import SpatialIndex
import TestSupport
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
                Around(Coordinate(latitude: origin.lat, longitude: origin.lon), radius: round % 3 == 0 ? random.uniform(100...30_000) : nil),
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

    /// Without a keyword, nearby equals brute force over the category filter (none, one, or several categories at
    /// once), at any offset, and counts as far as asked.
    @Test func nearbyMatchesBruteForce() throws {
        var random = testRandom("nearbyMatchesBruteForce")
        let pois = randomPOIs(3_000, &random)
        let engine = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        let filters: [[String]] = [[], ["food"], ["food.cafe", "transport"]]
        for round in 0..<150 {
            let o = pois[Int(random.next() % UInt64(pois.count))]
            let origin = try Coordinate(latitude: o.lat, longitude: o.lon)
            let categories = filters[Int(random.next() % 3)]
            let offset = round % 2 == 0 ? 0 : Int(random.next() % 60)
            let countUpTo: Int? = round % 3 == 0 ? 1 + Int(random.next() % 1_500) : nil
            let page = engine.nearby(NearbyQuery(Around(origin), categories: categories, limit: 25, offset: offset, countUpTo: countUpTo))
            var ranked: [(index: Int, key: Double)] = []
            for (index, p) in pois.enumerated() where categories.isEmpty || categories.contains(where: { p.category.isCategory(under: $0) }) {
                ranked.append((index, ChordDistance.key(latitude1: o.lat, longitude1: o.lon, latitude2: p.lat, longitude2: p.lon)))
            }
            ranked.sort { $0.key != $1.key ? $0.key < $1.key : $0.index < $1.index }
            let expected = ranked.dropFirst(offset).prefix(25).map { pois[$0.index].id }
            let context = "round \(round): categories \(categories), offset \(offset), countUpTo \(String(describing: countUpTo))"
            #expect(page.results.map(\.id) == Array(expected), "\(context)")
            #expect(page.total == countUpTo.map { min(ranked.count, $0) }, "\(context)")
            #expect((page.next != nil) == (ranked.count > offset + 25), "\(context)")
        }
    }

    /// Paging with the cursor gives the same records as one long page, even when records are inserted between
    /// pages: new records nearer than the cursor are not repeated, nothing farther is skipped.
    @Test func cursorIsStableUnderInserts() throws {
        var random = testRandom("cursorIsStableUnderInserts")
        let pois = randomPOIs(2_000, &random)
        let engine = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        let origin = try Coordinate(latitude: 60.17, longitude: 24.94)
        let long = engine.nearby(NearbyQuery(Around(origin), limit: 100)).results.map(\.id)
        var paged: [String] = []
        var after: Page.Position?
        for page in 0..<10 {
            let result = engine.nearby(NearbyQuery(Around(origin), limit: 10, after: after?.nearest))
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
        let expected = inRecordOrder(pois).filter { box.contains(latitude: $0.lat, longitude: $0.lon) }.map(\.id)
        var paged: [String] = []
        var after: Page.Position?
        repeat {
            let page = engine.within(WithinQuery(.box(box), limit: 37, after: after?.record))
            paged += page.results.map(\.id)
            after = page.next
        } while after != nil
        #expect(paged == expected)
        // Numbered pages: an offset into the same order, and the count.
        for offset in [0, 1, 36, 37, expected.count - 3, expected.count, expected.count + 5] {
            let page = engine.within(WithinQuery(.box(box), limit: 37, offset: offset, countUpTo: 50))
            #expect(page.results.map(\.id) == Array(expected.dropFirst(offset).prefix(37)), "offset \(offset)")
            #expect(page.total == min(expected.count, 50), "offset \(offset)")
        }
    }

    /// A filter of several categories keeps a record under any of them, and nothing else.
    @Test func withinKeepsAnyOfSeveralCategories() throws {
        var random = testRandom("withinKeepsAnyOfSeveralCategories")
        let pois = randomPOIs(2_000, &random)
        let engine = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        let box = try BoundingBox(west: -180, south: -90, east: 180, north: 90)
        for categories in [["food"], ["food.cafe", "transport"], ["office", "food.restaurant", "nothing.here"]] {
            let expected = inRecordOrder(pois).filter { p in categories.contains { p.category.isCategory(under: $0) } }.map(\.id)
            let page = engine.within(WithinQuery(.box(box), categories: categories, limit: 10_000))
            #expect(page.results.map(\.id) == expected, "\(categories)")
            #expect(!expected.isEmpty, "the corpus has records of \(categories)")
        }
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
