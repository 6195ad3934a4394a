import GeoCore
import Records
import SnapshotFile
import Synchronization
import TextIndex

/// What OpenStreetMap change files made since the base address index was built (docs/ARCHITECTURE.md, "OpenStreetMap
/// that stays current"): the objects they changed, what those objects make now, and the base's streets taken whole
/// into the layer. A change file costs what it changes: the layer is indexed on its own, and the base stays mapped
/// from its snapshot, with the layer's objects and streets hidden in it (`AddressLayer`).
public struct AddressChanges: Sendable, Equatable {
    /// The store's address generation the base index was built for, and the one these changes bring it to.
    public let baseGeneration: String
    public internal(set) var generation: String
    /// The objects changed since the base ("osm-w12"): their houses, lines and areas in the base are hidden.
    public internal(set) var objects: Set<String> = []
    /// What those objects make now, each list in object order (`OSMObjectKey`).
    public internal(set) var houses: [AddressPoint] = []
    public internal(set) var lines: [StreetLine] = []
    public internal(set) var areas: [MapArea] = []
    /// The sea as the last file that reached a coastline made it (nil: the base's stands).
    public internal(set) var sea: [MapArea]?
    /// The base's streets taken whole into the layer, ascending.
    public internal(set) var streets: [Int32] = []

    public init(baseGeneration: String) { (self.baseGeneration, generation) = (baseGeneration, baseGeneration) }

    public var isEmpty: Bool { objects.isEmpty && sea == nil }

    /// Whether `later` is these changes with more laid over them: the same base, and every object and taken street of
    /// these among its own (what `add` makes of them).
    func isExtended(by later: AddressChanges) -> Bool {
        baseGeneration == later.baseGeneration && objects.isSubset(of: later.objects) && (sea == nil || later.sea != nil)
            && Set(streets).isSubset(of: later.streets)
    }

    /// Lays one change file over the changes so far.
    ///
    /// - Parameters:
    ///   - changed: every object the file converted again ("osm-n1", "osm-w2", …), whatever it makes now;
    ///   - made: what they make now (houses, lines, areas);
    ///   - sea: the sea made again, when the file reached a coastline;
    ///   - generation: the store's address generation after the file;
    ///   - base: the index the changes lie over.
    public mutating func add(changed: Set<String>, made: AddressData, sea: [MapArea]?, generation: String, over base: AddressIndex) {
        let made = made.asStored
        let fresh = changed.subtracting(objects)
        func kept<T>(_ items: [T], _ id: (T) -> String) -> [T] { items.filter { !changed.contains(OSMObjectKey.object(of: id($0))) } }
        houses = OSMObjectKey.merged(kept(houses, \.id), OSMObjectKey.inOrder(Array(made.addresses), id: \.id), id: \.id)
        lines = OSMObjectKey.merged(kept(lines, \.id), OSMObjectKey.inOrder(made.streets, id: \.id), id: \.id)
        areas = OSMObjectKey.merged(kept(areas, \.id), OSMObjectKey.inOrder(Array(made.areas), id: \.id), id: \.id)
        if let sea { self.sea = sea }
        objects.formUnion(changed)
        self.generation = generation
        // The streets the base had the objects' old houses and lines on, and those a new house or line joins.
        var taken = Set(streets)
        for object in fresh {
            guard let key = OSMObjectKey.order(of: object).map(OSMObjectKey.packed) else { continue }
            for i in base.houseRange(ofObject: key) where base.streetOfAddress[i] >= 0 { taken.insert(base.streetOfAddress[i]) }
            for i in base.lineRange(ofObject: key) where base.streetOfLine[i] >= 0 { taken.insert(base.streetOfLine[i]) }
        }
        var joining = AddressIndex.JoinFinder(base)
        for house in made.addresses {
            guard let name = (house.street ?? house.place).map(TextNormalizer.normalize), !name.isEmpty else { continue }
            taken.formUnion(joining.streets(named: name, at: AddressIndex.cell(house.latitude, house.longitude)))
        }
        for line in made.streets where !line.points.isEmpty {
            guard let name = line.names.lazy.map(TextNormalizer.normalize).first(where: { !$0.isEmpty }) else { continue }
            let middle = line.points[line.points.count / 2]
            taken.formUnion(joining.streets(named: name, at: AddressIndex.cell(middle.latitude, middle.longitude)))
        }
        streets = taken.sorted()
    }
}

