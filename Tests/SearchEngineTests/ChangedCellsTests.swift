import GeoCore
import TestSupport
import Testing

@testable import SearchEngine

/// A box's version changes exactly when a write is noted in a cell the box meets: checked against the noted
/// positions themselves, over seeded writes and boxes around Helsinki (a few cells) and across the world (more than
/// `maximumCells`, which answer `everywhere`). Replay a failure with SEED=<printed seed>.
@Suite struct ChangedCellsTests {
    @Test func aBoxsVersionMovesWithTheWritesInItsCellsAlone() throws {
        let seed = testSeed("aBoxsVersionMovesWithTheWritesInItsCellsAlone")
        var random = SplitMix64(seed: seed)
        func unit() -> Double { Double(random.next() >> 11) / Double(1 << 53) }
        var cells = ChangedCells()
        var (moved, kept) = (0, 0)
        for step in 0..<2_000 {
            // Boxes of 0.01°–3° around Helsinki, and now and then one of a hemisphere.
            let size = random.next() % 20 == 0 ? 90.0 : 0.01 + 3 * unit() * unit()
            let (south, west) = (59.0 + 3 * unit(), 23.0 + 4 * unit())
            let box = try BoundingBox(west: west, south: south, east: min(180, west + size), north: min(90, south + size))
            let before = cells.version(in: box)
            let (latitude, longitude) = (59.0 + 4 * unit(), 23.0 + 5 * unit())
            cells.note(latitude: latitude, longitude: longitude)
            let after = cells.version(in: box)
            // The cell of the write, a quarter degree each way, against the box's extent rounded out to cells.
            func cell(_ value: Double) -> Int { Int((value * 4).rounded(.down)) }
            let meets =
                (cell(box.south)...cell(box.north)).contains(cell(latitude)) && (cell(box.west)...cell(box.east)).contains(cell(longitude))
            let wide = (cell(box.north) - cell(box.south) + 1) * (cell(box.east) - cell(box.west) + 1) > ChangedCells.maximumCells
            #expect(
                (after != before) == (meets || wide),
                "SEED=\(seed) step \(step): a write at \(latitude), \(longitude) \(after != before ? "moved" : "kept") the version of \(box)"
            )
            #expect(after >= before, "SEED=\(seed) step \(step): the version went back")
            if after != before { moved += 1 } else { kept += 1 }
        }
        #expect(moved > 100 && kept > 100, "SEED=\(seed): \(moved) versions moved, \(kept) kept")
    }
}
