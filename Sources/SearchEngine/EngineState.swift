import Dispatch
import Foundation
import Gazetteer
import GeoCore
import Parallelism
import Records
import SnapshotFile
import SpatialIndex
import Synchronization
import TextIndex

/// Everything the engine keeps in memory, replaced or mutated only under the engine's write lock.
///
/// A bulk load numbers records in Hilbert-curve order of their positions (`Loader.finish`), so that the records of a
/// posting-list block lie close together and keyword search with an origin can bound a whole block's distance;
/// records created later take the next numbers. Numbers are never reused, so a cursor that names a record number
/// stays meaningful. Each kind has its own spatial index (so per-kind clusters come straight from the
/// geohash grid); one inverted index covers both kinds.
struct EngineState {
    var records = RecordStore()
    /// What filters and ranking need of each record, flat and small, so scanning thousands of candidates does not
    /// copy whole records.
    var meta = FlatArray<RecordMeta>()
    /// Interned categories (`RecordMeta.category` indexes this).
    var categoryNames: [String] = []
    var categoryCodes: [String: UInt16] = [:]
    /// POI record numbers by id (pins, few, in `pinNumbers`).
    var poiIDs = IDTable()
    var pinNumbers: [String: UInt32] = [:]
    var poiSpatial = SpatialIndex()
    var pinSpatial = SpatialIndex()
    var text = InvertedIndex()
    /// Record numbers by exact category (POIs), sorted, for category-label matches.
    var categoryMembers: [String: [UInt32]] = [:]
    /// The store's change sequence this state reflects, or nil when unknown (no store, or another process wrote to
    /// the store behind this state's back): a snapshot is written only of a state that knows it.
    var sequence: ChangeSequence?
    /// The houses POIs carry in their own `addr:*` tags (`AddressPoint.houses`), by POI id: laid over the store's
    /// imported addresses (`AddressBook`).
    var recordHouses = RecordHouses()
    /// Names these contents for what is derived from them and kept (`WordCursorCache`): a number no state had
    /// before, given when a state is made and again after each write (`SearchEngine.write`).
    var generation = EngineState.newGeneration()
    /// When the POIs and the pins last changed, by area, for what is derived from the records of one kind in a box:
    /// vector tiles (`SearchEngine.tileVersion`).
    var poiCells = ChangedCells()
    var pinCells = ChangedCells()

    private static let generations = Atomic<UInt64>(0)
    static func newGeneration() -> UInt64 { generations.add(1, ordering: .relaxed).newValue }

    /// Keeps `recordHouses` of the POI `id`, now `poi` (nil: deleted).
    mutating func noteHouses(of id: String, now poi: POIRecord?) {
        let houses = poi.map { AddressPoint.houses(id: $0.id, tags: $0.tags, city: $0.city, latitude: $0.lat, longitude: $0.lon) } ?? []
        recordHouses.set(id, houses)
    }

    func spatial(_ kind: RecordKind) -> SpatialIndex { kind == .poi ? poiSpatial : pinSpatial }

    mutating func setMeta(_ number: UInt32, _ record: Hit.Record?) {
        while meta.count <= Int(number) { meta.append(RecordMeta()) }
        guard let record else {
            meta[Int(number)] = RecordMeta()
            return
        }
        let p = EngineState.position(record)
        var code = UInt16.max
        var nameLength: UInt16 = 0
        if case .poi(let poi) = record {
            if let existing = categoryCodes[poi.category] {
                code = existing
            } else {
                code = UInt16(categoryNames.count)
                categoryCodes[poi.category] = code
                categoryNames.append(poi.category)
            }
            nameLength = UInt16(min(poi.name.utf8.count, Int(UInt16.max)))
        }
        meta[Int(number)] = RecordMeta(
            live: true,
            isPin: EngineState.kind(record) == .pin,
            category: code,
            nameLength: nameLength,
            latitude: p.latitude,
            longitude: p.longitude
        )
    }

    func category(of number: UInt32) -> String? {
        let code = meta[Int(number)].category
        return code == UInt16.max ? nil : categoryNames[Int(code)]
    }