/// A base address index with the changes of OpenStreetMap change files laid over it (`AddressChanges`).
///
/// Streets are clusters of same-named members in neighbouring cells (`AddressIndex`), so a change to one house can
/// change its street's name, city, postcode, anchor or extent, or join two streets. The layer therefore takes whole
/// streets: every base street that had an old house or line of a changed object, or that a new house or line of the
/// same name lands next to, is hidden in the base, and its other members are indexed in the layer beside what the
/// changed objects make now. The layer's streets are then the streets a fresh build of the whole would make there —
/// its members in the same order — and the base's other streets are untouched by the change; so a query answered
/// from both equals the fresh build's answer (tested against one, `AddressLayerOracle`).
public final class AddressLayer: Sendable {
    public let base: AddressIndex
    public let changes: AddressChanges
    /// The changed objects' houses and lines, and the other members of the streets taken from the base.
    public let index: AddressIndex
    /// The changed objects' areas, and the new sea.
    let areas: MapAreaIndex
    let hiddenHouses: Set<Int32>
    let hiddenLines: Set<Int32>
    let hiddenStreets: Set<Int32>
    let hiddenAreas: Set<Int32>
    /// The changed objects as `OSMObjectKey.packed`, and the members of the taken streets the layer indexes in their
    /// objects' stead (base houses and lines whose objects did not change), ascending: what the next layer carries
    /// over (`init(base:changes:previous:)`).
    let changedObjects: Set<Int64>
    let takenHouses: [Int32]
    let takenLines: [Int32]
    /// A number no other layer of this process has: what is derived from the addresses (the `base` tiles) is the same
    /// while it is the same.
    public let serial: UInt64
    private static let serials = Atomic<UInt64>(1 << 40)

    /// The base alone.
    public init(base: AddressIndex, generation: String = "") {
        (self.base, changes, index, areas) = (base, AddressChanges(baseGeneration: generation), .empty, .empty)
        (hiddenHouses, hiddenLines, hiddenStreets, hiddenAreas) = ([], [], [], [])
        (changedObjects, takenHouses, takenLines) = ([], [], [])
        serial = base.serial
    }

