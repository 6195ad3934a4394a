import Catalog
import Foundation
import GeoCore
import Records
import TestSupport
import Testing

@testable import SearchEngine

/// Vector tiles' records against brute force: every record is projected here with the spherical Mercator formula
/// written independently (ln tan(π/4 + φ/2)), and a tile must hold exactly those that fall in it.
@Suite struct TileTests {
    static let extent = 4096.0

    /// Position in tile units, unrounded, by the textbook formula.
    static func project(_ latitude: Double, _ longitude: Double, _ tile: WebMercatorTile) -> (x: Double, y: Double) {
        let n = pow(2.0, Double(tile.z))
        let x = (longitude + 180) / 360 * n
        let y = (1 - log(tan(Double.pi / 4 + latitude * Double.pi / 360)) / Double.pi) / 2 * n
        return ((x - Double(tile.x)) * extent, (y - Double(tile.y)) * extent)
    }

    /// A random tile holding a random record at zoom 4 to 18, or a neighbour of it.
    static func randomTile(_ pois: [POIRecord], _ random: inout SplitMix64) -> WebMercatorTile {
        let p = pois[Int(random.next() % UInt64(pois.count))]
        let z = 4 + Int(random.next() % 15)
        let n = 1 << z
        let x = Int((p.lon + 180) / 360 * Double(n))
        let y = Int((1 - log(tan(Double.pi / 4 + p.lat * Double.pi / 360)) / Double.pi) / 2 * Double(n))
        let dx = Int(random.next() % 3) - 1
        let dy = Int(random.next() % 3) - 1
        return WebMercatorTile(z: z, x: min(n - 1, max(0, x + dx)), y: min(n - 1, max(0, y + dy)))!
    }

