import Foundation
import GeoCore
import HTTPServer
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Records
import SearchEngine
import TestSupport
import Testing

@testable import HTTPAPI

/// The tile cache never answers from data older than the request's: a server that keeps tiles and one that keeps
/// none, over one engine, give the same answers — status, bytes, ETag, every field — to a seeded walk of tile
/// requests (POIs and pins, zooms 11–17, filters, gzip, `If-None-Match`) between writes of POIs and pins, near the
/// tiles asked and farther away. And the cache holds no more than its budget. Replay a failure with SEED=<printed seed>.
@Suite struct TileCacheTests {
    /// The walk's state, used by one task at a time (the router test closures are `@Sendable`).
    final class Walk: @unchecked Sendable {
        var random: SplitMix64
        var pins: [String] = []
        var pois: [String] = (0..<60).map { "p\($0)" }
        var tags: [String] = []
        var (notModified, writes, compared) = (0, 0, 0)

        init(seed: UInt64) { random = SplitMix64(seed: seed) }

        func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        func unit() -> Double { Double(random.next() >> 11) / Double(1 << 53) }
        func chance(_ one: UInt64) -> Bool { random.next() % one == 0 }
        /// A position among makeEngine's Helsinki POIs, or in the degree around them (four cells of `ChangedCells` a
        /// side), so that some writes change a tile and others leave it be.
        func position() -> (Double, Double) {
            chance(2) ? (60.165 + 0.07 * unit(), 24.93 + 0.02 * unit()) : (59.7 + unit(), 24.4 + unit())
        }
    }

