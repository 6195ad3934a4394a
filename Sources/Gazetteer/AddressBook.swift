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

/// The addresses the service answers from: the store's imported ones (`base`, the address index of the last
/// OpenStreetMap import, mapped from its snapshot) with the houses records carry in their own `addr:*` tags laid over
/// them — POIs written through the API or imported from JSONL, GeoJSON or CSV (`RecordHouses`). A record's own
/// houses replace the base's houses of the same id (an `osm-n…` POI whose number a user corrected); a record without
/// such tags leaves the base alone (an imported shop keeps its building's address when its name is edited).
///
/// Each layer of the records' houses has an index of its own, and queries ask all three: a house outranks the street
/// it stands on, in any of them.
public final class AddressBook: Sendable {
    public let base: AddressIndex
    public let records: RecordHouses
    let settled: AddressIndex
    let recent: AddressIndex

    /// - Parameter previous: a book whose layer indexes are reused where their version is the same.
    public init(base: AddressIndex, records: RecordHouses = RecordHouses(), reusing previous: AddressBook? = nil) {
        func index(_ layer: [String: [AddressPoint]]) -> AddressIndex {
            let houses = layer.keys.sorted().flatMap { layer[$0]! }
            return houses.isEmpty ? .empty : AddressIndex(AddressData(addresses: houses))
        }
        self.base = base
        self.records = records
        settled = previous.flatMap { $0.records.settledVersion == records.settledVersion ? $0.settled : nil } ?? index(records.settled)
        recent = previous.flatMap { $0.records.recentVersion == records.recentVersion ? $0.recent : nil } ?? index(records.recent)
    }

    public static let empty = AddressBook(base: .empty)

    public var isEmpty: Bool { base.isEmpty && records.isEmpty }

    /// Houses in the indexes (a house a later layer hides is counted too).
    public var houseCount: Int { base.houseCount + settled.houseCount + recent.houseCount }

    /// The record id a house id stands for: itself, or without the `#k` a list of numbers adds.
    static func owners(of id: String) -> [String] {
        guard let hash = id.lastIndex(of: "#"), id[id.index(after: hash)...].allSatisfy({ $0.isASCII && $0.isNumber }) else { return [id] }
        return [id, String(id[..<hash])]
    }

    /// Whether the base's house `i` belongs to a record that has houses of its own.
    func hidesBase(_ i: Int32) -> Bool {
        Self.owners(of: base.houses.id(Int(i))).contains { !records.houses(of: $0).isEmpty }
    }

    /// Whether the settled layer's house `i` belongs to a record changed since.
    func hidesSettled(_ i: Int32) -> Bool {
        Self.owners(of: settled.houses.id(Int(i))).contains { records.recent[$0] != nil }
    }

    /// `AddressIndex.search` on every index, best first. A street is answered once, and not at all where a house on
    /// it is (the records' houses make streets of their own names).
    public func search(_ query: GeocodeQuery, placeNear: (String, Coordinate2) -> Bool?) -> [AddressMatch] {
        guard !records.isEmpty else { return base.search(query, placeNear: placeNear) }
        let found =
            base.search(query, placeNear: placeNear) { hidesBase($0) } + settled.search(query, placeNear: placeNear) { hidesSettled($0) }
            + recent.search(query, placeNear: placeNear)
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

    /// `AddressIndex.complete` on every index, best first, a street once.
    public func complete(_ text: String, near: Coordinate?, limit: Int) -> [AddressMatch] {
        guard !records.isEmpty else { return base.complete(text, near: near, limit: limit) }
        let found =
            base.complete(text, near: near, limit: limit) { hidesBase($0) } + settled.complete(text, near: near, limit: limit) { hidesSettled($0) }
            + recent.complete(text, near: near, limit: limit)
        var seen = Set<String>()
        let merged = found.sorted { ($0.score, $1.id) > ($1.score, $0.id) }.filter { match in
            seen.insert(match.kind == .house ? match.id : "street:" + TextNormalizer.normalize(match.street) + "\u{1F}" + (match.city ?? "")).inserted
        }
        return Array(merged.prefix(limit))
    }

    /// `AddressIndex.reverse` on every index: the nearest house within `AddressIndex.houseRadius` in any, else the
    /// base's nearest street.
    public func reverse(_ point: Coordinate2) -> (match: AddressMatch, distance: Double)? {
        guard !records.isEmpty else { return base.reverse(point) }
        let candidates = [
            base.reverse(point) { hidesBase($0) }, settled.reverse(point) { hidesSettled($0) }, recent.reverse(point),
        ]
        .compactMap { $0 }
        let houses = candidates.filter { $0.match.kind == .house }
        if let nearest = houses.min(by: { ($0.distance, $0.match.id) < ($1.distance, $1.match.id) }) { return nearest }
        return candidates.first
    }

    /// The base's street lines in a box (`AddressIndex.lines(in:limit:)`): the records' houses make none.
    public func lines(in box: BoundingBox, limit: Int) -> (lines: [StreetLine], truncated: Bool) { base.lines(in: box, limit: limit) }

    /// The base's water and building areas (`MapAreaIndex`).
    public var areas: MapAreaIndex { base.areas }
}