    /// The base with the changes over it; nil when the base's houses, lines or areas are not in object order (a
    /// database written before change files were kept so), where the objects' outputs cannot be found by key.
    ///
    /// - Parameter previous: a layer over the same base of changes these extend (the layer before the last change
    ///   file, `AddressChanges.add`): its hidden houses, lines and areas and its members taken from the base are
    ///   carried over, and only the objects and streets added since are looked up in the base — what made each file
    ///   cost more than the one before (RESULTS.md, "An address layer that takes each file on top of the last").
    ///   The result is the layer built from nothing (`AddressLayerOracle` checks both); a `previous` over another
    ///   base, or with changes these do not extend, is not used.
    public init?(base: AddressIndex, changes: AddressChanges, previous: AddressLayer? = nil) {
        guard changes.isEmpty || base.isInObjectOrder else { return nil }
        let previous = previous.flatMap { $0.base === base && $0.changes.isExtended(by: changes) ? $0 : nil }
        var changed = previous?.changedObjects ?? []
        var houses = previous?.hiddenHouses ?? []
        var lines = previous?.hiddenLines ?? []
        var areas = previous?.hiddenAreas ?? []
        // The objects changed since `previous`, and the base's houses and lines they hide that it did not.
        var newlyHidden = (houses: Set<Int32>(), lines: Set<Int32>())
        for object in previous.map({ changes.objects.subtracting($0.changes.objects) }) ?? changes.objects {
            guard let key = OSMObjectKey.order(of: object).map(OSMObjectKey.packed), changed.insert(key).inserted else { continue }
            // Some may be hidden already, as members of a street `previous` took: no longer taken, as their object's.
            for i in base.houseRange(ofObject: key).lazy.map(Int32.init) {
                houses.insert(i)
                newlyHidden.houses.insert(i)
            }
            for l in base.lineRange(ofObject: key).lazy.map(Int32.init) {
                lines.insert(l)
                newlyHidden.lines.insert(l)
            }
            for i in base.areaRange(ofObject: key) { areas.insert(Int32(i)) }
        }
        if changes.sea != nil && previous?.changes.sea == nil { for i in base.seaStart..<base.areas.count { areas.insert(Int32(i)) } }
        // The taken streets' other members, in base order (object order), then merged with the changes' own: those
        // `previous` took but for the ones an object changed since has hidden, and the new streets' members.
        func unchanged(_ id: String) -> Bool {
            guard let key = OSMObjectKey.order(of: id) else { return true }
            return !changed.contains(OSMObjectKey.packed(key))
        }
        var takenHouses = previous?.takenHouses.filter { !newlyHidden.houses.contains($0) } ?? []
        var takenLines = previous?.takenLines.filter { !newlyHidden.lines.contains($0) } ?? []
        let (oldHouses, oldLines) = (takenHouses.count, takenLines.count)
        let takenBefore = Set(previous?.changes.streets ?? [])
        for s in changes.streets where !takenBefore.contains(s) {
            let street = base.streets[Int(s)]
            for i in street.addresses where !houses.contains(i) {
                houses.insert(i)
                if unchanged(base.houses.id(Int(i))) { takenHouses.append(i) }
            }
            for l in street.lines where !lines.contains(l) {
                lines.insert(l)
                if unchanged(base.lines[Int(l)].id) { takenLines.append(l) }
            }
        }
        takenHouses = Self.mergedAscending(takenHouses, sortedFrom: oldHouses)
        takenLines = Self.mergedAscending(takenLines, sortedFrom: oldLines)
        let layerHouses = Self.houseTable(taken: takenHouses, of: base, changed: changes.houses)
        let layerLines = OSMObjectKey.merged(takenLines.map { base.lines[Int($0)] }, changes.lines, id: \.id)
        self.base = base
        self.changes = changes
        index = layerHouses.count == 0 && layerLines.isEmpty ? .empty : AddressIndex(houses: layerHouses, lines: layerLines, areas: AreaList())
        self.areas = MapAreaIndex(AreaList(changes.areas + (changes.sea ?? [])))
        (hiddenHouses, hiddenLines, hiddenStreets, hiddenAreas) = (houses, lines, Set(changes.streets), areas)
        (changedObjects, self.takenHouses, self.takenLines) = (changed, takenHouses, takenLines)
        serial = Self.serials.add(1, ordering: .relaxed).newValue
    }

    /// The layer's houses: the base's `taken` (ascending) and the `changed` objects' houses (in object order), merged
    /// in object order as `OSMObjectKey.merged` merges them — the base's rows copied as columns, not made records.
    private static func houseTable(taken: [Int32], of base: AddressIndex, changed: [AddressPoint]) -> HouseTable {
        let takenKeys = taken.map { base.houses.objectOrder(Int($0)) }
        let changedKeys = changed.map { OSMObjectKey.order(of: $0.id) }
        // Houses without an OpenStreetMap id (none in a base that is in object order) are ordered as `merged` orders
        // them, through records.
        guard !takenKeys.contains(where: { $0 == nil }) && !changedKeys.contains(where: { $0 == nil }) else {
            return HouseTable(OSMObjectKey.merged(taken.map { base.house(Int($0)) }, changed, id: \.id))
        }
        var rows: [HouseTable.Row] = []
        rows.reserveCapacity(taken.count + changed.count)
        OSMObjectKey.merge(
            taken.map { .row($0) }[...],
            takenKeys[...],
            changed.indices.map { .record(Int32($0)) }[...],
            changedKeys[...],
            into: &rows
        )
        return HouseTable(rows, of: base.houses, records: changed)
    }

