import GeoCore
import Records
import Synchronization
import TextIndex

/// The houses records carry in their own `addr:*` tags (`AddressPoint.houses`), by record id, in two layers: the
/// settled ones, and the changes since — a record's houses now, or none (which hides its settled ones). A change
/// costs the index of the changes alone (`AddressBook` rebuilds only the layer whose version moved); past
/// `recentLimit` changed records they are merged into the settled layer, whose index is then built once. The limit is
/// √(2 × settled records) (at least 64), which makes a stream of single writes cost the least: a build of the
/// changes at each, of everything every `recentLimit` (at 100 000 records' houses: 447).
public struct RecordHouses: Sendable {
    public private(set) var settled: [String: [AddressPoint]] = [:]
    public private(set) var recent: [String: [AddressPoint]] = [:]
    /// Numbers no other layer of this process has had: they change with their layer.
    public private(set) var settledVersion = 0
    public private(set) var recentVersion = 0

    /// How many changed records are kept apart before they are settled.
    public var recentLimit: Int { max(64, Int(Double(2 * settled.count).squareRoot())) }
    private static let versions = Atomic<Int>(0)
    private static func nextVersion() -> Int { versions.add(1, ordering: .relaxed).newValue }

    public init() {}

    /// All of them settled.
    public init(settled: [String: [AddressPoint]]) {
        self.settled = settled.filter { !$0.value.isEmpty }
        settledVersion = Self.nextVersion()
    }

    /// The record's houses now.
    public func houses(of id: String) -> [AddressPoint] { recent[id] ?? settled[id] ?? [] }

    /// Every record that has houses, with them.
    public var all: [String: [AddressPoint]] {
        var all = settled
        for (id, houses) in recent { all[id] = houses.isEmpty ? nil : houses }
        return all
    }

    public var isEmpty: Bool { settled.isEmpty && recent.allSatisfy { $0.value.isEmpty } }

    /// Records the record's houses now (none: it has none).
    public mutating func set(_ id: String, _ houses: [AddressPoint]) {
        guard self.houses(of: id) != houses else { return }
        recent[id] = (settled[id] ?? []) == houses ? nil : houses
        recentVersion = Self.nextVersion()
        if recent.count > recentLimit { settle() }
    }

    /// Merges the changes into the settled layer.
    public mutating func settle() {
        guard !recent.isEmpty else { return }
        for (id, houses) in recent { settled[id] = houses.isEmpty ? nil : houses }
        recent = [:]
        settledVersion = Self.nextVersion()
        recentVersion = Self.nextVersion()
    }
}

/// The addresses the service answers from: the store's imported ones (`osm`: the address index of the last
/// OpenStreetMap import, mapped from its snapshot, with the change files applied since laid over it, `AddressLayer`)
/// with the houses records carry in their own `addr:*` tags laid over them — POIs written through the API or imported
/// from JSONL, GeoJSON or CSV (`RecordHouses`). A record's own houses replace the imported houses of the same id (an
/// `osm-n…` POI whose number a user corrected); a record without such tags leaves them alone (an imported shop keeps
/// its building's address when its name is edited).
///
/// Each layer of the records' houses has an index of its own, and queries ask all of them: a house outranks the
/// street it stands on, in any of them.
public final class AddressBook: Sendable {
    public let osm: AddressLayer
    public let records: RecordHouses
    let settled: AddressIndex
    let recent: AddressIndex

    /// The imported addresses' base index.
    public var base: AddressIndex { osm.base }

    /// - Parameter previous: a book whose layer indexes are reused where their version is the same.
    public convenience init(base: AddressIndex, records: RecordHouses = RecordHouses(), reusing previous: AddressBook? = nil) {
        self.init(osm: AddressLayer(base: base), records: records, reusing: previous)
    }

    /// - Parameter previous: a book whose layer indexes are reused where their version is the same.
    public init(osm: AddressLayer, records: RecordHouses = RecordHouses(), reusing previous: AddressBook? = nil) {
        func index(_ layer: [String: [AddressPoint]]) -> AddressIndex {
            let houses = layer.keys.sorted().flatMap { layer[$0]! }
            return houses.isEmpty ? .empty : AddressIndex(AddressData(addresses: houses))
        }
        self.osm = osm
        self.records = records
        settled = previous.flatMap { $0.records.settledVersion == records.settledVersion ? $0.settled : nil } ?? index(records.settled)
        recent = previous.flatMap { $0.records.recentVersion == records.recentVersion ? $0.recent : nil } ?? index(records.recent)
    }

    public static let empty = AddressBook(base: .empty)

    public var isEmpty: Bool { osm.isEmpty && records.isEmpty }

    /// Houses in the indexes (a house a later layer hides is counted too).
    public var houseCount: Int { base.houseCount + osm.layerHouseCount + settled.houseCount + recent.houseCount }

    /// The record id a house id stands for: itself, or without the `#k` a list of numbers adds.
    static func owners(of id: String) -> [String] {
        guard let hash = id.lastIndex(of: "#"), id[id.index(after: hash)...].allSatisfy({ $0.isASCII && $0.isNumber }) else { return [id] }
        return [id, String(id[..<hash])]
    }

