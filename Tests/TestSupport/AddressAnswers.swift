import Gazetteer
import GeoCore
import Records
import Testing

/// The address index with change files laid over it against a fresh index of the same addresses (CatalogTests'
/// `AddressLayerOracle`, and a server restarted over a layer of changes).
public enum AddressAnswers {
    /// Expects the same houses, street lines and areas, in the same order; the first that differs of each is said.
    public static func expectSameData(_ ours: AddressData, _ theirs: AddressData, _ what: String) {
        func expectSame<T: Equatable>(_ a: [T], _ b: [T], _ kind: String) {
            #expect(a.count == b.count, "\(what): \(kind) \(a.count) against \(b.count)")
            if let i = a.indices.first(where: { $0 < b.count && a[$0] != b[$0] }) {
                Issue.record("\(what): \(kind) \(i) is \(a[i]) against \(b[i])")
            }
        }
        expectSame(Array(ours.addresses), Array(theirs.addresses), "house")
        expectSame(ours.streets, theirs.streets, "street line")
        expectSame(Array(ours.areas), Array(theirs.areas), "area")
    }

    /// The streets the layer's parts show (those no level over them hides) are the fresh index's: each street's name,
    /// city, postcode, anchor and members alike. Drawn queries may miss a street made twice or joined wrongly; this
    /// does not.
    public static func expectSameStreets(_ layer: AddressLayer, _ fresh: AddressIndex, _ what: String) {
        let (ours, theirs) = (layer.shownStreets, fresh.shownStreets())
        #expect(ours.count == theirs.count, "\(what): \(ours.count) streets shown, a fresh index has \(theirs.count)")
        let (a, b) = (Set(ours), Set(theirs))
        if let extra = ours.first(where: { !b.contains($0) }) { Issue.record("\(what): a street a fresh index has not: \(extra)") }
        if let missing = theirs.first(where: { !a.contains($0) }) { Issue.record("\(what): a street of a fresh index not shown: \(missing)") }
    }

    /// Search, completion, reverse, street lines and areas of `book` and `fresh`, for queries drawn from `data`.
    public static func expectAlike(_ book: AddressBook, _ fresh: AddressIndex, _ data: AddressData, seed: UInt64, _ what: String) {
        var random = SplitMix64(seed: seed)
        let houses = Array(data.addresses)
        var mismatches = 0
        var byKind: [Substring: Int] = [:]
        func expectSame<T: Equatable>(_ ours: T, _ theirs: T, _ query: String) {
            guard ours != theirs else { return }
            mismatches += 1
            byKind[query.prefix { $0 != " " }, default: 0] += 1
            if mismatches <= 5 { Issue.record("\(what) (SEED=\(seed)): \(query): the layered index answers \(ours), a fresh one \(theirs)") }
        }
        func draw<T>(_ items: [T], _ count: Int) -> [T] {
            items.isEmpty ? [] : (0..<count).map { _ in items[Int(random.next() % UInt64(items.count))] }
        }
        let noPlaces: (String, Coordinate2) -> Bool? = { _, _ in nil }
        for house in draw(houses, 300) {
            guard let street = house.streetOrPlace else { continue }
            var texts = ["\(street) \(house.housenumber)", street]
            if let city = house.city { texts.append("\(street) \(house.housenumber), \(city)") }
            if street.count > 6 { texts.append(String(street.dropFirst())) }  // one typo
            for text in texts {
                guard let query = try? GeocodeQuery(text: text, limit: 5) else { continue }
                expectSame(book.search(query, placeNear: noPlaces), fresh.search(query, placeNear: noPlaces), "search \"\(text)\"")
            }
            let prefix = String(street.prefix(4))
            for text in [prefix, "\(street) \(house.housenumber.prefix(1))"] {
                expectSame(book.complete(text, near: nil, limit: 5), fresh.complete(text, near: nil, limit: 5), "complete \"\(text)\"")
            }
        }
        let points = draw(houses, 300).map { Coordinate2($0.latitude, $0.longitude) } + draw(data.streets.flatMap(\.points), 200)
        for p in points {
            let moved = Coordinate2(p.latitude + random.uniform(-0.002...0.002), p.longitude + random.uniform(-0.004...0.004))
            for q in [p, moved] {
                let (ours, theirs) = (book.reverse(q), fresh.reverse(q))
                expectSame(ours.map(\.match), theirs.map(\.match), "reverse \(q)")
            }
            let side = random.uniform(0.001...0.03)
            let box = BoundingBox(uncheckedWest: p.longitude - side, south: p.latitude - side, east: p.longitude + side, north: p.latitude + side)
            expectSame(book.lines(in: box, limit: 50).lines, fresh.lines(in: box, limit: 50).lines, "lines in \(box)")
            for kind in MapArea.Kind.allCases {
                expectSame(
                    book.areas(of: kind, in: box, limit: 50).areas,
                    fresh.areas.areas(of: kind, in: box, limit: 50).areas,
                    "\(kind) areas in \(box)"
                )
            }
        }
        #expect(mismatches == 0, "\(what) (SEED=\(seed)): \(mismatches) answers differ: \(byKind.sorted { $0.key < $1.key })")
    }
}