    /// `items` with its tail from `sortedFrom` (in any order) merged into its head (ascending): ascending.
    private static func mergedAscending(_ items: [Int32], sortedFrom split: Int) -> [Int32] {
        guard split < items.count else { return items }
        let tail = items[split...].sorted()
        var merged: [Int32] = []
        merged.reserveCapacity(items.count)
        var (i, j) = (0, 0)
        while i < split || j < tail.count {
            if j == tail.count || (i < split && items[i] < tail[j]) {
                merged.append(items[i])
                i += 1
            } else {
                merged.append(tail[j])
                j += 1
            }
        }
        return merged
    }

    /// Every address the base and the changes make together, as the store holds them after the change files: the
    /// base's houses, lines and areas but those of the changed objects, with what those objects make now in their
    /// places (object order), and the sea last — the new one, when a file made it again. What the whole index is
    /// built again from on a thread of its own while files keep coming (`AddressRebuild`), without reading the store
    /// (`AddressLayerOracle` checks it against the store's addresses).
    public var whole: AddressData {
        let objects = changedObjects
        var houses = HouseList()
        Self.splice(
            base.houseCount,
            base.house,
            base.houseRange(ofObject:),
            changed: objects,
            added: changes.houses,
            id: \.id,
            into: { houses.append($0) }
        )
        var lines: [StreetLine] = []
        lines.reserveCapacity(base.lines.count + changes.lines.count)
        let baseLines = base.lines
        Self.splice(
            baseLines.count,
            { baseLines[$0] },
            base.lineRange(ofObject:),
            changed: objects,
            added: changes.lines,
            id: \.id,
            into: { lines.append($0) }
        )
        var areas = AreaList()
        let seaStart = base.seaStart
        Self.splice(
            seaStart,
            base.areas.area,
            base.areaRange(ofObject:),
            changed: objects,
            added: changes.areas,
            id: \.id,
            into: { areas.append($0) }
        )
        if let sea = changes.sea { areas.append(contentsOf: sea) } else { for i in seaStart..<base.areas.count { areas.append(base.areas.area(i)) } }
        return AddressData(addresses: houses, streets: lines, areas: areas)
    }

    /// Hands `emit` the base's items `0..<count` but the runs of the `changed` objects (`range`), with the `added`
    /// items (in object order) each where its object's run starts, or would: the items in object order.
    private static func splice<T>(
        _ count: Int,
        _ item: (Int) -> T,
        _ range: (Int64) -> Range<Int>,
        changed: Set<Int64>,
        added: [T],
        id: (T) -> String,
        into emit: (T) -> Void
    ) {
        let cut = changed.lazy.map(range).filter { !$0.isEmpty }.sorted { $0.lowerBound < $1.lowerBound }
        var (i, a, c) = (0, 0, 0)
        // Where the next added item goes: the start of its object's run in the base (memoized per object).
        var slot: (key: Int64, at: Int)?
        func position(_ a: Int) -> Int {
            let key = AddressIndex.objectKey(id(added[a]))
            if let slot, slot.key == key { return slot.at }
            let at = range(key).lowerBound
            slot = (key, at)
            return at
        }
        while true {
            while a < added.count && position(a) <= i {
                emit(added[a])
                a += 1
            }
            if c < cut.count && cut[c].lowerBound == i {
                i = cut[c].upperBound
                c += 1
                continue
            }
            guard i < count else { break }
            emit(item(i))
            i += 1
        }
        // Added items sorting after every base item went out at `count`, in the loop's last pass.
    }

    /// Houses, lines and areas the layer indexes: what building it again costs, beside the base's.
    public var size: Int { index.houseCount + index.lines.count + areas.count }

