import Foundation
import GeoCore
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import Records
import SearchEngine
import TestSupport
import Testing
import VectorTile

/// The base tile's `water` and `buildings` layers: rings clipped to the tile and its buffer against point sampling,
/// and the tile as MVT polygons oriented as the spec asks (exterior rings of positive area, holes negative, each
/// hole after its exterior), decoded by the spec-written reader of `TileRouteTests`.
@Suite struct BaseAreaTests {
    /// Even-odd containment of `p` in a ring of tile units.
    static func contains(_ ring: [(x: Double, y: Double)], _ p: (x: Double, y: Double)) -> Bool {
        var inside = false
        var previous = ring[ring.count - 1]
        for q in ring {
            if (q.y > p.y) != (previous.y > p.y), p.x < previous.x + (p.y - previous.y) / (q.y - previous.y) * (q.x - previous.x) {
                inside.toggle()
            }
            previous = q
        }
        return inside
    }

    /// The distance from `p` to the nearest edge of `ring`.
    static func distance(_ ring: [(x: Double, y: Double)], _ p: (x: Double, y: Double)) -> Double {
        var best = Double.infinity
        var previous = ring[ring.count - 1]
        for q in ring {
            let (dx, dy) = (q.x - previous.x, q.y - previous.y)
            let t = dx == 0 && dy == 0 ? 0 : min(1, max(0, ((p.x - previous.x) * dx + (p.y - previous.y) * dy) / (dx * dx + dy * dy)))
            best = min(best, hypot(p.x - previous.x - t * dx, p.y - previous.y - t * dy))
            previous = q
        }
        return best
    }

    /// Star-shaped rings (simple polygons) around random centres, partly outside the tile: a point of the frame is in
    /// the clipped ring exactly when it is in the ring (away from both outlines, where rounding decides).
    @Test func aClippedRingCoversWhatTheRingCoversInTheFrame() {
        var random = testRandom("aClippedRingCoversWhatTheRingCoversInTheFrame")
        let (extent, buffer) = (4096, 64)
        var judged = 0
        for round in 0..<200 {
            let centre = (x: random.uniform(-1500...5500), y: random.uniform(-1500...5500))
            let count = Int(random.uniform(3...40))
            let ring: [(x: Double, y: Double)] = (0..<count).map { k in
                let angle = Double(k) / Double(count) * 2 * .pi
                let r = random.uniform(200...2500)
                return (centre.x + r * cos(angle), centre.y + r * sin(angle))
            }
            let exterior = random.uniform(0...1) < 0.5
            let clipped = Polygons.ring(ring, exterior: exterior, extent: extent, buffer: buffer)
            let frame = Double(-buffer)...Double(extent + buffer)
            let kept = clipped.map { $0.map { (x: Double($0.x), y: Double($0.y)) } }
            if let clipped { #expect((Polygons.surveyorArea(clipped) > 0) == exterior, "round \(round): winding") }
            for _ in 0..<300 {
                let p = (x: random.uniform(frame), y: random.uniform(frame))
                guard Self.distance(ring, p) > 2, kept.map({ Self.distance($0, p) > 2 }) ?? true else { continue }
                judged += 1
                let expected = Self.contains(ring, p)
                let got = kept.map { Self.contains($0, p) } ?? false
                if got != expected {
                    Issue.record("round \(round): \(p) is \(expected ? "inside" : "outside") the ring, \(got ? "inside" : "outside") the clipped one")
                    return
                }
            }
        }
        #expect(judged > 20_000)
    }

    /// An engine with a lake with an island, a building and a street, its base tiles read back.
    @Test func baseTilesHoldWaterAndBuildingsAsPolygons() async throws {
        let lake = MapArea(
            id: "osm-r5",
            kind: .water,
            name: "Töölönlahti",
            rings: [
                MapArea.Ring(outer: true, points: [.init(60.170, 24.930), .init(60.170, 24.950), .init(60.180, 24.950), .init(60.180, 24.930)]),
                MapArea.Ring(outer: false, points: [.init(60.174, 24.938), .init(60.176, 24.938), .init(60.176, 24.942), .init(60.174, 24.942)]),
            ]
        )
        let building = MapArea(
            id: "osm-w7",
            kind: .building,
            rings: [MapArea.Ring(outer: true, points: [.init(60.1685, 24.9405), .init(60.1685, 24.9410), .init(60.1688, 24.9410)])]
        )
        let street = StreetLine(id: "osm-w9", names: ["Mannerheimintie"], points: [.init(60.1680, 24.9380), .init(60.1690, 24.9420)])
        let engine = SearchEngine(
            pois: [],
            addresses: AddressData(streets: [street], areas: [lake, building]),
            taxonomy: taxonomy
        )
        try await app(engine: engine).test(.router) { client in
            for z in [12, 13, 15] {
                let response = try await client.execute(uri: "/tiles/base/\(TileRouteTests.tile(z, 60.172, 24.940)).mvt", method: .get)
                #expect(response.status == .ok)
                let layers = try MVTReader.layers(Array(response.body.readableBytesView))
                #expect(layers.map(\.name) == (z >= 13 ? ["water", "buildings", "base"] : ["water", "base"]), "zoom \(z)")
                let water = try #require(layers.first { $0.name == "water" })
                #expect(water.features.count == 1 && water.features[0].type == 3)
                #expect(water.features[0].properties(water)["name"] as? String == "Töölönlahti")
                let rings = Self.rings(water.features[0].geometry)
                #expect(rings.count == 2, "zoom \(z): the lake and its island")
                if rings.count == 2 {
                    #expect(Polygons.surveyorArea(rings[0]) > 0 && Polygons.surveyorArea(rings[1]) < 0, "zoom \(z): exterior, then its hole")
                }
                if z >= 13 {
                    let buildings = try #require(layers.first { $0.name == "buildings" })
                    #expect(buildings.features.map { $0.properties(buildings)["id"] as? String } == ["osm-w7"])
                }
            }
            let tileJSON =
                try JSONSerialization.jsonObject(
                    with: Data(try await client.execute(uri: "/tiles/base.json", method: .get).body.readableBytesView)
                ) as! [String: Any]
            let layers = (tileJSON["vector_layers"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
            #expect(layers == ["water", "buildings", "base"])
            #expect((tileJSON["bounds"] as? [Double]) == [24.930, 60.168_5, 24.950, 60.180])
        }
    }

    /// A feature's rings from its geometry commands (MoveTo, LineTo, ClosePath), in tile units.
    static func rings(_ geometry: [UInt64]) -> [[(x: Int, y: Int)]] {
        var rings: [[(x: Int, y: Int)]] = []
        var (x, y) = (0, 0)
        var i = 0
        func zigzag(_ v: UInt64) -> Int { Int(v >> 1) ^ -Int(v & 1) }
        while i < geometry.count {
            let (command, count) = (geometry[i] & 7, Int(geometry[i] >> 3))
            i += 1
            if command == 7 { continue }
            for _ in 0..<count {
                x += zigzag(geometry[i])
                y += zigzag(geometry[i + 1])
                i += 2
                if command == 1 { rings.append([(x, y)]) } else { rings[rings.count - 1].append((x, y)) }
            }
        }
        return rings
    }
}
