import GeoCore
import Records

extension AddressIndex {
    /// The nearest house within `houseRadius` of a point, else the nearest street within `streetRadius` by
    /// distance to its segments (the answer's position is the nearest point of the street), with the distance in
    /// metres; nil when neither is that near.
    /// - Parameter hidden: houses to pass over, as if they were not in the index (`AddressBook`'s overridden ones).
    public func reverse(_ point: Coordinate2, hidden: (Int32) -> Bool = { _ in false }) -> (match: AddressMatch, distance: Double)? {
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
        if let hit = segments.nearest(to: point, radius: Self.streetRadius) {
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
    /// Street lines (not interpolation lines) with a vertex in `box` or crossing it, in import order, at most `limit`;
    /// `truncated` says whether more were there. For the map page's offline base layer.
    /// - Complexity: O(lines) box tests, then O(vertices) of the lines whose box meets it.
    public func lines(in box: BoundingBox, limit: Int) -> (lines: [StreetLine], truncated: Bool) {
        var out: [StreetLine] = []
        for (i, line) in lines.enumerated() where line.kind == .street {
            let b = 4 * i
            let lineBox = BoundingBox(uncheckedWest: lineBoxes[b], south: lineBoxes[b + 1], east: lineBoxes[b + 2], north: lineBoxes[b + 3])
            guard box.intersects(lineBox) else { continue }
            if out.count == limit { return (out, true) }
            out.append(line)
        }
        return (out, false)
    }
}