    /// The largest layer kept over `base` before the whole index is built again: an eighth of the base's houses, lines
    /// and areas, and at least 50 000. Each change file builds the layer's index again, so its cost grows with the
    /// layer; past this, a build of the whole (linear in the base) is due anyway.
    public static func limit(over base: AddressIndex) -> Int { max(50_000, (base.houseCount + base.lines.count + base.areas.count) / 8) }

    /// `AddressIndex.search` over the base and the layer, best first.
    func search(_ query: GeocodeQuery, placeNear: (String, Coordinate2) -> Bool?, hidden: Hidden) -> [AddressMatch] {
        let typos = AddressIndex.TypoVariants()
        return base.search(
            query,
            placeNear: placeNear,
            hidden: { hiddenHouses.contains($0) || hidden.base($0) },
            hiddenStreet: hiddenStreets.contains,
            elsewhere: inLayer,
            typos: typos
        ) + index.search(query, placeNear: placeNear, hidden: hidden.layer, elsewhere: inBase, typos: typos)
    }

    /// `AddressIndex.completions` of the base and of the layer, each with its rank.
    func completions(_ text: String, near: Coordinate?, limit: Int, hidden: Hidden) -> [(match: AddressMatch, rank: CompletionRank)] {
        base.completions(
            text,
            near: near,
            limit: limit,
            hidden: { hiddenHouses.contains($0) || hidden.base($0) },
            hiddenStreet: hiddenStreets.contains,
            elsewhere: inLayer
        ) + index.completions(text, near: near, limit: limit, hidden: hidden.layer, elsewhere: inBase)
    }

    /// Whether the layer, or the base without its hidden streets, has a street of a normalized name.
    private func inLayer(_ name: String) -> Bool { index.aliases[name] != nil }
    private func inBase(_ name: String) -> Bool { base.visibleStreets(named: name, hidden: hiddenStreets.contains) != nil }

    /// `AddressIndex.reverse` of the base and of the layer (either may be nil).
    func reverse(_ point: Coordinate2, hidden: Hidden) -> [(match: AddressMatch, distance: Double)] {
        [
            base.reverse(point, hidden: { hiddenHouses.contains($0) || hidden.base($0) }, hiddenLine: hiddenLines.contains),
            index.reverse(point, hidden: hidden.layer),
        ]
        .compactMap { $0 }
    }

    /// Street lines in a box (`AddressIndex.lines(in:limit:)`), in object order.
    public func lines(in box: BoundingBox, limit: Int) -> (lines: [StreetLine], truncated: Bool) {
        guard !changes.isEmpty else { return base.lines(in: box, limit: limit) }
        let (a, b) = (base.lines(in: box, limit: limit, hidden: hiddenLines.contains), index.lines(in: box, limit: limit))
        let merged = OSMObjectKey.merged(a.lines, b.lines, id: \.id)
        return (Array(merged.prefix(limit)), a.truncated || b.truncated || merged.count > limit)
    }

    /// Water or building areas in a box (`MapAreaIndex.areas(of:in:limit:)`): the objects' in object order, the sea
    /// last.
    public func areas(of kind: MapArea.Kind, in box: BoundingBox, limit: Int) -> (areas: [MapArea], truncated: Bool) {
        guard !changes.isEmpty else { return base.areas.areas(of: kind, in: box, limit: limit) }
        let (a, b) = (
            base.areas.areas(of: kind, in: box, limit: limit, hidden: { hiddenAreas.contains(Int32($0)) }),
            areas.areas(of: kind, in: box, limit: limit)
        )
        func isSea(_ area: MapArea) -> Bool { area.id.hasPrefix(MapArea.seaPrefix) }
        let merged =
            OSMObjectKey.merged(a.areas.filter { !isSea($0) }, b.areas.filter { !isSea($0) }, id: \.id) + a.areas.filter(isSea)
            + b.areas.filter(isSea)
        return (Array(merged.prefix(limit)), a.truncated || b.truncated || merged.count > limit)
    }