    @Test func keptTilesAreTheTilesMadeNow() async throws {
        let seed = testSeed("keptTilesAreTheTilesMadeNow")
        let walk = Walk(seed: seed)
        let engine = makeEngine()
        var uncachedConfiguration = ServerConfiguration()
        uncachedConfiguration.tileCacheBytes = 0
        let cached = buildApplication(configuration: ServerConfiguration(), engine: engine, gazetteer: nil, metrics: testRegistry)
        let uncached = buildApplication(configuration: uncachedConfiguration, engine: engine, gazetteer: nil, metrics: testRegistry)
        let tiles = (0..<16).map { _ in
            let (latitude, longitude) = walk.position()
            return TileRouteTests.tile(11 + Int(walk.random.next() % 6), latitude, longitude)
        }
        try await cached.test(.router) { a in
            try await uncached.test(.router) { b in
                for step in 0..<400 {
                    // A write in about one step of four: a POI or a pin put, moved or deleted, in the tiles asked.
                    if walk.chance(4) {
                        try Self.write(step, engine, walk)
                        continue
                    }
                    // One of a few tiles, so that a tile kept is asked again after writes elsewhere and in it.
                    let tile = walk.pick(tiles)
                    let layer = walk.pick(["pois", "pins"])
                    let filters = walk.pick(["", "?cluster=0", "?q=cafe", "?category=food.cafe&cluster=0", "?coordsys=gcj02"])
                    let uri = "/tiles/\(layer)/\(tile).mvt\(filters)"
                    var headers: HTTPFields = [:]
                    if walk.chance(2) { headers[.acceptEncoding] = "gzip" }
                    if let tag = walk.tags.last, walk.chance(5) { headers[.ifNoneMatch] = tag }
                    // Asked twice, the second time perhaps from what the first kept, and perhaps with the tag it gave.
                    for round in 0..<2 {
                        if round == 1, let tag = walk.tags.last, walk.chance(2) { headers[.ifNoneMatch] = tag }
                        let x = try await a.execute(uri: uri, method: .get, headers: headers)
                        let y = try await b.execute(uri: uri, method: .get, headers: headers)
                        let what = "SEED=\(seed) step \(step) round \(round): \(uri) \(headers)"
                        #expect(x.status == y.status, "\(what): \(x.status) against \(y.status)")
                        #expect(Array(x.body.readableBytesView) == Array(y.body.readableBytesView), "\(what): bodies differ")
                        for name: HTTPField.Name in [.eTag, .contentEncoding, .cacheControl, .vary, .contentType] {
                            #expect(
                                x.headers[name] == y.headers[name],
                                "\(what): \(name) \(x.headers[name] ?? "none") against \(y.headers[name] ?? "none")"
                            )
                        }
                        if let tag = x.headers[.eTag] { walk.tags.append(tag) }
                        if x.status == .notModified { walk.notModified += 1 }
                        walk.compared += 1
                    }
                }
            }
        }
        #expect(walk.writes > 50 && walk.compared > 400, "SEED=\(seed): \(walk.writes) writes, \(walk.compared) answers compared")
        #expect(walk.notModified > 0, "SEED=\(seed): no If-None-Match matched, so 304 was never compared")
    }

    /// A record that leaves a kept tile for a place far away, or comes into it from there, makes it anew; a record
    /// that moves far away from it leaves it kept.
    @Test func aRecordMovedOutOfOrIntoAKeptTileMakesItAnew() async throws {
        let engine = makeEngine()
        var uncachedConfiguration = ServerConfiguration()
        uncachedConfiguration.tileCacheBytes = 0
        let cached = buildApplication(configuration: ServerConfiguration(), engine: engine, gazetteer: nil, metrics: testRegistry)
        let uncached = buildApplication(configuration: uncachedConfiguration, engine: engine, gazetteer: nil, metrics: testRegistry)
        // p0 (Cafe 0) stands at 60.17, 24.94; Tallinn is 80 km south, many cells away.
        let uri = "/tiles/pois/\(TileRouteTests.tile(15, 60.17, 24.94)).mvt?cluster=0"
        let cafe = POIRecord(id: "p0", name: "Cafe 0", category: "food.cafe", city: "Helsinki", country: "FI", lat: 60.17, lon: 24.94)
        try await cached.test(.router) { a in
            try await uncached.test(.router) { b in
                func same(_ what: String) async throws -> [UInt8] {
                    let x = try await a.execute(uri: uri, method: .get)
                    let y = try await b.execute(uri: uri, method: .get)
                    #expect(x.status == y.status && x.headers[.eTag] == y.headers[.eTag], "\(what): \(x.status) against \(y.status)")
                    #expect(Array(x.body.readableBytesView) == Array(y.body.readableBytesView), "\(what): bodies differ")
                    return Array(x.body.readableBytesView)
                }
                let first = try await same("at first")
                _ = try engine.upsertPOI(POIRecord(id: "far", name: "Kauko", category: "food.cafe", lat: 59.44, lon: 24.75))
                #expect(try await same("after a write far away") == first)
                var moved = cafe
                (moved.lat, moved.lon) = (59.437, 24.7536)
                _ = try engine.upsertPOI(moved)
                #expect(try await same("after p0 left for Tallinn") != first)
                _ = try engine.upsertPOI(cafe)
                #expect(try await same("after p0 came back") == first)
            }
        }
    }

    /// A drawn write: a POI put or deleted, a pin created, moved or deleted.
    static func write(_ step: Int, _ engine: SearchEngine, _ walk: Walk) throws {
        let (latitude, longitude) = walk.position()
        switch walk.random.next() % 4 {
        case 0:
            // A POI made, or one moved (and perhaps renamed) from where it stood.
            let moved = !walk.pois.isEmpty && walk.chance(2)
            let id = moved ? walk.pick(walk.pois) : "w\(step)"
            let name = walk.pick(["Kahvila", "Cafe Uusi", "Bar"])
            _ = try engine.upsertPOI(POIRecord(id: id, name: name, category: "food.cafe", lat: latitude, lon: longitude))
            if !moved { walk.pois.append(id) }
        case 1:
            guard !walk.pois.isEmpty else { return }
            let id = walk.pick(walk.pois)
            try engine.deletePOI(id: id)
            walk.pois.removeAll { $0 == id }
        case 2:
            let input = PinInput(
                uniqueKey: "u\(step)",
                firstName: "A",
                lastName: "B",
                mapString: "",
                mediaURL: "",
                latitude: latitude,
                longitude: longitude
            )
            if !walk.pins.isEmpty && walk.chance(2) {
                _ = try engine.updatePin(id: walk.pick(walk.pins), input)
            } else {
                walk.pins.append(try engine.createPin(input).id)
            }
        default:
            guard !walk.pins.isEmpty else { return }
            let id = walk.pick(walk.pins)
            try engine.deletePin(id: id)
            walk.pins.removeAll { $0 == id }
        }
        walk.writes += 1
    }

    @Test func theCacheHoldsNoMoreThanItsBudget() {
        let seed = testSeed("theCacheHoldsNoMoreThanItsBudget")
        var random = SplitMix64(seed: seed)
        let budget = 64 * 1_024
        let cache = TileCache(budget: budget)
        var latest: [TileCache.Key: (version: UInt64, body: [UInt8])] = [:]
        for step in 0..<5_000 {
            let key = TileCache.Key(tile: "pois/14/\(random.next() % 60)/7", gzip: false)
            let version = random.next() % 3
            if random.next() % 2 == 0 {
                let body = [UInt8](repeating: UInt8(step % 251), count: Int(random.next() % 12_000))
                cache.keep(ReadAnswer(status: .ok, contentType: "x", body: body), for: key, version: version)
                if body.count + 256 <= budget / 8 { latest[key] = (version, body) }
            } else if let found = cache.answer(key, version: version) {
                // Whatever is found is what was last kept for that key, at that version.
                let kept = latest[key]
                #expect(kept?.version == version && kept?.body == found.body, "SEED=\(seed) step \(step): an answer not the last kept")
            }
            #expect(cache.heldBytes <= budget, "SEED=\(seed) step \(step): \(cache.heldBytes) bytes held")
        }
        let big = ReadAnswer(status: .ok, contentType: "x", body: [UInt8](repeating: 1, count: budget / 8))
        let key = TileCache.Key(tile: "base/1/0/0", gzip: true)
        cache.keep(big, for: key, version: 1)
        #expect(cache.answer(key, version: 1) == nil, "a tile over an eighth of the budget is not kept")
        #expect(TileCache(budget: 0).answer(key, version: 1) == nil)
    }
}