    /// Whether house `i` of one of the imported indexes (the base, or a level of changes over it) belongs to a
    /// record that has houses of its own.
    func hidesImported(_ index: AddressIndex, _ i: Int32) -> Bool {
        !records.isEmpty && Self.owners(of: index.houses.id(Int(i))).contains { !records.houses(of: $0).isEmpty }
    }

    /// Whether the settled layer's house `i` belongs to a record changed since.
    func hidesSettled(_ i: Int32) -> Bool {
        Self.owners(of: settled.houses.id(Int(i))).contains { records.recent[$0] != nil }
    }

    private var hidden: AddressLayer.Hidden { AddressLayer.Hidden(house: hidesImported) }

    /// `AddressIndex.search` on every index, best first. With the records' houses, a street is answered once, and not
    /// at all where a house on it is (the records' houses make streets of their own names); without them, the
    /// imported layers hold each street once.
    public func search(_ query: GeocodeQuery, placeNear: (String, Coordinate2) -> Bool?) -> [AddressMatch] {
        if records.isEmpty && osm.changes.isEmpty { return base.search(query, placeNear: placeNear) }
        let imported = osm.search(query, placeNear: placeNear, hidden: hidden)
        guard !records.isEmpty else { return Array(imported.sorted { ($0.score, $1.id) > ($1.score, $0.id) }.prefix(query.limit)) }
        let found =
            imported + settled.search(query, placeNear: placeNear) { hidesSettled($0) } + recent.search(query, placeNear: placeNear)
        func street(_ match: AddressMatch) -> String { TextNormalizer.normalize(match.street) + "\u{1F}" + (match.city ?? "") }
        var answered = Set(found.filter { $0.kind == .house }.map(street))
        var merged: [AddressMatch] = []
        for match in found {
            if match.kind == .street {
                guard answered.insert(street(match)).inserted else { continue }
            }
            merged.append(match)
        }
        merged.sort { ($0.score, $1.id) > ($1.score, $0.id) }
        return Array(merged.prefix(query.limit))
    }

    /// `AddressIndex.complete` on every index, merged by `CompletionRank`: the imported layers' answers as one index of
    /// them all would give (with `near`, from the first `limit` streets of each layer by name rather than of both),
    /// and the records' houses beside them, a street of theirs not where an imported street has its name.
    public func complete(_ text: String, near: Coordinate?, limit: Int) -> [AddressMatch] {
        if records.isEmpty && osm.changes.isEmpty { return base.complete(text, near: near, limit: limit) }
        let imported = osm.completions(text, near: near, limit: limit, hidden: hidden)
        let mine =
            settled.completions(text, near: near, limit: limit) { hidesSettled($0) } + recent.completions(text, near: near, limit: limit)
        func street(_ match: AddressMatch) -> String { "street:" + TextNormalizer.normalize(match.street) + "\u{1F}" + (match.city ?? "") }
        var seen = Set(imported.map { $0.match.kind == .house ? $0.match.id : street($0.match) })
        let merged =
            imported + mine.sorted { $0.rank < $1.rank }.filter { seen.insert($0.match.kind == .house ? $0.match.id : street($0.match)).inserted }
        return merged.sorted { $0.rank < $1.rank }.prefix(limit).map(\.match)
    }

    /// `AddressIndex.reverse` on every index: the nearest house within `AddressIndex.houseRadius` in any, else the
    /// nearest street of the imported ones.
    public func reverse(_ point: Coordinate2) -> (match: AddressMatch, distance: Double)? {
        if records.isEmpty && osm.changes.isEmpty { return base.reverse(point) }
        let imported = osm.reverse(point, hidden: hidden)
        let candidates = imported + [settled.reverse(point) { hidesSettled($0) }, recent.reverse(point)].compactMap { $0 }
        // Equal distances go to the first in object order, as within one index (which keeps its houses and lines so).
        func nearer(_ a: (match: AddressMatch, distance: Double), _ b: (match: AddressMatch, distance: Double)) -> Bool {
            if a.distance != b.distance { return a.distance < b.distance }
            let (x, y) = (OSMObjectKey.order(of: a.match.id), OSMObjectKey.order(of: b.match.id))
            return x == nil && y == nil ? a.match.id < b.match.id : OSMObjectKey.precedes(x, 0, y, 1)
        }
        if let nearest = candidates.filter({ $0.match.kind == .house }).min(by: nearer) { return nearest }
        return imported.min(by: nearer) ?? candidates.first
    }

    /// The imported street lines in a box (`AddressIndex.lines(in:limit:)`): the records' houses make none.
    public func lines(in box: BoundingBox, limit: Int) -> (lines: [StreetLine], truncated: Bool) { osm.lines(in: box, limit: limit) }

    /// The imported water and building areas in a box (`MapAreaIndex.areas(of:in:limit:)`).
    public func areas(of kind: MapArea.Kind, in box: BoundingBox, limit: Int) -> (areas: [MapArea], truncated: Bool) {
        osm.areas(of: kind, in: box, limit: limit)
    }

    /// The box around the imported areas (nil: none).
    public var areaBounds: BoundingBox? { osm.areaBounds }
}