    /// The box around every area (nil: none).
    public var areaBounds: BoundingBox? {
        guard !changes.isEmpty else { return base.areas.bounds }
        let boxes = [base.areas.bounds, areas.bounds].compactMap { $0 }
        guard var box = boxes.first else { return nil }
        for other in boxes.dropFirst() {
            box = BoundingBox(
                uncheckedWest: min(box.west, other.west),
                south: min(box.south, other.south),
                east: max(box.east, other.east),
                north: max(box.north, other.north)
            )
        }
        return box
    }

    /// Houses the caller hides besides the layer's: the records' own (`AddressBook`), in the base and in the layer.
    struct Hidden {
        var base: (Int32) -> Bool = { _ in false }
        var layer: (Int32) -> Bool = { _ in false }
    }
}

extension AddressIndex {
    /// Whether houses, lines and areas (the sea aside, which is last) are in object order (`OSMObjectKey`), as imports
    /// and change files store them: then an object's outputs are found by binary search. Checked once per index.
    var isInObjectOrder: Bool {
        objectOrder.withLock { known in
            if let known { return known }
            let ordered =
                Self.isAscending(houses.count) { houseKey($0) } && Self.isAscending(lines.count) { Self.objectKey(lines[$0].id) }
                && Self.isAscending(seaStart) { Self.objectKey(areas.id($0)) }
            known = ordered
            return ordered
        }
    }

    /// Where the sea's areas (the last ones) begin.
    var seaStart: Int {
        var start = areas.count
        while start > 0 && areas.id(start - 1).hasPrefix(MapArea.seaPrefix) { start -= 1 }
        return start
    }

    /// An id's object as `OSMObjectKey.packed`; -1 for an id that is not an OpenStreetMap object's (those sort first).
    static func objectKey(_ id: String) -> Int64 { OSMObjectKey.order(of: id).map(OSMObjectKey.packed) ?? -1 }

    /// House `i`'s `objectKey`, read from its id's bytes (a binary search over the houses makes no strings).
    func houseKey(_ i: Int) -> Int64 { houses.objectOrder(i).map(OSMObjectKey.packed) ?? -1 }

