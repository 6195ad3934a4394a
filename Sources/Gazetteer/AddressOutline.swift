import Records
import SnapshotFile
import Synchronization

/// A base address index as a writer of change files reads it (`poi import x.osc.gz`, `poi replicate`): only what
/// `AddressChanges.add` and `layerSizeBound` ask of the base (`AddressBase`), served in place from the base's
/// snapshot. Nothing is decoded — no line, street or name becomes a Swift value, no dictionary is made — and the
/// payload's checksum is not read: such a writer serves no query, and the server that starts next reads the
/// snapshot whole, checksum first, before it lays the changes over it. A damaged snapshot then goes with the changes
/// written over it, and the index is built from the store (`SearchEngine.mapped`). Every read here stays in bounds
/// whatever the file holds: the columns' sizes and references are checked as they are read.
public final class AddressOutline: AddressBase {
    private let houses: HouseTable
    /// The lines' ids, and the lines' coordinates (latitude, longitude, … per line).
    private let lineIDs: PlaceTable.StringColumn
    private let points: NestedColumn<Double>
    private let streetHouses: NestedColumn<Int32>
    private let streetLines: NestedColumn<Int32>
    private let names: PlaceTable.StringColumn
    private let streetsOfName: NestedColumn<Int32>
    private let streetOfAddress: FlatArray<Int32>
    private let streetOfLine: FlatArray<Int32>
    private let areas: MapAreaIndex
    private let objectOrder = Mutex<Bool?>(nil)

    /// Reads the outline of the snapshot `AddressIndex.writeSnapshot` wrote at `path` for `generation`.
    /// - Throws: `SnapshotError` when it is missing, of another format or generation, or its columns disagree.
    public init(snapshot path: String, generation: String) throws(SnapshotError) {
        let file = try SnapshotReader(path: path, formatVersion: AddressIndex.snapshotFormat, verifyingChecksum: false)
        guard try file.readString() == AddressIndex.snapshotKey(generation: generation) else {
            throw .stale(path: path, reason: "it was written for other addresses")
        }
        func corrupt(_ what: String) -> SnapshotError { .corrupt(path: path, reason: what) }
        func skipStrings() throws(SnapshotError) { _ = try PlaceTable.StringColumn(snapshot: file) }
        func skipOptionals() throws(SnapshotError) {
            let _: FlatArray<UInt8> = try file.readFlat()
            try skipStrings()
        }
        houses = try HouseTable(snapshot: file)
        // The street lines' columns (`AddressIndex.writeSnapshot`): ids, kinds, name counts, names, points, numbers,
        // cities, postcodes.
        lineIDs = try PlaceTable.StringColumn(snapshot: file)
        let _: FlatArray<UInt8> = try file.readFlat()
        let _: FlatArray<UInt32> = try file.readFlat()
        try skipStrings()
        points = try NestedColumn(snapshot: file)
        _ = try NestedColumn<Int64>(snapshot: file)
        try skipOptionals()
        try skipOptionals()
        // The streets' columns: names, cities, postcodes, houses, lines, anchors.
        try skipStrings()
        try skipOptionals()
        try skipOptionals()
        streetHouses = try NestedColumn(snapshot: file)
        streetLines = try NestedColumn(snapshot: file)
        let _: FlatArray<Double> = try file.readFlat()
        // Names, the streets of each, the typo table, the number tables, line boxes, then each member's street.
        names = try PlaceTable.StringColumn(snapshot: file)
        streetsOfName = try NestedColumn(snapshot: file)
        let _: FlatArray<UInt64> = try file.readFlat()
        try skipStrings()
        let _: FlatArray<AddressIndex.NumberEntry> = try file.readFlat()
        let _: FlatArray<UInt32> = try file.readFlat()
        let _: FlatArray<Double> = try file.readFlat()
        streetOfAddress = try file.readFlat()
        streetOfLine = try file.readFlat()
        // The house and segment grids, then the areas.
        _ = try CellTable<UInt32>(snapshot: file)
        _ = try CellTable<SegmentGrid.Segment>(snapshot: file)
        areas = try MapAreaIndex(snapshot: file)
        let (n, s) = (lineIDs.count, streetHouses.count)
        guard file.isAtEnd, lineIDs.isConsistent, names.isConsistent, points.count == n, streetLines.count == s,
            streetsOfName.count == names.count, streetOfAddress.count == houses.count, streetOfLine.count == n,
            streetOfAddress.allSatisfy({ $0 >= -1 && Int($0) < s }), streetOfLine.allSatisfy({ $0 >= -1 && Int($0) < s }),
            streetHouses.values.allSatisfy({ $0 >= 0 && Int($0) < houses.count }), streetLines.values.allSatisfy({ $0 >= 0 && Int($0) < n }),
            streetsOfName.values.allSatisfy({ $0 >= 0 && Int($0) < s })
        else { throw corrupt("columns of inconsistent sizes or references out of range") }
    }

