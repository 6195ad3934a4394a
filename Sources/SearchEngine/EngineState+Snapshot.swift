import Gazetteer
import GeoCore
import Records
import SnapshotFile
import SpatialIndex
import TextIndex

/// The engine's state as one snapshot file: every built structure written as it lies in memory, read back with
/// copies instead of analysis, sorting and tree building. The file names the store it was made from (identity and
/// change sequence) and is used only when both match the store at start-up.
extension EngineState {
    /// Bumped whenever the layout of any structure below changes (3: text-index block bounds every 64 postings;
    /// 4: pin owners; 5: records in Hilbert order, text-index positions and block boxes; 6: the POIs' own houses;
    /// 7: record slots of 40 bytes, without coordinates; 8: the R-tree's vectors and boxes lane by lane per node).
    static let snapshotFormat: UInt32 = 8

    /// Writes the state to `path` atomically; answers the payload offsets of its regions (for tests).
    @discardableResult
    func writeSnapshot(to path: String) throws(SnapshotError) -> [Int] {
        guard let sequence else { throw .cannotWrite(path: path, reason: "the in-memory state's store sequence is unknown") }
        let file = try SnapshotWriter(path: path, formatVersion: EngineState.snapshotFormat)
        try file.write(sequence.identity)
        try file.write(sequence.sequence)
        try file.write(records.count)
        try records.write(to: file)
        file.mark()
        try file.write(meta)
        try file.write(categoryNames)
        try file.write(poiIDs.slots)
        try file.write(poiIDs.count)
        let pins = pinNumbers.keys.sorted()
        try file.write(pins)
        try file.write(pins.map { pinNumbers[$0]! })
        try poiSpatial.write(to: file)
        try pinSpatial.write(to: file)
        try text.write(to: file)
        file.mark()
        let categories = categoryMembers.keys.sorted()
        try file.write(categories)
        try file.write(nested: categories.map { categoryMembers[$0]! })
        let houses = recordHouses.all
        let owners = houses.keys.sorted()
        try file.write(owners)
        try file.write(owners.map { houses[$0]!.count })
        try file.write(AddressBlock.encode(owners.flatMap { houses[$0]! }))
        try file.commit()
        return file.regions
    }

    /// Reads a snapshot made from the store at `sequence`. - Throws: `.stale` when it was made from another store
    /// or at another point of its history; any other `SnapshotError` when it cannot be trusted.
    static func readSnapshot(from path: String, expecting sequence: ChangeSequence) throws(SnapshotError) -> EngineState {
        try readSnapshot(from: path) { staleness(of: $0, store: sequence, followingChanges: false) }
    }

    /// Why a snapshot made at `found` cannot stand for a store now at `store` (nil: it can). Without a change feed
    /// it must match exactly; with one it may be behind (the feed supplies the rest), never ahead.
    static func staleness(of found: ChangeSequence, store: ChangeSequence, followingChanges: Bool) -> String? {
        if found.identity != store.identity { return "it was made from another database" }
        if found.sequence == store.sequence || (followingChanges && found.sequence < store.sequence) { return nil }
        return "it stands at change \(found.sequence), the database at \(store.sequence)"
    }

    /// Reads a snapshot whose sequence `staleness` accepts (answers nil for). - Throws: `.stale` with the reason
    /// `staleness` gives; any other `SnapshotError` when it cannot be trusted.
    static func readSnapshot(from path: String, staleness: (ChangeSequence) -> String?) throws(SnapshotError) -> EngineState {
        let file = try SnapshotReader(path: path, formatVersion: snapshotFormat)
        let found = ChangeSequence(identity: try file.readString(), sequence: try file.readUInt64())
        if let reason = staleness(found) { throw .stale(path: path, reason: reason) }
        var state = EngineState()
        state.sequence = found
        let count = try file.readInt()
        state.records = try RecordStore(snapshot: file)
        state.meta = try file.readFlat()
        state.categoryNames = try file.readStrings()
        // Served from the mapping; its entries' numbers are checked against the records at each lookup.
        guard let poiIDs = IDTable(slots: try file.readFlat(), count: try file.readInt()) else {
            throw .corrupt(path: path, reason: "the id table's sizes are not a table's")
        }
        state.poiIDs = poiIDs
        let pinIDs = try file.readStrings()
        let pinNumbers: [UInt32] = try file.read()
        guard pinIDs.count == pinNumbers.count, pinNumbers.allSatisfy({ Int($0) < count }) else {
            throw .corrupt(path: path, reason: "record numbers out of range")
        }
        state.pinNumbers.reserveCapacity(pinIDs.count)
        for (id, number) in zip(pinIDs, pinNumbers) { state.pinNumbers[id] = number }
        state.poiSpatial = try SpatialIndex(snapshot: file)
        state.pinSpatial = try SpatialIndex(snapshot: file)
        state.text = try InvertedIndex(snapshot: file)
        let categories = try file.readStrings()
        let members: [[UInt32]] = try file.readNested()
        let owners = try file.readStrings()
        let houseCounts: [Int] = try file.read()
        let houseBytes: [UInt8] = try file.read()
        // Checked before decoding: a count out of range must be refused, not taken as a number of houses to read.
        guard owners.count == houseCounts.count, houseCounts.allSatisfy({ $0 > 0 && $0 <= houseBytes.count }) else {
            throw .corrupt(path: path, reason: "the POIs' houses: \(owners.count) owners, \(houseCounts.count) counts")
        }
        var houses: [AddressPoint] = []
        do {
            try houseBytes.withUnsafeBytes { bytes in try AddressBlock.decode(bytes, count: houseCounts.reduce(0, +), into: &houses) }
        } catch {
            throw .corrupt(path: path, reason: "the POIs' houses: \(error)")
        }
        var start = 0
        var byOwner: [String: [AddressPoint]] = [:]
        for (owner, count) in zip(owners, houseCounts) {
            byOwner[owner] = Array(houses[start..<(start + count)])
            start += count
        }
        state.recordHouses = RecordHouses(settled: byOwner)
        guard categories.count == members.count, file.isAtEnd, state.records.count == count, state.meta.count == count,
            state.categoryNames.count < Int(UInt16.max)
        else { throw .corrupt(path: path, reason: "sections of inconsistent sizes") }
        state.categoryMembers.reserveCapacity(categories.count)
        for (category, list) in zip(categories, members) { state.categoryMembers[category] = list }
        state.categoryCodes.reserveCapacity(state.categoryNames.count)
        for (code, name) in state.categoryNames.enumerated() { state.categoryCodes[name] = UInt16(code) }
        file.releaseResidentPages()
        return state
    }
}
