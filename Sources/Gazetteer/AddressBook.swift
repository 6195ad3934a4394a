import GeoCore
import TextIndex

/// The addresses the service answers from: the store's imported ones (`base`, the address index of the last
/// OpenStreetMap import, mapped from its snapshot) with the houses records carry in their own `addr:*` tags laid over
/// them — POIs written through the API or imported from JSONL, GeoJSON or CSV (`AddressPoint.houses`). A record's own
/// houses replace the base's houses of the same id (an `osm-n…` POI whose number a user corrected); a record without
/// such tags leaves the base alone (an imported shop keeps its building's address when its name is edited).
///
/// The records' houses are few beside an extract's millions, so their index (`written`) is built again whenever they
/// change, and queries ask both: a house outranks the street it stands on, in either index.
public final class AddressBook: Sendable {
    public let base: AddressIndex
    /// The records' houses, indexed on their own.
    public let written: AddressIndex
    /// The ids of the records that have houses of their own: the base's houses of these records are passed over.
    let overriding: Set<String>

    public init(base: AddressIndex, records: [String: [AddressPoint]] = [:]) {
        self.base = base
        let houses = records.keys.sorted().flatMap { records[$0]! }
        written = houses.isEmpty ? .empty : AddressIndex(AddressData(addresses: houses))
        overriding = Set(records.keys)
    }

    public static let empty = AddressBook(base: .empty)

    public var isEmpty: Bool { base.isEmpty && written.isEmpty }

    /// Houses in both indexes (a base house a record overrides is counted too).
    public var houseCount: Int { base.houseCount + written.houseCount }

    /// Whether the base's house `i` belongs to a record that has houses of its own: its id is the record's, or the
    /// record's with the `#k` a list of numbers adds.
    func hides(_ i: Int32) -> Bool {
        let id = base.houses.id(Int(i))
        if overriding.contains(id) { return true }
        guard let hash = id.lastIndex(of: "#"), id[id.index(after: hash)...].allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        return overriding.contains(String(id[..<hash]))
    }

    /// `AddressIndex.search` on both indexes, best first. A street one index answers is not answered again by the
    /// other (the records' houses make streets of their own names), unless the other found the house asked on it.
    public func search(_ query: GeocodeQuery, placeNear: (String, Coordinate2) -> Bool?) -> [AddressMatch] {
        guard !written.isEmpty else { return base.search(query, placeNear: placeNear) }
        let fromBase = base.search(query, placeNear: placeNear) { overriding.isEmpty ? false : hides($0) }
        let fromRecords = written.search(query, placeNear: placeNear)
        func street(_ match: AddressMatch) -> String { TextNormalizer.normalize(match.street) + "\u{1F}" + (match.city ?? "") }
        let baseStreets = Set(fromBase.map(street))
        let recordHouseStreets = Set(fromRecords.filter { $0.kind == .house }.map(street))
        var merged = fromBase.filter { !($0.kind == .street && recordHouseStreets.contains(street($0))) }
        merged += fromRecords.filter { !($0.kind == .street && baseStreets.contains(street($0))) }
        merged.sort { ($0.score, $1.id) > ($1.score, $0.id) }
        return Array(merged.prefix(query.limit))
    }

    /// `AddressIndex.reverse` on both indexes: the nearest house within `AddressIndex.houseRadius` in either, else the
    /// base's nearest street.
    public func reverse(_ point: Coordinate2) -> (match: AddressMatch, distance: Double)? {
        guard !written.isEmpty else { return base.reverse(point) }
        let fromBase = base.reverse(point) { overriding.isEmpty ? false : hides($0) }
        guard let fromRecords = written.reverse(point) else { return fromBase }
        guard let fromBase, fromBase.match.kind == .house else { return fromRecords }
        return (fromRecords.distance, fromRecords.match.id) < (fromBase.distance, fromBase.match.id) ? fromRecords : fromBase
    }

    /// The base's street lines in a box (`AddressIndex.lines(in:limit:)`): the records' houses make none.
    public func lines(in box: BoundingBox, limit: Int) -> (lines: [StreetLine], truncated: Bool) { base.lines(in: box, limit: limit) }
}