    public var houseCount: Int { houses.count }
    public var lineCount: Int { lineIDs.count }
    public var areaCount: Int { areas.count }

    public var isInObjectOrder: Bool {
        Self.isInObjectOrder(objectOrder, houses: houses, lineCount: lineIDs.count, lineKey: lineKey, areas: areas)
    }

    public func knownInObjectOrder() { objectOrder.withLock { if $0 == nil { $0 = true } } }

    private func lineKey(_ l: Int) -> Int64 { lineIDs.withBytes(l) { Self.objectKey($0) } }

    public func houseRange(ofObject key: Int64) -> Range<Int> { Self.range(of: key, count: houses.count, houses.objectKey) }
    public func lineRange(ofObject key: Int64) -> Range<Int> { Self.range(of: key, count: lineIDs.count) { lineKey($0) } }

    public func street(ofHouse i: Int) -> Int32 { streetOfAddress[i] }
    public func street(ofLine l: Int) -> Int32 { streetOfLine[l] }

    public func memberCount(ofStreet s: Int32) -> Int { streetHouses.range(Int(s)).count + streetLines.range(Int(s)).count }

    public func memberCells(of s: Int32) -> [UInt32] {
        var cells: [UInt32] = []
        for k in streetHouses.range(Int(s)) {
            let i = Int(streetHouses.values[k])
            cells.append(AddressIndex.cell(houses.latitudes[i], houses.longitudes[i]))
        }
        for k in streetLines.range(Int(s)) {
            let line = points.range(Int(streetLines.values[k]))
            let vertices = line.count / 2
            guard vertices > 0 else { continue }
            let middle = line.lowerBound + 2 * (vertices / 2)
            cells.append(AddressIndex.cell(points.values[middle], points.values[middle + 1]))
        }
        return cells
    }

    public func streets(named wanted: Set<String>) -> [String: [Int32]] {
        guard !wanted.isEmpty else { return [:] }
        // One pass over the names' bytes, each hashed in place and compared only when its hash is wanted.
        var byHash: [UInt64: [String]] = [:]
        for name in wanted {
            var copy = name
            byHash[copy.withUTF8 { Self.hash($0) }, default: []].append(name)
        }
        var found: [String: [Int32]] = [:]
        for n in 0..<names.count {
            let candidates = names.withBytes(n) { bytes in byHash[Self.hash(bytes)]?.filter { names.equals(n, $0) } } ?? []
            for name in candidates {
                found[name] = streetsOfName.range(n).map { streetsOfName.values[$0] }
            }
        }
        return found.filter { !$0.value.isEmpty }
    }

    /// FNV-1a over a name's bytes.
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}

/// Arrays of plain values as `SnapshotWriter.write(nested:)` lays them — their lengths, then one run of values —
/// served in place: array `i` is `values[range(i)]`.
struct NestedColumn<T: BitwiseCopyable>: Sendable {
    let values: FlatArray<T>
    /// Where each array begins in `values`, and the end of the last.
    private let starts: [Int]

    init(snapshot file: SnapshotReader) throws(SnapshotError) {
        let counts: FlatArray<UInt32> = try file.readFlat()
        values = try file.readFlat()
        var starts = [Int](repeating: 0, count: counts.count + 1)
        for (i, count) in counts.enumerated() { starts[i + 1] = starts[i] + Int(count) }
        guard starts[counts.count] == values.count else { throw .corrupt(path: file.path, reason: "nested array lengths do not add up") }
        self.starts = starts
    }

    var count: Int { starts.count - 1 }

    func range(_ i: Int) -> Range<Int> { starts[i]..<starts[i + 1] }
}

extension PlaceTable.StringColumn {
    /// Strings as `SnapshotWriter.write(_: [String])` lays them, served in place.
    init(snapshot file: SnapshotReader) throws(SnapshotError) {
        self.init(ends: try file.readFlat(), blob: try file.readFlat())
    }

    /// String `i`'s bytes (`isConsistent` first: they are read unchecked against each other).
    func withBytes<R>(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        let start = i == 0 ? 0 : Int(ends[i - 1])
        let end = Int(ends[i])
        return blob.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[start..<end])) }
    }
}
