import Catalog
import Foundation
import GeoCore
import Records
import TestSupport
import Testing

@testable import SearchEngine

/// Readers query the engine while a writer moves POIs — the production path (`SearchEngine`'s writer lock and
/// its published state), not a test-only wrapper.
@Suite struct EngineConcurrencyTests {
    /// Every POI has two places, and a writer moves random POIs between them while readers ask for the nearest 20
    /// around random points and for records by id. Each answer must come from a whole state: as many POIs as ever,
    /// each at one of its two places, nearest first. At the end the engine answers as a brute-force scan of its
    /// records does.
    @Test func readersSeeWholeStatesWhileAWriterMovesPOIs() async throws {
        var random = testRandom("readersSeeWholeStatesWhileAWriterMovesPOIs")
        let seed = random.next()
        let count = 5_000
        let places: [(Coordinate, Coordinate)] = (0..<count).map { _ in
            let latitude = random.uniform(59.9...60.4)
            let longitude = random.uniform(24.5...25.4)
            return (
                Coordinate(uncheckedLatitude: latitude, longitude: longitude), Coordinate(uncheckedLatitude: latitude - 0.3, longitude: longitude)
            )
        }
        func poi(_ index: Int, moved: Bool) -> POIRecord {
            let place = moved ? places[index].1 : places[index].0
            return POIRecord(id: "m\(index)", name: "Kahvila \(index)", category: "food.cafe", lat: place.latitude, lon: place.longitude, tags: [:])
        }
        let engine = SearchEngine(pois: (0..<count).map { poi($0, moved: false) }, taxonomy: testTaxonomy)
        let failures = try await withThrowingTaskGroup(of: [String].self) { group in
            group.addTask {
                var random = SplitMix64(seed: seed)
                for _ in 0..<3_000 {
                    _ = try engine.upsertPOI(poi(Int(random.next() % UInt64(count)), moved: random.nextUnit() < 0.5))
                }
                return []
            }
            for reader in 0..<3 {
                group.addTask {
                    var random = SplitMix64(seed: seed &+ UInt64(reader) &+ 1)
                    var failures: [String] = []
                    for _ in 0..<400 where failures.count < 5 {
                        let index = Int(random.next() % UInt64(count))
                        let origin = random.nextUnit() < 0.5 ? places[index].0 : places[index].1
                        let page = engine.nearby(NearbyQuery(Around(origin), limit: 20))
                        let distances = page.results.compactMap(\.distance)
                        if page.results.count != 20 || distances.count != 20 || zip(distances, distances.dropFirst()).contains(where: { $0 > $1 }) {
                            failures.append("SEED=\(seed): nearby around POI \(index) answered \(page.results.count) hits at \(distances)")
                        }
                        for hit in page.results {
                            guard case .poi(let found) = hit.record, let number = Int(found.id.dropFirst()) else { continue }
                            let position = hit.record.position
                            if position != places[number].0 && position != places[number].1 {
                                failures.append("SEED=\(seed): \(found.id) at \(position), neither of its places")
                            }
                        }
                        if engine.counts.pois != count { failures.append("SEED=\(seed): \(engine.counts.pois) POIs, not \(count)") }
                        if let record = engine.poi(id: "m\(index)"), record != poi(index, moved: false) && record != poi(index, moved: true) {
                            failures.append("SEED=\(seed): m\(index) read as \(record)")
                        }
                    }
                    return failures
                }
            }
            var all: [String] = []
            for try await failures in group { all += failures }
            return all
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        // The final state against brute force over the engine's own records.
        let records = (0..<count).compactMap { engine.poi(id: "m\($0)") }
        #expect(records.count == count)
        for _ in 0..<50 {
            let origin = Coordinate(uncheckedLatitude: random.uniform(59.6...60.4), longitude: random.uniform(24.5...25.4))
            var scanned: [(distance: Double, id: String)] = []
            for record in records {
                let distance = GreatCircle.distance(origin, Coordinate(uncheckedLatitude: record.lat, longitude: record.lon))
                scanned.append((distance, record.id))
            }
            scanned.sort { left, right in left.distance < right.distance || (left.distance == right.distance && left.id < right.id) }
            let expected: [String] = scanned.prefix(20).map { $0.id }
            let answered = engine.nearby(NearbyQuery(Around(origin), limit: 20)).results.map(\.id)
            #expect(answered == expected, "SEED=\(seed): nearest 20 around \(origin)")
        }
    }
}
