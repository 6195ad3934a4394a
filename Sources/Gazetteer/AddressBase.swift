import GeoCore
import Records
import SnapshotFile
import Synchronization
import TextIndex

/// What laying change files over a base address index reads of the base (`AddressChanges.add`, `layerSizeBound`,
/// `AddressLayer.limit`): where an object's houses and lines are, the streets they belong to, which streets a new
/// member joins. A served `AddressIndex` answers it, and so does the `AddressOutline` a writer of change files reads
/// from the base's snapshot without decoding it (docs/ARCHITECTURE.md, "OpenStreetMap that stays current").
public protocol AddressBase: AnyObject, Sendable {
    var houseCount: Int { get }
    var lineCount: Int { get }
    var areaCount: Int { get }
    /// Whether houses, lines and areas (the sea aside, which is last) are in object order (`OSMObjectKey`), as imports
    /// and change files store them: then an object's outputs are found by binary search. Checked once per base.
    var isInObjectOrder: Bool { get }
    /// Takes the base as in object order without the scan `isInObjectOrder` makes: for a base read from a snapshot
    /// with changes beside it that were laid over it, which only a base in object order takes
    /// (`AddressChanges.canLie`); a snapshot of one generation is always the same build of the same addresses.
    func knownInObjectOrder()
    /// The houses and the lines an object (`OSMObjectKey.packed`) made; empty unless in object order.
    func houseRange(ofObject key: Int64) -> Range<Int>
    func lineRange(ofObject key: Int64) -> Range<Int>
    /// The street house `i` or line `l` belongs to; -1 for none.
    func street(ofHouse i: Int) -> Int32
    func street(ofLine l: Int) -> Int32
    /// How many houses and lines street `s` has.
    func memberCount(ofStreet s: Int32) -> Int
    /// The cells (`AddressIndex.cell`) of street `s`'s houses and of its lines' middle vertices, as the build files them.
    func memberCells(of s: Int32) -> [UInt32]
    /// The streets that have each of `names` (normalized) among their names; names no street has are left out.
    func streets(named names: Set<String>) -> [String: [Int32]]
}

extension AddressBase {
    /// An id's object as `OSMObjectKey.packed`; -1 for an id that is not an OpenStreetMap object's (those sort first).
    static func objectKey(_ id: String) -> Int64 { OSMObjectKey.order(of: id).map(OSMObjectKey.packed) ?? -1 }

    static func objectKey(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64 { OSMObjectKey.order(of: bytes).map(OSMObjectKey.packed) ?? -1 }

    static func isAscending(_ count: Int, _ key: (Int) -> Int64) -> Bool {
        var previous = Int64.min
        for i in 0..<count {
            let k = key(i)
            if k < previous { return false }
            previous = k
        }
        return true
    }

    /// `isInObjectOrder`: whether `houses`, the lines (`lineKey` of each of `lineCount`) and the areas before the sea
    /// ascend in object order; scanned once, then kept in `known`.
    static func isInObjectOrder(
        _ known: borrowing Mutex<Bool?>,
        houses: HouseTable,
        lineCount: Int,
        lineKey: (Int) -> Int64,
        areas: MapAreaIndex
    ) -> Bool {
        known.withLock { known in
            if let known { return known }
            let ordered =
                isAscending(houses.count, houses.objectKey) && isAscending(lineCount, lineKey)
                && isAscending(areas.seaStart) { objectKey(areas.id($0)) }
            known = ordered
            return ordered
        }
    }

    /// The run of `0..<count` whose key is `object`, keys ascending.
    static func range(of object: Int64, count: Int, _ key: (Int) -> Int64) -> Range<Int> {
        func lowerBound(_ value: Int64) -> Int {
            var (low, high) = (0, count)
            while low < high {
                let middle = (low + high) / 2
                if key(middle) < value { low = middle + 1 } else { high = middle }
            }
            return low
        }
        return lowerBound(object)..<lowerBound(object + 1)
    }
}

extension MapAreaIndex {
    /// Where the sea's areas (the last ones) begin.
    var seaStart: Int {
        var start = count
        while start > 0 && id(start - 1).hasPrefix(MapArea.seaPrefix) { start -= 1 }
        return start
    }
}

extension AddressIndex: AddressBase {
    public var lineCount: Int { lines.count }
    public var areaCount: Int { areas.count }

    public var isInObjectOrder: Bool {
        Self.isInObjectOrder(objectOrder, houses: houses, lineCount: lines.count, lineKey: { Self.objectKey(lines[$0].id) }, areas: areas)
    }

    /// Takes the index as in object order without its scan (a twentieth of a one-shot `poi import x.osc.gz` on the 5
    /// M-node extract when the whole index was read).
    public func knownInObjectOrder() { objectOrder.withLock { if $0 == nil { $0 = true } } }

    /// Where the sea's areas (the last ones) begin.
    var seaStart: Int { areas.seaStart }

