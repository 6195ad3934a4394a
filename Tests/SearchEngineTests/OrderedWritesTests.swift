import Catalog
import Foundation
import GeoCore
import Records
import Synchronization
import TestSupport
import Testing

@testable import SearchEngine

/// Writes to the same ids from several threads at once: afterwards the in-memory index and the SQLite store hold the
/// same version of every record (the store is the oracle: it is what a restart would load).
@Suite struct OrderedWritesTests {
    /// This test's files, removed when it ends.
    let scratch = ScratchDirectory("poi-ordered")

    @Test func concurrentWritersToTheSameIdsLeaveStoreAndIndexEqual() throws {
        let directory = scratch.url
        let store = try CatalogStore(path: directory.appendingPathComponent("w.sqlite").path)
        let engine = try SearchEngine(store: store, taxonomy: testTaxonomy)
        let pins = try (0..<3).map { i in
            try engine.createPin(
                PinInput(uniqueKey: "u\(i)", firstName: "F", lastName: "L", mapString: "", mediaURL: "", latitude: 60, longitude: 24)
            )
        }
        // Widen the window between commit and index update, where an unordered write would slip in.
        engine.afterCommit = { usleep(UInt32.random(in: 0...300)) }
        let ids = (0..<4).map { "same-\($0)" }
        let seed = testSeed("concurrentWritersToTheSameIdsLeaveStoreAndIndexEqual")
        // Rounds of writers racing on one POI id and one pin; after each round, the index must hold what the store
        // holds (the last committed version), whichever writer committed last.
        var random = SplitMix64(seed: seed)
        // Every write must succeed — but a delete of a POI another worker already deleted, which answers notFound —
        // so that a write path that always failed cannot pass as "index and store agree".
        let unexpected = Mutex<[String]>([])
        let succeeded = Atomic<Int>(0)
        @Sendable func expectWrite(_ what: String, allowNotFound: Bool = false, _ write: () throws(SearchError) -> Void) {
            do {
                try write()
                succeeded.add(1, ordering: .relaxed)
            } catch {
                if allowNotFound, case .notFound = error { return }
                unexpected.withLock { $0.append("\(what): \(error)") }
            }
        }
        for round in 0..<60 {
            let id = ids[round % ids.count]
            let pin = pins[round % pins.count]
            let seeds = (0..<4).map { _ in random.next() }
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                var random = SplitMix64(seed: seeds[worker])
                switch random.next() % 5 {
                case 0:
                    expectWrite("delete \(id)", allowNotFound: true) { () throws(SearchError) in try engine.deletePOI(id: id) }
                case 1, 2:
                    expectWrite("update \(pin.id)") { () throws(SearchError) in
                        _ = try engine.updatePin(
                            id: pin.id,
                            PinInput(
                                uniqueKey: "u",
                                firstName: "r\(round)w\(worker)",
                                lastName: "L",
                                mapString: "",
                                mediaURL: "",
                                latitude: random.uniform(-80...80),
                                longitude: random.uniform(-170...170)
                            )
                        )
                    }
                default:
                    let record = POIRecord(
                        id: id,
                        name: "r\(round) w\(worker)",
                        category: "food.cafe",
                        address: nil,
                        city: nil,
                        country: nil,
                        lat: random.uniform(-80...80),
                        lon: random.uniform(-170...170),
                        tags: [:]
                    )
                    expectWrite("upsert \(id)") { () throws(SearchError) in _ = try engine.upsertPOI(record) }
                }
            }
            #expect(unexpected.withLock { $0 }.isEmpty, "round \(round): writes failed: \(unexpected.withLock { $0 })")
            #expect(engine.poi(id: id) == (try store.poi(id: id)), "round \(round), POI \(id): index and store disagree")
            #expect(
                engine.pin(id: pin.id) == (try store.allPins()).first { $0.id == pin.id },
                "round \(round), pin \(pin.id): index and store disagree"
            )
        }
        #expect(succeeded.load(ordering: .relaxed) >= 60 * 4 / 2, "only \(succeeded.load(ordering: .relaxed)) of 240 writes succeeded")
        // A restart from the store answers the same as the running engine.
        let restarted = try SearchEngine(store: store, taxonomy: testTaxonomy)
        #expect(restarted.counts.pois == engine.counts.pois && restarted.counts.pins == engine.counts.pins)
    }
}
