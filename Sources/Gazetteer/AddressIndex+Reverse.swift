import GeoCore
import Records

extension AddressIndex {
    /// The nearest house within `houseRadius` of a point, else the nearest street within `streetRadius` by
    /// distance to its segments (the answer's position is the nearest point of the street), with the distance in
    /// metres; nil when neither is that near.
    /// - Parameter hidden: houses to pass over, as if they were not in the index (`AddressBook`'s overridden ones).
    /// - Parameter hiddenLine: lines to pass over (`AddressLayer`'s, replaced in the layer of changes).
    public func reverse(
        _ point: Coordinate2,
        hidden: (Int32) -> Bool = { _ in false },
        hiddenLine: (Int32) -> Bool = { _ in false }
    ) -> (match: AddressMatch, distance: Double)? {
        guard !isEmpty else { return nil }
        if let nearest = houseGrid.nearest(
            to: point,
            within: Self.houseRadius,
            latitudes: houses.latitudes,
            longitudes: houses.longitudes,
            hidden: hidden
        ) {
            let a = houses[nearest.house]
            let s = streetOfAddress[nearest.house]
            let street = s >= 0 ? streets[Int(s)] : nil
            let match = AddressMatch(
                kind: .house,
                id: a.id,
                street: a.streetOrPlace ?? street?.name ?? "",
                housenumber: a.housenumber,
                unit: a.unit,
                postcode: a.postcode ?? street?.postcode,
                city: a.city ?? street?.city,
                latitude: a.latitude,
                longitude: a.longitude,
                score: 1,
                interpolation: nil,
                unresolved: nil
            )
            return (match, nearest.distance)
        }
        if let hit = segments.nearest(to: point, radius: Self.streetRadius, hidden: hiddenLine) {
            let line = lines[hit.line]
            let s = streetOfLine[hit.line]
            let street = s >= 0 ? streets[Int(s)] : nil
            let match = AddressMatch(
                kind: .street,
                id: line.id,
                street: street?.name ?? line.names.first ?? "",
                housenumber: nil,
                unit: nil,
                postcode: street?.postcode ?? line.postcode,
                city: street?.city ?? line.city,
                latitude: hit.point.latitude,
                longitude: hit.point.longitude,
                score: 1,
                interpolation: nil,
                unresolved: nil
            )
            return (match, hit.distance)
        }
        return nil
    }
}

extension AddressIndex {
    /// Street lines (not interpolation lines) with a segment whose box meets `box`, in import order, at most `limit`;
    /// `truncated` says whether more were there. For `/v1/streets` and the base tiles.
    /// - Complexity: the segments in the box's grid cells, then O(vertices) of the lines whose box meets it; a box of
    ///   more than `gridCellsPerQuery` cells, O(lines) box tests instead.
    /// - Parameter hidden: lines to pass over (`AddressLayer`'s, replaced in the layer of changes).
    public func lines(in box: BoundingBox, limit: Int, hidden: (Int32) -> Bool = { _ in false }) -> (lines: [StreetLine], truncated: Bool) {
        // The lines the segment grid has in the box's cells, and those with a segment too long for the grid to hold
        // in every cell it crosses; a box of more cells than that (a whole region) looks at every line's box.
        let (y0, x0) = SegmentGrid.cell(box.south, box.west)
        let (y1, x1) = SegmentGrid.cell(box.north, box.east)
        var found: [Int32] = []
        if box.west <= box.east, (y1 - y0 + 1) * (x1 - x0 + 1) <= Self.gridCellsPerQuery {
            for y in y0...y1 {
                for x in x0...x1 {
                    for k in segments.cells.items(of: SegmentGrid.key(y, x)) { found.append(segments.cells.items[k].line) }
                }
            }
            found += longLines
            found.sortAndRemoveRepeats()
        } else {
            found = (0..<Int32(lines.count)).map { $0 }
        }
        var out: [StreetLine] = []
        for i in found.lazy.map({ Int($0) }) where lines[i].kind == .street && !hidden(Int32(i)) {
            let b = 4 * i
            let lineBox = BoundingBox(uncheckedWest: lineBoxes[b], south: lineBoxes[b + 1], east: lineBoxes[b + 2], north: lineBoxes[b + 3])
            guard box.intersects(lineBox), Self.hasSegment(lines[i].points, meeting: box) else { continue }
            if out.count == limit { return (out, true) }
            out.append(lines[i])
        }
        return (out, false)
    }

    /// Whether a segment of the line (or its one vertex) has a box that meets `box`.
    static func hasSegment(_ points: [Coordinate2], meeting box: BoundingBox) -> Bool {
        guard var previous = points.first else { return false }
        if points.count == 1 { return box.contains(latitude: previous.latitude, longitude: previous.longitude) }
        for p in points.dropFirst() {
            let segment = BoundingBox(
                uncheckedWest: min(previous.longitude, p.longitude),
                south: min(previous.latitude, p.latitude),
                east: max(previous.longitude, p.longitude),
                north: max(previous.latitude, p.latitude)
            )
            if box.intersects(segment) { return true }
            previous = p
        }
        return false
    }

    /// The most grid cells a box is looked up by (a zoom-10 tile at 60° N is about 7 500).
    static let gridCellsPerQuery = 20_000
}