    public func houseRange(ofObject key: Int64) -> Range<Int> { Self.range(of: key, count: houses.count, houses.objectKey) }
    public func lineRange(ofObject key: Int64) -> Range<Int> { Self.range(of: key, count: lines.count) { Self.objectKey(lines[$0].id) } }
    func areaRange(ofObject key: Int64) -> Range<Int> { Self.range(of: key, count: seaStart) { Self.objectKey(areas.id($0)) } }

    public func street(ofHouse i: Int) -> Int32 { streetOfAddress[i] }
    public func street(ofLine l: Int) -> Int32 { streetOfLine[l] }

    public func memberCount(ofStreet s: Int32) -> Int { streets[Int(s)].addresses.count + streets[Int(s)].lines.count }

    public func memberCells(of s: Int32) -> [UInt32] {
        let street = streets[Int(s)]
        var cells = street.addresses.map { Self.cell(houses.latitudes[Int($0)], houses.longitudes[Int($0)]) }
        for l in street.lines {
            let points = lines[Int(l)].points
            guard !points.isEmpty else { continue }
            let middle = points[points.count / 2]
            cells.append(Self.cell(middle.latitude, middle.longitude))
        }
        return cells
    }

    public func streets(named names: Set<String>) -> [String: [Int32]] {
        var found: [String: [Int32]] = [:]
        for name in names { if let streets = aliases[name] { found[name] = streets } }
        return found
    }

    /// The normalized name and the cell (`cell`) of each house and line, as the build files them into streets: what
    /// `JoinFinder` is asked about the outputs of a change file.
    static func joinKeys(houses: some Sequence<AddressPoint>, lines: [StreetLine]) -> [(name: String, cell: UInt32)] {
        var keys: [(name: String, cell: UInt32)] = []
        for house in houses {
            guard let name = (house.street ?? house.place).map(TextNormalizer.normalize), !name.isEmpty else { continue }
            keys.append((name, cell(house.latitude, house.longitude)))
        }
        for line in lines where !line.points.isEmpty {
            guard let name = line.names.lazy.map(TextNormalizer.normalize).first(where: { !$0.isEmpty }) else { continue }
            let middle = line.points[line.points.count / 2]
            keys.append((name, cell(middle.latitude, middle.longitude)))
        }
        return keys
    }

    /// Finds the streets of a base that a new member of a name at a cell would join: those with a member of that
    /// name in the cell or a neighbouring one. Any street with a house or line in those cells and the name among its
    /// names is taken — more than the join needs at worst, which only costs the layer their size. The streets of
    /// every name asked about are looked up at once (`AddressBase.streets(named:)`: one pass over an outline's
    /// names), and each street's cells are bounded and kept once per finder.
    struct JoinFinder<Base: AddressBase> {
        let base: Base
        private let aliases: [String: [Int32]]
        private var extents: [Int32: (rows: ClosedRange<Int>, columns: ClosedRange<Int>)] = [:]
        private var cells: [Int32: Set<UInt32>] = [:]

        /// - Parameter names: every name `streets(named:at:)` will be asked about.
        init(_ base: Base, names: Set<String>) { (self.base, aliases) = (base, base.streets(named: names)) }

        static func rowColumn(_ cell: UInt32) -> (row: Int, column: Int) { (Int(cell >> 12), Int(cell & 0xFFF)) }

        mutating func streets(named name: String, at cell: UInt32) -> [Int32] {
            guard let candidates = aliases[name] else { return [] }
            let (row, column) = Self.rowColumn(cell)
            return candidates.filter { s in
                let extent = self.extent(s)
                guard extent.rows.contains(row) || extent.rows.contains(row - 1) || extent.rows.contains(row + 1),
                    extent.columns.contains(column) || extent.columns.contains(column - 1) || extent.columns.contains(column + 1)
                else { return false }
                let known = self.cells(s)
                for r in row - 1...row + 1 where r >= 0 && r <= 0xFFF {
                    for c in column - 1...column + 1 where c >= 0 && c <= 0xFFF && known.contains(UInt32(r) << 12 | UInt32(c)) { return true }
                }
                return false
            }
        }

        private mutating func cells(_ s: Int32) -> Set<UInt32> {
            if let known = cells[s] { return known }
            let found = Set(base.memberCells(of: s))
            cells[s] = found
            return found
        }

        private mutating func extent(_ s: Int32) -> (rows: ClosedRange<Int>, columns: ClosedRange<Int>) {
            if let known = extents[s] { return known }
            var (r0, r1, c0, c1) = (Int.max, Int.min, Int.max, Int.min)
            for cell in base.memberCells(of: s) {
                let (r, c) = Self.rowColumn(cell)
                (r0, r1, c0, c1) = (min(r0, r), max(r1, r), min(c0, c), max(c1, c))
            }
            let extent = r0 <= r1 ? (r0...r1, c0...c1) : (0...0, -10...(-10))
            extents[s] = extent
            return extent
        }
    }
}