    /// The indexed text of a record: its name (and names in other languages) as name fields, the rest as other
    /// fields; a name counts three times.
    static func fields(_ record: Hit.Record) -> [InvertedIndex.Field] {
        var fields = fieldsAsWritten(record)
        // What the names' runs of Han read as in pinyin, from their start (docs/ARCHITECTURE.md, "Type-ahead and
        // pinyin"), weighted as a name is.
        if let pinyin = PinyinDictionary.bundled {
            var terms: [String] = []
            for field in fields where field.isName && TextNormalizer.containsCJK(field.text) {
                for term in pinyin.runTerms(of: field.text) where !terms.contains(term) { terms.append(term) }
            }
            if !terms.isEmpty { fields.append(InvertedIndex.Field(terms.joined(separator: " "), weight: 3, isName: true, isVerbatim: true)) }
        }
        return fields
    }

    /// The record's own text fields.
    private static func fieldsAsWritten(_ record: Hit.Record) -> [InvertedIndex.Field] {
        switch record {
        case .poi(let poi):
            var fields = [InvertedIndex.Field(poi.name, weight: 3, isName: true)]
            if let address = poi.address { fields.append(.init(address, weight: 1, isName: false)) }
            if let city = poi.city { fields.append(.init(city, weight: 1, isName: false)) }
            if !poi.tags.isEmpty {
                // Every other name a POI goes by (OpenStreetMap's name variants) is a name too.
                for key in ["name:en", "name:zh", "name:fi", "name:sv", "alt_name", "old_name", "official_name", "short_name"] {
                    if let value = poi.tags[key] { fields.append(.init(value, weight: 1, isName: true)) }
                }
                for key in ["brand", "cuisine", "operator"] {
                    if let value = poi.tags[key] { fields.append(.init(value, weight: 1, isName: false)) }
                }
            }
            return fields
        case .pin(let pin):
            return [
                .init(pin.firstName, weight: 3, isName: true), .init(pin.lastName, weight: 3, isName: true),
                .init(pin.mapString, weight: 1, isName: false),
            ]
        }
    }

    static func kind(_ record: Hit.Record) -> RecordKind {
        if case .pin = record { return .pin }
        return .poi
    }

    static func position(_ record: Hit.Record) -> (latitude: Double, longitude: Double) {
        switch record {
        case .poi(let poi): return (poi.lat, poi.lon)
        case .pin(let pin): return (pin.lat, pin.lon)
        }
    }

    /// The record's position as the text index keeps it, for its blocks' boxes.
    static func textPosition(_ record: Hit.Record) -> InvertedIndex.Position {
        let p = position(record)
        return InvertedIndex.Position(latitude: Float(p.latitude), longitude: Float(p.longitude))
    }

    static func category(_ record: Hit.Record) -> String? {
        if case .poi(let poi) = record { return poi.category }
        return nil
    }

    init() {}

    /// Builds the state from records in memory, with bulk-loaded spatial indexes.
    init(pois: [POIRecord], pins: [PinRecord]) {
        var loader = Loader(expected: pois.count)
        for start in stride(from: 0, to: pois.count, by: Loader.blockSize) {
            loader.add(pois[start..<min(pois.count, start + Loader.blockSize)])
        }
        self = loader.finish(pins: pins)
    }

    /// Bulk loading, a block of POIs at a time (as they come from the database), then pins; the spatial indexes
    /// are bulk-built at the end.
    struct Loader {
        static let blockSize = 65_536
        private var state = EngineState()
        private var poiPoints: [IndexedPoint] = []

        init(expected: Int) {
            poiPoints.reserveCapacity(expected)
            state.records.reserveCapacity(expected)
            state.poiIDs.reserveCapacity(expected)
        }

        /// Text analysis (normalizing and tokenizing) is most of the start-up work and independent per record: it
        /// runs on every core, a block at a time so the analyzed terms never all sit in memory at once.
        mutating func add(_ pois: ArraySlice<POIRecord>) {
            let analyzed = EngineState.analyze(pois)
            for (offset, poi) in pois.enumerated() {
                let number = UInt32(state.records.count)
                state.records.append(.poi(poi))
                state.setMeta(number, .poi(poi))
                // A later record of the same id takes the id.
                state.poiIDs.assign(poi.id, number: number) { state.records.poi($0, hasID: poi.id) }
                poiPoints.append(IndexedPoint(id: number, latitude: poi.lat, longitude: poi.lon))
                state.text.add(document: number, analyzed: analyzed[offset], at: EngineState.textPosition(.poi(poi)))
                state.categoryMembers[poi.category, default: []].append(number)
                if poi.tags["addr:housenumber"] != nil || !state.recordHouses.houses(of: poi.id).isEmpty { state.noteHouses(of: poi.id, now: poi) }
            }
        }

