/// The sea of an extract, made from its `natural=coastline` ways: OpenStreetMap maps the sea by its shore only, as
/// lines with the land on their left and the water on their right, and an extract cuts them where it ends. The way
/// osmcoastline makes the world's water polygons, on one box: pieces are joined end to start into chains; a closed
/// chain is an island (counter-clockwise) or an enclosed sea (clockwise); an open chain is extended from its ends to
/// the nearest edge of the box, and the sea is what lies on its right, closed along the box's edge clockwise to the
/// next chain's start.
public enum Coastline {
    public typealias Point = AreaGeometry.Point

    /// Consecutive nodes of a coastline way that the file has (a way the extract cut is one piece per stretch
    /// inside it), with their ids, by which pieces are joined.
    public struct Piece: Sendable {
        public var ids: [Int64]
        public var points: [Point]

        public init(ids: [Int64], points: [Point]) { (self.ids, self.points) = (ids, points) }

        /// The stretches of a way whose nodes `location` knows, each of two nodes or more: a way the extract cut
        /// is one stretch per run of nodes inside it.
        public static func stretches<E: Error>(of refs: [Int64], location: (Int64) throws(E) -> Point?) throws(E) -> [Piece] {
            var pieces: [Piece] = []
            var piece = Piece(ids: [], points: [])
            for ref in refs {
                if let p = try location(ref) {
                    piece.ids.append(ref)
                    piece.points.append(p)
                } else {
                    if piece.ids.count >= 2 { pieces.append(piece) }
                    piece = Piece(ids: [], points: [])
                }
            }
            if piece.ids.count >= 2 { pieces.append(piece) }
            return pieces
        }
    }

    /// The extract's box in degrees.
    public struct Box: Sendable, Equatable {
        public var west, south, east, north: Double

        public init(west: Double, south: Double, east: Double, north: Double) {
            (self.west, self.south, self.east, self.north) = (west, south, east, north)
        }
    }

    /// A piece of sea: its outer ring, then its holes (islands), each ring closed implicitly.
    public typealias Polygon = [[Point]]

    /// The sea within `box` that `pieces` bound, and what could not be used.
    public static func sea(_ pieces: [Piece], box: Box) -> (polygons: [Polygon], problems: [String]) {
        var problems: [String] = []
        guard box.west < box.east, box.south < box.north else { return ([], pieces.isEmpty ? [] : ["the extract has no box to close the sea in"]) }
        let chains = join(pieces.filter { $0.ids.count >= 2 })
        var islands: [[Point]] = []
        var polygons: [Polygon] = []
        var open: [(points: [Point], start: Double, end: Double)] = []
        for chain in chains {
            if chain.ids.first == chain.ids.last {
                guard chain.points.count >= 4 else { continue }
                let ring = Array(chain.points.dropLast())
                if signedArea(ring) > 0 { islands.append(ring) } else { polygons.append([ring]) }
                continue
            }
            let start = project(chain.points.first!, box)
            let end = project(chain.points.last!, box)
            var points = chain.points
            if start.point != points.first! { points.insert(start.point, at: 0) }
            if end.point != points.last! { points.append(end.point) }
            open.append((points, start.t, end.t))
        }
        // Each open chain, then along the edge clockwise to the nearest chain start, until the first chain again.
        var used = [Bool](repeating: false, count: open.count)
        for first in open.indices where !used[first] {
            var ring: [Point] = []
            var c = first
            var closed = false
            while !used[c] {
                used[c] = true
                ring += open[c].points
                let from = open[c].end
                var next = -1
                var nearest = Double.infinity
                for j in open.indices {
                    var d = open[j].start - from
                    if d < 0 { d += 4 }
                    if d < nearest { (nearest, next) = (d, j) }
                }
                // The box's corners passed on the way: north-west (t 0 or 4), north-east 1, south-east 2, south-west 3.
                var corner = from.rounded(.down) + 1
                while corner < from + nearest {
                    ring.append(Self.corner(Int(corner) % 4, box))
                    corner += 1
                }
                if next == first {
                    closed = true
                    break
                }
                c = next
            }
            if closed && ring.count >= 3 {
                polygons.append([ring])
            } else {
                problems.append("coastline chains that do not close along the extract's edge (\(ring.count) vertices) were left out")
            }
        }
        if open.isEmpty && !islands.isEmpty && polygons.isEmpty {
            // Only islands: the box is the sea around them.
            polygons.append([[(box.north, box.west), (box.north, box.east), (box.south, box.east), (box.south, box.west)]])
        }
        for island in islands {
            guard let k = polygons.firstIndex(where: { contains($0[0], island[0]) }) else {
                problems.append("an island at \(island[0].latitude), \(island[0].longitude) lies in no sea and was left out")
                continue
            }
            polygons[k].append(island)
        }
        return (polygons, problems)
    }

