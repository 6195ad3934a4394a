import GeoCore
import TestSupport
import Testing

/// The Hilbert curve records are numbered along, and the distance floor keyword search bounds blocks with.
@Suite struct SpatialOrderTests {
    /// On a small grid the curve visits every cell once, each step to a cell sharing an edge with the last.
    @Test(arguments: [2, 4, 16, 64])
    func hilbertCurveVisitsEveryCellStepByStep(_ side: Int) {
        var cells = [(x: Int, y: Int)?](repeating: nil, count: side * side)
        for x in 0..<side {
            for y in 0..<side {
                let d = Int(HilbertCurve.index(x: UInt64(x), y: UInt64(y), side: UInt64(side)))
                #expect(d < side * side && cells[d] == nil, "cell \(x),\(y) at \(d)")
                if d < side * side { cells[d] = (x, y) }
            }
        }
        let path = cells.compactMap { $0 }
        #expect(path.count == side * side)
        for (a, b) in zip(path, path.dropFirst()) {
            #expect(abs(a.x - b.x) + abs(a.y - b.y) == 1, "\(a) then \(b)")
        }
    }

    /// Positions are placed in the grid of 2^20 cells per axis, clamped at its edges.
    @Test func hilbertIndexOfPositions() {
        let side = UInt64(1) << HilbertCurve.order
        #expect(HilbertCurve.index(latitude: -90, longitude: -180) == HilbertCurve.index(x: 0, y: 0, side: side))
        #expect(HilbertCurve.index(latitude: 90, longitude: 180) == HilbertCurve.index(x: side - 1, y: side - 1, side: side))
        #expect(HilbertCurve.index(latitude: 0, longitude: 0) == HilbertCurve.index(x: side / 2, y: side / 2, side: side))
        #expect(HilbertCurve.index(latitude: 95, longitude: -200) == HilbertCurve.index(x: 0, y: side - 1, side: side))
    }

    /// `order` sorts positions by their cell's index, ties in the order given.
    @Test func orderFollowsTheCurveAndKeepsTies() {
        var random = testRandom("orderFollowsTheCurveAndKeepsTies")
        // Few distinct positions, so that many share a cell.
        let spots = (0..<8).map { _ in (latitude: random.uniform(-80...80), longitude: random.uniform(-180...180)) }
        let positions = (0..<200).map { _ in spots[Int(random.next() % 8)] }
        let order = HilbertCurve.order(positions.count) { positions[$0] }
        #expect(order.sorted() == Array(positions.indices))
        let keys = order.map { HilbertCurve.index(latitude: positions[$0].latitude, longitude: positions[$0].longitude) }
        for (a, b) in zip(order.indices, order.indices.dropFirst()) {
            #expect(keys[a] < keys[b] || (keys[a] == keys[b] && order[a] < order[b]), "positions \(order[a]) then \(order[b])")
        }
    }

    /// The floor is never above the true least distance to the box (`minimumDistance`, itself checked against
    /// sampling), and is close to it for the small, near boxes keyword search meets most.
    @Test func distanceFloorIsBelowTheLeastDistance() throws {
        var random = testRandom("distanceFloorIsBelowTheLeastDistance")
        for trial in 0..<20_000 {
            let small = trial % 2 == 0
            let box = random.box(south: -90...89.9, height: small ? 0.0001...0.5 : 0.01...60, width: small ? 0.0001...0.5 : 0.01...170)
            let near = trial % 4 < 2
            let latitude = near ? min(90, max(-90, box.south + random.uniform(-2...2))) : random.uniform(-90...90)
            let longitude = near ? Coordinate.wrapLongitude(box.west + random.uniform(-2...2)) : random.uniform(-180...180)
            let point = try Coordinate(latitude: latitude, longitude: longitude)
            guard !box.crossesAntimeridian else { continue }
            let floor = DistanceFloor(from: point).metres(south: box.south, north: box.north, west: box.west, east: box.east)
            let least = box.minimumDistance(from: point)
            #expect(floor <= least * (1 + 1e-12) + 1e-6, "trial \(trial): box \(box) point \(point): floor \(floor) > least \(least)")
            if small && near && least > 0 && abs(point.latitude) < 70 {
                #expect(floor >= least * 0.9, "trial \(trial): box \(box) point \(point): floor \(floor) far below \(least)")
            }
        }
    }
}