        consuming func finish(pins: [PinRecord]) -> EngineState {
            renumberInHilbertOrder()
            var pinPoints: [IndexedPoint] = []
            for pin in pins {
                let number = UInt32(state.records.count)
                state.records.append(.pin(pin))
                state.setMeta(number, .pin(pin))
                state.pinNumbers[pin.id] = number
                pinPoints.append(IndexedPoint(id: number, latitude: pin.lat, longitude: pin.lon))
                state.text.add(document: number, fields: EngineState.fields(.pin(pin)), marked: true, at: EngineState.textPosition(.pin(pin)))
            }
            state.text.finishBulkLoad()
            state.poiSpatial = SpatialIndex(bulkLoading: poiPoints)
            state.pinSpatial = SpatialIndex(bulkLoading: pinPoints)
            return state
        }

        /// Numbers the POIs loaded so far (numbered as they came) in Hilbert-curve order of their positions, ties in
        /// the order they came: posting lists, category members and the id table follow.
        private mutating func renumberInHilbertOrder() {
            let count = state.records.count
            guard count > 1 else { return }
            let order = HilbertCurve.order(count) { (state.meta[$0].latitude, state.meta[$0].longitude) }
            var numbers = [UInt32](repeating: 0, count: count)
            for (new, old) in order.enumerated() { numbers[old] = UInt32(new) }
            state.records.reorder(order)
            var meta = state.meta
            for (new, old) in order.enumerated() { meta[new] = state.meta[old] }
            state.meta = meta
            state.poiIDs.renumber(numbers)
            state.text.renumber(numbers)
            for key in Array(state.categoryMembers.keys) {
                state.categoryMembers[key] = state.categoryMembers[key]!.map { numbers[Int($0)] }.sorted()
            }
            poiPoints = poiPoints.map { IndexedPoint(id: numbers[Int($0.id)], latitude: $0.latitude, longitude: $0.longitude) }
        }
    }

    /// `InvertedIndex.terms(of:)` of each record, computed on all cores.
    static func analyze(_ pois: ArraySlice<POIRecord>) -> [InvertedIndex.Analyzed] {
        let start = pois.startIndex
        return ConcurrentRanges.map(pois.count) { range in
            pois[(start + range.lowerBound)..<(start + range.upperBound)].map { InvertedIndex.terms(of: EngineState.fields(.poi($0))) }
        }
    }

    /// Adds or replaces a record; returns its number.
    @discardableResult
    mutating func put(_ record: Hit.Record) -> UInt32 {
        let kind = EngineState.kind(record)
        let id: String
        switch record {
        case .poi(let poi): id = poi.id
        case .pin(let pin): id = pin.id
        }
        let number: UInt32
        var replaced: Hit.Record?
        if let existing = kind == .poi ? poiNumber(id) : pinNumbers[id] {
            number = existing
            if let old = self.record(Int(number)) {
                unindex(old, number, text: false, category: EngineState.category(old) != EngineState.category(record))
                noteChange(old)
                replaced = old
            }
        } else {
            number = UInt32(records.count)
            records.append(nil)
            if kind == .poi { poiIDs.insert(id, number: number) } else { pinNumbers[id] = number }
        }
        records.set(Int(number), record)
        setMeta(number, record)
        noteChange(record)
        let p = EngineState.position(record)
        if kind == .poi {
            poiSpatial.insert(IndexedPoint(id: number, latitude: p.latitude, longitude: p.longitude))
        } else {
            pinSpatial.insert(IndexedPoint(id: number, latitude: p.latitude, longitude: p.longitude))
        }
        // Pins are marked, so that a keyword query tells a posting's kind without reading the record's facts.
        if let replaced {
            // In place: a word the record keeps costs its block, not its list (`InvertedIndex.replace`).
            text.replace(
                document: number,
                fields: EngineState.fields(replaced),
                with: EngineState.fields(record),
                marked: kind == .pin,
                at: EngineState.textPosition(record)
            )
        } else {
            text.add(document: number, fields: EngineState.fields(record), marked: kind == .pin, at: EngineState.textPosition(record))
        }
        // (`insertSorted` leaves a member where it is: a record that keeps its category costs no move of the list.)
        if let category = EngineState.category(record) { categoryMembers[category, default: []].insertSorted(number) }
        if case .poi(let poi) = record { noteHouses(of: id, now: poi) }
        return number
    }