    /// Pieces joined where one ends at the node another starts at: chains from pieces nothing ends at, then the cycles.
    static func join(_ pieces: [Piece]) -> [Piece] {
        var startsAt: [Int64: [Int]] = [:]
        var endsAt = Set<Int64>()
        for (i, piece) in pieces.enumerated() {
            startsAt[piece.ids[0], default: []].append(i)
            endsAt.insert(piece.ids[piece.ids.count - 1])
        }
        var used = [Bool](repeating: false, count: pieces.count)
        var chains: [Piece] = []
        func follow(_ i: Int) {
            var chain = pieces[i]
            used[i] = true
            while chain.ids.first != chain.ids.last, let next = startsAt[chain.ids.last!]?.first(where: { !used[$0] }) {
                used[next] = true
                chain.ids += pieces[next].ids.dropFirst()
                chain.points += pieces[next].points.dropFirst()
            }
            chains.append(chain)
        }
        for i in pieces.indices where !used[i] && !endsAt.contains(pieces[i].ids[0]) { follow(i) }
        for i in pieces.indices where !used[i] { follow(i) }
        return chains
    }

    /// The point of the box's edge nearest to `p` (clamped into the box first), and where it lies along the edge,
    /// clockwise from the north-west corner: the north edge is 0..<1, east 1..<2, south 2..<3, west 3..<4.
    static func project(_ p: Point, _ box: Box) -> (point: Point, t: Double) {
        let latitude = min(max(p.latitude, box.south), box.north)
        let longitude = min(max(p.longitude, box.west), box.east)
        let width = box.east - box.west
        let height = box.north - box.south
        let scale = cos((box.south + box.north) / 2 * .pi / 180)
        let distances = [
            (box.north - latitude), (box.east - longitude) * scale, (latitude - box.south), (longitude - box.west) * scale,
        ]
        let edge = distances.indices.min { distances[$0] < distances[$1] }!
        switch edge {
        case 0: return ((box.north, longitude), (longitude - box.west) / width)
        case 1: return ((latitude, box.east), 1 + (box.north - latitude) / height)
        case 2: return ((box.south, longitude), 2 + (box.east - longitude) / width)
        default: return ((latitude, box.west), 3 + min((latitude - box.south) / height, 0.999_999_999))
        }
    }

    static func corner(_ k: Int, _ box: Box) -> Point {
        switch k {
        case 0: return (box.north, box.west)
        case 1: return (box.north, box.east)
        case 2: return (box.south, box.east)
        default: return (box.south, box.west)
        }
    }

    /// Twice the ring's signed area with longitude as x and latitude as y: positive when counter-clockwise.
    public static func signedArea(_ ring: [Point]) -> Double {
        var sum = 0.0
        var previous = ring[ring.count - 1]
        for p in ring {
            sum += previous.longitude * p.latitude - p.longitude * previous.latitude
            previous = p
        }
        return sum
    }

    /// Whether `p` is inside `ring` (even-odd rule).
    public static func contains(_ ring: [Point], _ p: Point) -> Bool {
        var inside = false
        var previous = ring[ring.count - 1]
        for q in ring {
            if (q.latitude > p.latitude) != (previous.latitude > p.latitude) {
                let x = previous.longitude + (p.latitude - previous.latitude) / (q.latitude - previous.latitude) * (q.longitude - previous.longitude)
                if p.longitude < x { inside.toggle() }
            }
            previous = q
        }
        return inside
    }
}

#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