    @Test func pointsMatchBruteForce() throws {
        let seed = testSeed("tilePoints")
        var random = SplitMix64(seed: seed)
        let pois = randomPOIs(6_000, &random)
        let engine = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        let buffer = Double(TileQuery.defaultBuffer)
        var checked = 0
        for round in 0..<300 {
            let tile = Self.randomTile(pois, &random)
            let category: String? = round % 4 == 0 ? "food" : nil
            let content = try engine.tile(TileQuery(tile: tile, kind: .poi, categories: category.map { [$0] } ?? [], clusterBelow: 0))
            #expect(content.clusters.isEmpty)
            var got: [String: (x: Int, y: Int)] = [:]
            for point in content.points { got[point.id] = (point.x, point.y) }
            #expect(got.count == content.points.count, "seed \(seed) round \(round): a record twice in tile \(tile)")
            for p in pois where category.map({ p.category.isCategory(under: $0) }) ?? true {
                let (x, y) = Self.project(p.lat, p.lon, tile)
                let margin = 1e-6
                let inside = x > -buffer + margin && x < Self.extent + buffer - margin && y > -buffer + margin && y < Self.extent + buffer - margin
                let outside = x < -buffer - margin || x > Self.extent + buffer + margin || y < -buffer - margin || y > Self.extent + buffer + margin
                if inside {
                    guard let position = got[p.id] else {
                        Issue.record("seed \(seed) round \(round): tile \(tile) lacks \(p.id) at (\(x), \(y))")
                        continue
                    }
                    #expect(
                        abs(Double(position.x) - x) <= 0.5 + 1e-6 && abs(Double(position.y) - y) <= 0.5 + 1e-6,
                        "seed \(seed) round \(round): \(p.id)"
                    )
                    checked += 1
                } else if outside {
                    #expect(got[p.id] == nil, "seed \(seed) round \(round): tile \(tile) holds \(p.id) at (\(x), \(y))")
                }
            }
            // Record order.
            let order = content.points.map(\.id)
            let expectedOrder = inRecordOrder(pois).map(\.id).filter { got[$0] != nil }
            #expect(order == expectedOrder, "seed \(seed) round \(round)")
        }
        #expect(checked > 1_000, "the drawn tiles held too few records to test anything (\(checked))")
    }

    @Test func clustersCountEveryRecordOnce() throws {
        let seed = testSeed("tileClusters")
        var random = SplitMix64(seed: seed)
        let pois = randomPOIs(6_000, &random)
        let engine = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        let grid = TileQuery.defaultGrid
        for round in 0..<200 {
            let tile = Self.randomTile(pois, &random)
            let query = TileQuery(tile: tile, kind: .poi, text: round % 3 == 0 ? "cafe" : nil, clusterBelow: 19)
            let content = try engine.tile(query)
            #expect(content.points.isEmpty)
            // Brute force: the records strictly inside the tile, counted per cell of their rounded position.
            let matching = round % 3 == 0 ? Set(try engine.search(SearchQuery(text: "cafe", limit: 100_000)).results.map(\.id)) : nil
            var cells: [Int: Int] = [:]
            var borderline = false
            for p in pois where matching?.contains(p.id) ?? true {
                let (x, y) = Self.project(p.lat, p.lon, tile)
                if abs(x) < 1e-6 || abs(y) < 1e-6 || abs(x - Self.extent) < 1e-6 || abs(y - Self.extent) < 1e-6 { borderline = true }
                guard x >= 0, x <= Self.extent, y >= 0, y <= Self.extent else { continue }
                let column = min(grid - 1, Int(x.rounded()) * grid / Int(Self.extent))
                let row = min(grid - 1, Int(y.rounded()) * grid / Int(Self.extent))
                cells[row * grid + column, default: 0] += 1
            }
            if borderline { continue }
            let total = content.clusters.reduce(0) { $0 + $1.count }
            #expect(total == cells.values.reduce(0, +), "seed \(seed) round \(round): tile \(tile)")
            #expect(content.clusters.count == cells.count, "seed \(seed) round \(round): tile \(tile)")
            let cellSize = Int(Self.extent) / grid
            for cluster in content.clusters {
                let column = min(grid - 1, cluster.x / cellSize)
                let row = min(grid - 1, cluster.y / cellSize)
                #expect(cells[row * grid + column] == cluster.count, "seed \(seed) round \(round): cell (\(column), \(row)) of \(tile)")
                #expect((cluster.id != nil) == (cluster.count == 1))
            }
        }
    }

    /// On a GCJ-02 map each record is where that datum puts it, and the tile holds the records whose GCJ-02 position
    /// falls in it.
    @Test func gcj02TilesPlaceRecordsInThatDatum() throws {
        let seed = testSeed("tileGCJ")
        var random = SplitMix64(seed: seed)
        let pois = randomPOIs(6_000, &random).filter { ChinaDatum.isInChina(latitude: $0.lat, longitude: $0.lon) }
        let engine = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        let buffer = Double(TileQuery.defaultBuffer)
        var held = 0
        for round in 0..<100 {
            let tile = Self.randomTile(pois, &random)
            let content = try engine.tile(TileQuery(tile: tile, kind: .poi, datum: .gcj02, clusterBelow: 0))
            var got: [String: (x: Int, y: Int)] = [:]
            for point in content.points { got[point.id] = (point.x, point.y) }
            for p in pois {
                let moved = ChinaDatum.wgs84ToGCJ02(latitude: p.lat, longitude: p.lon)
                let (x, y) = Self.project(moved.latitude, moved.longitude, tile)
                let inside = x > -buffer + 0.6 && x < Self.extent + buffer - 0.6 && y > -buffer + 0.6 && y < Self.extent + buffer - 0.6
                let outside = x < -buffer - 0.6 || x > Self.extent + buffer + 0.6 || y < -buffer - 0.6 || y > Self.extent + buffer + 0.6
                if inside {
                    guard let position = got[p.id] else {
                        Issue.record("seed \(seed) round \(round): GCJ-02 tile \(tile) lacks \(p.id)")
                        continue
                    }
                    #expect(abs(Double(position.x) - x) <= 0.5 + 1e-6 && abs(Double(position.y) - y) <= 0.5 + 1e-6)
                    held += 1
                } else if outside {
                    #expect(got[p.id] == nil, "seed \(seed) round \(round): GCJ-02 tile \(tile) holds \(p.id)")
                }
            }
        }
        #expect(held > 500)
    }

    @Test func pinsLayerHoldsPinsOnly() throws {
        var random = testRandom("tilePins")
        let pois = randomPOIs(500, &random)
        let engine = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        let pin = try engine.createPin(
            PinInput(uniqueKey: "u1", firstName: "Aino", lastName: "Virtanen", mapString: "Helsinki", mediaURL: "", latitude: 60.17, longitude: 24.94)
        )
        let tile = WebMercatorTile(
            z: 15,
            x: Int((24.94 + 180) / 360 * 32768),
            y: Int((1 - log(tan(Double.pi / 4 + 60.17 * Double.pi / 360)) / Double.pi) / 2 * 32768)
        )!
        let pins = try engine.tile(TileQuery(tile: tile, kind: .pin))
        #expect(pins.points.map(\.id) == [pin.id])
        let poiTile = try engine.tile(TileQuery(tile: tile, kind: .poi))
        #expect(!poiTile.points.contains { $0.id == pin.id })
    }

    /// More points than a tile may hold is a clear refusal naming the parameter that helps.
    @Test func anOverfullTileIsRefused() throws {
        var random = testRandom("tileOverfull")
        let pois = randomPOIs(2_000, &random)
        let engine = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        #expect {
            try engine.tile(TileQuery(tile: WebMercatorTile(z: 0, x: 0, y: 0)!, kind: .poi, clusterBelow: 0, maxPoints: 100))
        } throws: { error in
            guard case SearchError.invalid(let parameter, let rule) = error else { return false }
            return parameter == "cluster" && rule.contains("more than 100 records")
        }
        let clustered = try engine.tile(TileQuery(tile: WebMercatorTile(z: 0, x: 0, y: 0)!, kind: .poi, maxPoints: 100))
        #expect(clustered.clusters.reduce(0) { $0 + $1.count } == pois.count)
    }
}