    /// Record `number`, a POI at its facts' coordinates (read before its facts change: `put` and `delete` read the
    /// old record first).
    func record(_ number: Int) -> Hit.Record? { records.record(number, at: place(number)) }

    /// The record of this kind and id as the state has it (nil: none), what a write's fence transition starts from.
    func record(_ kind: RecordKind, id: String) -> Hit.Record? {
        let number = kind == .poi ? poiNumber(id) : pinNumbers[id]
        return number.flatMap { record(Int($0)) }
    }

    /// A POI as its packed bytes, for an answer.
    func packed(_ number: Int) -> PackedPOI? { records.packed(number, at: place(number)) }

    /// Every record number has its facts (`setMeta` runs with every record written, and a snapshot whose facts do
    /// not cover its records is refused).
    private func place(_ number: Int) -> RecordStore.Place { (meta[number].latitude, meta[number].longitude) }

    /// The record number of the POI `id`.
    func poiNumber(_ id: String) -> UInt32? { poiIDs.number(of: id) { records.poi($0, hasID: id) } }

    /// Removes a record by kind and id; returns it.
    mutating func delete(_ kind: RecordKind, id: String) -> Hit.Record? {
        guard let number = kind == .poi ? poiIDs.remove(id, isRecord: { records.poi($0, hasID: id) }) : pinNumbers.removeValue(forKey: id),
            let old = record(Int(number))
        else { return nil }
        unindex(old, number)
        records.set(Int(number), nil)
        setMeta(number, nil)
        noteChange(old)
        if kind == .poi { noteHouses(of: id, now: nil) }
        return old
    }

    /// Notes a record put or deleted where it stands (or stood) in its kind's `ChangedCells`.
    private mutating func noteChange(_ record: Hit.Record) {
        let p = EngineState.position(record)
        if EngineState.kind(record) == .poi {
            poiCells.note(latitude: p.latitude, longitude: p.longitude)
        } else {
            pinCells.note(latitude: p.latitude, longitude: p.longitude)
        }
    }

    /// Takes a record out of the indexes: out of the text index and its category's members too, unless `text` or
    /// `category` is false (`put` replaces the record there in place).
    private mutating func unindex(_ record: Hit.Record, _ number: UInt32, text removesText: Bool = true, category removesCategory: Bool = true) {
        if EngineState.kind(record) == .poi { poiSpatial.remove(number) } else { pinSpatial.remove(number) }
        if removesText { text.remove(document: number, fields: EngineState.fields(record)) }
        if removesCategory, let category = EngineState.category(record) { categoryMembers[category]?.removeSorted(number) }
    }
}

extension Array where Element == UInt32 {
    /// Inserts into a sorted array (new records have the highest numbers, so this is usually an append).
    mutating func insertSorted(_ value: UInt32) {
        if let last, last >= value {
            let i = partitioningIndex { $0 >= value }
            if i < count && self[i] == value { return }
            insert(value, at: i)
        } else {
            append(value)
        }
    }

    mutating func removeSorted(_ value: UInt32) {
        let i = partitioningIndex { $0 >= value }
        if i < count && self[i] == value { remove(at: i) }
    }

    /// The first index whose element satisfies a predicate that is false then true along the array.
    func partitioningIndex(where belongs: (UInt32) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if belongs(self[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}

/// Per-record facts for filtering and ranking without touching the full record.
struct RecordMeta: Sendable {
    var live = false
    var isPin = false
    /// Index into `EngineState.categoryNames`, or UInt16.max for none.
    var category = UInt16.max
    var nameLength: UInt16 = 0
    var latitude = 0.0
    var longitude = 0.0
}
