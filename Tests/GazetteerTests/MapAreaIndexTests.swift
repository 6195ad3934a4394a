import GeoCore
import Records
import TestSupport
import Testing

@testable import Gazetteer

/// `MapAreaIndex` against brute force — the areas of a kind whose box meets a box, in store order, with the limit —
/// for boxes from a building's size to a whole region (the grid, its large areas, and the scan), and the same
/// answers from its snapshot.
@Suite struct MapAreaIndexTests {
    static func randomAreas(_ random: inout SplitMix64, count: Int) -> [MapArea] {
        (0..<count).map { i in
            // Mostly buildings of a few metres; some lakes of kilometres, and a sea of most of the region.
            let size = i % 50 == 0 ? random.uniform(0.05...0.5) : i % 7 == 0 ? random.uniform(0.005...0.03) : random.uniform(0.0001...0.0005)
            let (south, west) = (random.uniform(60.0...60.5), random.uniform(24.5...25.5))
            let ring = [
                Coordinate2(south, west), Coordinate2(south, west + size * 2), Coordinate2(south + size, west + size * 2),
                Coordinate2(south + size, west),
            ]
            let kind: MapArea.Kind = i % 7 == 0 || i % 50 == 0 ? .water : .building
            return MapArea(id: "osm-w\(i)", kind: kind, name: i % 3 == 0 ? "Area \(i)" : nil, rings: [MapArea.Ring(outer: true, points: ring)])
        }
    }

    @Test func areasInABoxAreThoseWhoseBoxMeetsIt() throws {
        var random = testRandom("areasInABoxAreThoseWhoseBoxMeetsIt")
        // Coded as the stores code them (vertices in 1e-7°), and decoded once for the brute force.
        let list = AreaList(Self.randomAreas(&random, count: 3_000))
        let areas = Array(list)
        let index = MapAreaIndex(list)
        let scratch = ScratchDirectory("map-area-index")
        let path = scratch.file("addresses.snapshot")
        try AddressIndex(AddressData(areas: list)).writeSnapshot(to: path, generation: "g")
        let mapped = try AddressIndex.readSnapshot(path, generation: "g").areas
        #expect(index.areas == areas && mapped.areas == areas)
        var found = 0
        for round in 0..<300 {
            let size = [0.0005, 0.005, 0.05, 0.5, 2.0][round % 5]
            let (south, west) = (random.uniform(59.9...60.6), random.uniform(24.4...25.6))
            let box = BoundingBox(uncheckedWest: west, south: south, east: west + size * 2, north: south + size)
            for kind in MapArea.Kind.allCases {
                let want = areas.filter { area in area.kind == kind && area.bounds.map { box.intersects($0) } == true }
                let got = index.areas(of: kind, in: box, limit: 100_000)
                #expect(got.areas.map(\.id) == want.map(\.id) && !got.truncated, "round \(round), \(kind), box \(box)")
                #expect(mapped.areas(of: kind, in: box, limit: 100_000).areas == got.areas, "round \(round): the snapshot")
                if want.count > 2 {
                    let limited = index.areas(of: kind, in: box, limit: 2)
                    #expect(limited.areas == Array(want.prefix(2)) && limited.truncated, "round \(round): the limit")
                }
                found += want.count
            }
        }
        #expect(found > 1_000)
        #expect(index.bounds == BoundingBox.enclosing(areas.compactMap(\.bounds)))
    }
}

extension BoundingBox {
    /// The box around boxes (test helper).
    static func enclosing(_ boxes: [BoundingBox]) -> BoundingBox? {
        guard let first = boxes.first else { return nil }
        return boxes.dropFirst().reduce(first) {
            BoundingBox(
                uncheckedWest: min($0.west, $1.west),
                south: min($0.south, $1.south),
                east: max($0.east, $1.east),
                north: max($0.north, $1.north)
            )
        }
    }
}