    static func isAscending(_ count: Int, _ key: (Int) -> Int64) -> Bool {
        var previous = Int64.min
        for i in 0..<count {
            let k = key(i)
            if k < previous { return false }
            previous = k
        }
        return true
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

    func houseRange(ofObject key: Int64) -> Range<Int> { Self.range(of: key, count: houses.count) { houseKey($0) } }
    func lineRange(ofObject key: Int64) -> Range<Int> { Self.range(of: key, count: lines.count) { Self.objectKey(lines[$0].id) } }
    func areaRange(ofObject key: Int64) -> Range<Int> { Self.range(of: key, count: seaStart) { Self.objectKey(areas.id($0)) } }

    /// Finds the base streets a new member of a name at a cell would join: those with a member of that name in the
    /// cell or a neighbouring one. Any street with a house or line in those cells and the name among its names is
    /// taken — more than the join needs at worst, which only costs the layer their size. Each street's cells are
    /// bounded once per finder.
    struct JoinFinder {
        let index: AddressIndex
        private var extents: [Int32: (rows: ClosedRange<Int>, columns: ClosedRange<Int>)] = [:]

        init(_ index: AddressIndex) { self.index = index }

        static func rowColumn(_ cell: UInt32) -> (row: Int, column: Int) { (Int(cell >> 12), Int(cell & 0xFFF)) }

        mutating func streets(named name: String, at cell: UInt32) -> [Int32] {
            guard let candidates = index.aliases[name] else { return [] }
            let (row, column) = Self.rowColumn(cell)
            return candidates.filter { s in
                let extent = self.extent(s)
                guard extent.rows.contains(row) || extent.rows.contains(row - 1) || extent.rows.contains(row + 1),
                    extent.columns.contains(column) || extent.columns.contains(column - 1) || extent.columns.contains(column + 1)
                else { return false }
                return index.memberCells(of: s).contains { other in
                    let (r, c) = Self.rowColumn(other)
                    return abs(r - row) <= 1 && abs(c - column) <= 1
                }
            }
        }

        private mutating func extent(_ s: Int32) -> (rows: ClosedRange<Int>, columns: ClosedRange<Int>) {
            if let known = extents[s] { return known }
            var (r0, r1, c0, c1) = (Int.max, Int.min, Int.max, Int.min)
            for cell in index.memberCells(of: s) {
                let (r, c) = Self.rowColumn(cell)
                (r0, r1, c0, c1) = (min(r0, r), max(r1, r), min(c0, c), max(c1, c))
            }
            let extent = r0 <= r1 ? (r0...r1, c0...c1) : (0...0, -10...(-10))
            extents[s] = extent
            return extent
        }
    }

    /// The cells (`cell`) of street `s`'s houses and of its lines' middle vertices, as the build files them.
    func memberCells(of s: Int32) -> [UInt32] {
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
}

extension AddressChanges {
    /// "ADC" and a version: 1.
    static let fileFormat: UInt32 = 0x4144_4301

    /// Writes the changes to `path` (atomically), beside the base index's snapshot: the next start maps the base and
    /// indexes the layer again from these, instead of building the whole index (`read(_:)`).
    public func write(to path: String) throws(SnapshotError) {
        let file = try SnapshotWriter(path: path, formatVersion: Self.fileFormat)
        try file.write(baseGeneration)
        try file.write(generation)
        try file.write(objects.sorted())
        let houseBlocks = HouseList(houses).blocks
        try file.write(houseBlocks.map { UInt64($0.count) })
        try file.write(nested: houseBlocks.map(\.bytes))
        try file.write(StreetBlock.encode(lines))
        try file.write(nested: AreaList(areas).blocks())
        try file.write(sea == nil ? 0 : 1)
        try file.write(nested: AreaList(sea ?? []).blocks())
        try file.write(streets)
        try file.commit()
    }

    /// The changes written at `path`.
    /// - Throws: `SnapshotError` when the file is missing, of another format, or damaged.
    public static func read(_ path: String) throws(SnapshotError) -> AddressChanges {
        let file = try SnapshotReader(path: path, formatVersion: fileFormat)
        func corrupt(_ error: AddressBlock.CorruptBlock) -> SnapshotError { .corrupt(path: path, reason: error.description) }
        var changes = AddressChanges(baseGeneration: try file.readString())
        changes.generation = try file.readString()
        changes.objects = Set(try file.readStrings())
        let counts: [UInt64] = try file.read()
        let houseBytes: [[UInt8]] = try file.readNested()
        let lineBytes: [UInt8] = try file.read()
        let areaBlocks: [[UInt8]] = try file.readNested()
        let hasSea = try file.readInt() != 0
        let seaBlocks: [[UInt8]] = try file.readNested()
        changes.streets = try file.read()
        guard counts.count == houseBytes.count else { throw .corrupt(path: path, reason: "house blocks and their counts differ") }
        do throws(AddressBlock.CorruptBlock) {
            changes.houses = Array(try HouseList(checking: zip(houseBytes, counts).map { HouseList.Block(bytes: $0, count: Int($1)) }))
            let lines = lineBytes.withUnsafeBytes { bytes -> Result<[StreetLine], AddressBlock.CorruptBlock> in
                var lines: [StreetLine] = []
                do throws(AddressBlock.CorruptBlock) { try StreetBlock.decode(bytes, into: &lines) } catch { return .failure(error) }
                return .success(lines)
            }
            changes.lines = try lines.get()
            changes.areas = Array(try AreaList(checking: areaBlocks))
            changes.sea = hasSea ? Array(try AreaList(checking: seaBlocks)) : nil
        } catch {
            throw corrupt(error)
        }
        return changes
    }
}
