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
    public mutating func add(changed: Set<String>, made: AddressData, sea: [MapArea]?, generation: String, over base: some AddressBase) {
        let made = made.asStored
        let fresh = changed.subtracting(objects)
        houses = OSMObjectKey.replacing(houses, changed: changed, with: OSMObjectKey.inOrder(Array(made.addresses), id: \.id), id: \.id)
        lines = OSMObjectKey.replacing(lines, changed: changed, with: OSMObjectKey.inOrder(made.streets, id: \.id), id: \.id)
        areas = OSMObjectKey.replacing(areas, changed: changed, with: OSMObjectKey.inOrder(Array(made.areas), id: \.id), id: \.id)
        if let sea { self.sea = sea }
        objects.formUnion(changed)
        self.generation = generation
        // The streets the base had the objects' old houses and lines on, and those a new house or line joins.
        var taken = Set(streets)
        for object in fresh {
            guard let key = OSMObjectKey.order(of: object).map(OSMObjectKey.packed) else { continue }
            for i in base.houseRange(ofObject: key) where base.street(ofHouse: i) >= 0 { taken.insert(base.street(ofHouse: i)) }
            for l in base.lineRange(ofObject: key) where base.street(ofLine: l) >= 0 { taken.insert(base.street(ofLine: l)) }
        }
        let joins = AddressIndex.joinKeys(houses: made.addresses, lines: made.streets)
        var joining = AddressIndex.JoinFinder(base, names: Set(joins.map(\.name)))
        for join in joins { taken.formUnion(joining.streets(named: join.name, at: join.cell)) }
        streets = taken.sorted()
    }

    /// Whether these changes can lie over `base`: the base's outputs are found by object only when it is in object
    /// order (`AddressLayer(base:changes:)` is nil otherwise).
    public func canLie(over base: some AddressBase) -> Bool { isEmpty || base.isInObjectOrder }

    /// At least the size of the one-level layer these changes make over `base` (`AddressLayer.size`): what the changed
    /// objects make now, the new sea, and every member of the base streets they take — a member of a changed object
    /// counted twice. For a writer that keeps the changes without laying them (`poi import x.osc.gz`), to see when
    /// the whole index is due (`AddressLayer.limit`) without building the layer.
    public func layerSizeBound(over base: some AddressBase) -> Int {
        streets.reduce(houses.count + lines.count + areas.count + (sea?.count ?? 0)) { $0 + base.memberCount(ofStreet: $1) }
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
///
/// Each file builds the layer's index again from every change since the base, so its cost grows with the layer. A
/// layer may therefore lie in two levels (`init(base:changes:over:since:)`): a layer of the files up to some point,
/// kept as it was (`under`), and over it an index of only the objects changed since and the streets they reach, in
/// the base or in the layer under — taken whole from either, by the same rule — with what it takes hidden in both.
/// A file then costs the objects changed since the layer under was made; once those pass `topLimit`, the next file
/// makes one layer of everything again (`adding`).
public final class AddressLayer: Sendable {
    public let base: AddressIndex
    /// Every change since the base (with `under`: its changes and those since).
    public let changes: AddressChanges
    /// The changed objects' houses and lines, and the other members of the streets taken from the base (with `under`:
    /// only the objects changed since it, and the members of the streets they reach, from the base or from it).
    public let index: AddressIndex
    /// The changed objects' areas, and the new sea (with `under`: those changed since it).
    let areas: MapAreaIndex
    /// The houses, lines, streets and areas of the base this layer hides (with `under`: besides those it hides).
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
    /// The layer this one's index lies over, when it lies in two levels, with what this one hides in its index.
    let under: Under?
    /// A number no other layer of this process has: what is derived from the addresses (the `base` tiles) is the same
    /// while it is the same.
    public let serial: UInt64
    private static let serials = Atomic<UInt64>(1 << 40)

    /// The base alone.
    public init(base: AddressIndex, generation: String = "") {
        (self.base, changes, index, areas) = (base, AddressChanges(baseGeneration: generation), .empty, .empty)
        (hiddenHouses, hiddenLines, hiddenStreets, hiddenAreas) = ([], [], [], [])
        (changedObjects, takenHouses, takenLines, under) = ([], [], [], nil)
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
        let previous = previous.flatMap { $0.base === base && $0.under == nil && $0.changes.isExtended(by: changes) ? $0 : nil }
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
        (changedObjects, self.takenHouses, self.takenLines, under) = (changed, takenHouses, takenLines, nil)
        serial = Self.serials.add(1, ordering: .relaxed).newValue
    }

    /// The layer under a layer in two levels, and what the level over it takes from the base and from it.
    struct Under: Sendable {
        /// One level over the same base.
        let layer: AddressLayer
        /// The objects changed since `layer`, and whether a file since made the sea again.
        let since: Since
        /// What the level over it hides in it, takes from it and from the base, and what its objects make now: what
        /// the next file's level carries over.
        let top: Top
    }

    /// What the change files since the layer under a two-level layer changed.
    public struct Since: Sendable {
        public var objects: Set<String> = []
        public var sea = false
        /// How many files.
        public var files = 0

        public init() {}

        public mutating func add(changed: Set<String>, sea: Bool) {
            objects.formUnion(changed)
            self.sea = self.sea || sea
            files += 1
        }
    }

    /// The upper level of a two-level layer as it is made, file by file.
    struct Top: Sendable {
        /// The objects changed since the layer under (`OSMObjectKey.packed`).
        var objects: Set<Int64> = []
        /// What they make now, each list in object order.
        var houses: [AddressPoint] = []
        var lines: [StreetLine] = []
        var areas: [MapArea] = []
        /// Hidden in the base (besides what the layer under hides there), and in the layer under.
        var baseHouses = Set<Int32>()
        var baseLines = Set<Int32>()
        var baseAreas = Set<Int32>()
        var baseStreets = Set<Int32>()
        var underHouses = Set<Int32>()
        var underLines = Set<Int32>()
        var underAreas = Set<Int32>()
        var underStreets = Set<Int32>()
        /// The taken streets' members whose objects did not change, in the base and in the layer under (any order).
        var takenBaseHouses: [Int32] = []
        var takenBaseLines: [Int32] = []
        var takenUnderHouses: [Int32] = []
        var takenUnderLines: [Int32] = []
        var seaHidden = false
    }

    /// The base with `changes` over it in two levels: `under` (one level over the same base, of changes these extend)
    /// kept as it is, and over it an index of what the objects changed since it make now, with every street of the
    /// base or of `under` that they were on or now join taken whole (as `init(base:changes:previous:)` takes the
    /// base's). `previous`, the two-level layer of the files before this one over the same `under`, is carried over:
    /// only this file's objects are looked up in the base and in `under`, so a file costs its objects and the upper
    /// level's index, not the objects of every file since `under`. Nil when `under` is not one level over this base
    /// whose changes these extend, or the base is not in object order.
    init?(
        base: AddressIndex,
        changes: AddressChanges,
        over under: AddressLayer,
        previous: AddressLayer?,
        file changed: Set<String>,
        made: AddressData,
        sea: Bool
    ) {
        guard under.under == nil, under.base === base, under.changes.isExtended(by: changes), changes.isEmpty || base.isInObjectOrder else {
            return nil
        }
        let carried = previous?.under.flatMap { $0.layer === under && previous?.base === base ? $0 : nil }
        var since = carried?.since ?? Since()
        since.add(changed: changed, sea: sea)
        var top = carried?.top ?? Top()
        let low = under.index
        // What the objects make now: the file's in place of what those objects made before.
        let made = made.asStored
        func kept<T>(_ items: [T], _ id: (T) -> String) -> [T] { items.filter { !changed.contains(OSMObjectKey.object(of: id($0))) } }
        let (fileHouses, fileLines) = (OSMObjectKey.inOrder(Array(made.addresses), id: \.id), OSMObjectKey.inOrder(made.streets, id: \.id))
        top.houses = OSMObjectKey.merged(kept(top.houses, \.id), fileHouses, id: \.id)
        top.lines = OSMObjectKey.merged(kept(top.lines, \.id), fileLines, id: \.id)
        top.areas = OSMObjectKey.merged(kept(top.areas, \.id), OSMObjectKey.inOrder(Array(made.areas), id: \.id), id: \.id)
        // The objects changed for the first time since `under`: their houses, lines and areas in the base (those
        // `under` does not hide) and in `under` are hidden, and the streets they were on taken. Some may have been
        // taken already, as members of a street: no longer taken, as their object's.
        var (newBase, newUnder) = (Set<Int32>(), Set<Int32>())
        var (dropBase, dropBaseLines, dropUnder, dropUnderLines) = (Set<Int32>(), Set<Int32>(), Set<Int32>(), Set<Int32>())
        let underAreaCount = under.changes.areas.count  // its areas in object order; the sea after them
        for object in changed {
            guard let key = OSMObjectKey.order(of: object).map(OSMObjectKey.packed), top.objects.insert(key).inserted else { continue }
            for i in base.houseRange(ofObject: key).lazy.map(Int32.init) where !under.hiddenHouses.contains(i) {
                if !top.baseHouses.insert(i).inserted { dropBase.insert(i) }
                let s = base.streetOfAddress[Int(i)]
                if s >= 0 && top.baseStreets.insert(s).inserted { newBase.insert(s) }
            }
            for l in base.lineRange(ofObject: key).lazy.map(Int32.init) where !under.hiddenLines.contains(l) {
                if !top.baseLines.insert(l).inserted { dropBaseLines.insert(l) }
                let s = base.streetOfLine[Int(l)]
                if s >= 0 && top.baseStreets.insert(s).inserted { newBase.insert(s) }
            }
            for a in base.areaRange(ofObject: key).lazy.map(Int32.init) where !under.hiddenAreas.contains(a) { top.baseAreas.insert(a) }
            for i in low.houseRange(ofObject: key).lazy.map(Int32.init) {
                if !top.underHouses.insert(i).inserted { dropUnder.insert(i) }
                let s = low.streetOfAddress[Int(i)]
                if s >= 0 && top.underStreets.insert(s).inserted { newUnder.insert(s) }
            }
            for l in low.lineRange(ofObject: key).lazy.map(Int32.init) {
                if !top.underLines.insert(l).inserted { dropUnderLines.insert(l) }
                let s = low.streetOfLine[Int(l)]
                if s >= 0 && top.underStreets.insert(s).inserted { newUnder.insert(s) }
            }
            let areas = under.areas
            for a in AddressIndex.range(of: key, count: underAreaCount, { AddressIndex.objectKey(areas.id($0)) }) { top.underAreas.insert(Int32(a)) }
        }
        if since.sea && !top.seaHidden {
            top.seaHidden = true
            for i in base.seaStart..<base.areas.count { top.baseAreas.insert(Int32(i)) }
            for i in underAreaCount..<under.areas.count { top.underAreas.insert(Int32(i)) }
        }
        // The base's streets `changes.add` took since `under` (those it took are in `under`'s index), and the streets
        // of `under` that the file's houses and lines join.
        for s in changes.streets where !under.hiddenStreets.contains(s) && top.baseStreets.insert(s).inserted { newBase.insert(s) }
        let joins = AddressIndex.joinKeys(houses: fileHouses, lines: fileLines)
        var joining = AddressIndex.JoinFinder(low, names: Set(joins.map(\.name)))
        for join in joins {
            for s in joining.streets(named: join.name, at: join.cell) where top.underStreets.insert(s).inserted { newUnder.insert(s) }
        }
        // The newly taken streets' other members: the base's (none of which `under` hides: it takes a street whole) as
        // rows of the base, `under`'s as records.
        let objects = top.objects
        func unchanged(_ key: (type: Int, id: Int64, part: Int)?) -> Bool { key.map { !objects.contains(OSMObjectKey.packed($0)) } ?? true }
        if !dropBase.isEmpty { top.takenBaseHouses.removeAll(where: dropBase.contains) }
        if !dropBaseLines.isEmpty { top.takenBaseLines.removeAll(where: dropBaseLines.contains) }
        if !dropUnder.isEmpty { top.takenUnderHouses.removeAll(where: dropUnder.contains) }
        if !dropUnderLines.isEmpty { top.takenUnderLines.removeAll(where: dropUnderLines.contains) }
        for s in newBase {
            let street = base.streets[Int(s)]
            for i in street.addresses where !under.hiddenHouses.contains(i) && top.baseHouses.insert(i).inserted {
                if unchanged(base.houses.objectOrder(Int(i))) { top.takenBaseHouses.append(i) }
            }
            for l in street.lines where !under.hiddenLines.contains(l) && top.baseLines.insert(l).inserted {
                if unchanged(OSMObjectKey.order(of: base.lines[Int(l)].id)) { top.takenBaseLines.append(l) }
            }
        }
        for s in newUnder {
            let street = low.streets[Int(s)]
            for i in street.addresses where top.underHouses.insert(i).inserted {
                if unchanged(low.houses.objectOrder(Int(i))) { top.takenUnderHouses.append(i) }
            }
            for l in street.lines where top.underLines.insert(l).inserted {
                if unchanged(OSMObjectKey.order(of: low.lines[Int(l)].id)) { top.takenUnderLines.append(l) }
            }
        }
        let records = OSMObjectKey.merged(top.takenUnderHouses.sorted().map { low.house(Int($0)) }, top.houses, id: \.id)
        let layerHouses = Self.houseTable(taken: top.takenBaseHouses.sorted(), of: base, changed: records)
        let layerLines = OSMObjectKey.merged(
            OSMObjectKey.merged(
                top.takenBaseLines.sorted().map { base.lines[Int($0)] },
                top.takenUnderLines.sorted().map { low.lines[Int($0)] },
                id: \.id
            ),
            top.lines,
            id: \.id
        )
        self.base = base
        self.changes = changes
        index = layerHouses.count == 0 && layerLines.isEmpty ? .empty : AddressIndex(houses: layerHouses, lines: layerLines, areas: AreaList())
        areas = MapAreaIndex(AreaList(top.areas + (since.sea ? changes.sea ?? [] : [])))
        (hiddenHouses, hiddenLines, hiddenStreets, hiddenAreas) = (top.baseHouses, top.baseLines, top.baseStreets, top.baseAreas)
        (changedObjects, takenHouses, takenLines) = (under.changedObjects.union(top.objects), [], [])
        self.under = Under(layer: under, since: since, top: top)
        serial = Self.serials.add(1, ordering: .relaxed).newValue
    }

    /// This layer with one more change file laid over it (`AddressChanges.add`): over the same layer under it, when
    /// the objects changed since that one are few (`topLimit`), else as one layer again (taken on top of the one
    /// under, `init(base:changes:previous:)`). Nil when the base is not in object order.
    /// - Parameter topLimit: the level over the layer under past which the next file makes one layer again.
    public func adding(
        changed: Set<String>,
        made: AddressData,
        sea: [MapArea]?,
        generation: String,
        topLimit: (_ under: Int, _ since: Int, _ files: Int) -> Int = AddressLayer.topLimit
    ) -> AddressLayer? {
        var changes = self.changes
        changes.add(changed: changed, made: made, sea: sea, generation: generation, over: base)
        let flat = under?.layer ?? self
        if !flat.changes.isEmpty, under.map({ levelSize < topLimit($0.layer.size, levelSize, $0.since.files) }) ?? true,
            let layer = AddressLayer(
                base: base,
                changes: changes,
                over: flat,
                previous: under == nil ? nil : self,
                file: changed,
                made: made,
                sea: sea != nil
            )
        {
            return layer
        }
        return AddressLayer(base: base, changes: changes, previous: flat)
    }

    /// The level over the layer under past which the next file makes one layer again: √(2 × under × growth), where
    /// growth is the level's size per file. With a layer of L under and g a file, a file then costs the level's build
    /// (g to √(2Lg)) and one in √(2L/g) builds the whole layer (L): about √(2Lg) a file on average, against L when
    /// every file builds the whole layer (RESULTS.md, "A layer in two levels").
    public static func topLimit(under: Int, since: Int, files: Int) -> Int {
        let growth = Double(since) / Double(max(1, files))
        return Int((2 * Double(under) * growth).squareRoot())
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

    /// Houses, lines and areas the layer indexes (in both levels): what building it again as one costs, beside the
    /// base's.
    public var size: Int { levelSize + (under?.layer.size ?? 0) }

    /// Houses, lines and areas this level indexes.
    var levelSize: Int { index.houseCount + index.lines.count + areas.count }

    /// Houses the layer's indexes hold (a house a later one hides is counted too), the base's aside.
    public var layerHouseCount: Int { index.houseCount + (under?.layer.index.houseCount ?? 0) }

    /// Whether the base and the layer hold no house and no line.
    public var isEmpty: Bool { base.isEmpty && index.isEmpty && (under?.layer.index.isEmpty ?? true) }

    /// The largest layer kept over `base` before the whole index is built again: an eighth of the base's houses, lines
    /// and areas, and at least 50 000. Every few change files the layer's lower level is made again from every change
    /// since the base (`adding`), so that cost grows with the layer; past this, a build of the whole (linear in the
    /// base) is due anyway.
    public static func limit(over base: some AddressBase) -> Int { max(50_000, (base.houseCount + base.lineCount + base.areaCount) / 8) }

    /// One of the indexes a query asks — the base, the layer under this one (two levels), this one's — with what the
    /// levels over it hide in it.
    struct Part {
        let index: AddressIndex
        let hidden: (Int32) -> Bool
        let hiddenStreet: (Int32) -> Bool
        let hiddenLine: (Int32) -> Bool
        let areas: MapAreaIndex
        let hiddenArea: (Int) -> Bool
    }

    /// The indexes a query asks, the base first; `caller` hides houses of its own besides (`AddressBook`).
    func parts(_ caller: Hidden) -> [Part] {
        let (base, index) = (self.base, self.index)
        let top = Part(
            index: index,
            hidden: { caller.house(index, $0) },
            hiddenStreet: { _ in false },
            hiddenLine: { _ in false },
            areas: areas,
            hiddenArea: { _ in false }
        )
        guard let under else {
            let bottom = Part(
                index: base,
                hidden: { self.hiddenHouses.contains($0) || caller.house(base, $0) },
                hiddenStreet: hiddenStreets.contains,
                hiddenLine: hiddenLines.contains,
                areas: base.areas,
                hiddenArea: { self.hiddenAreas.contains(Int32($0)) }
            )
            return [bottom, top]
        }
        let low = under.layer
        let bottom = Part(
            index: base,
            hidden: { self.hiddenHouses.contains($0) || low.hiddenHouses.contains($0) || caller.house(base, $0) },
            hiddenStreet: { self.hiddenStreets.contains($0) || low.hiddenStreets.contains($0) },
            hiddenLine: { self.hiddenLines.contains($0) || low.hiddenLines.contains($0) },
            areas: base.areas,
            hiddenArea: { self.hiddenAreas.contains(Int32($0)) || low.hiddenAreas.contains(Int32($0)) }
        )
        let upper = under.top
        let middle = Part(
            index: low.index,
            hidden: { upper.underHouses.contains($0) || caller.house(low.index, $0) },
            hiddenStreet: upper.underStreets.contains,
            hiddenLine: upper.underLines.contains,
            areas: low.areas,
            hiddenArea: { upper.underAreas.contains(Int32($0)) }
        )
        return [bottom, middle, top]
    }

    /// Whether a part other than `p` has a street of a normalized name it does not hide: then `p` looks for no typo
    /// of it, nor for a shorter Chinese suffix, as one index of them all would not.
    private static func elsewhere(_ parts: [Part], but p: Int) -> (String) -> Bool {
        { name in parts.indices.contains { q in q != p && parts[q].index.visibleStreets(named: name, hidden: parts[q].hiddenStreet) != nil } }
    }

    /// `AddressIndex.search` over the base and the layer, best first.
    func search(_ query: GeocodeQuery, placeNear: (String, Coordinate2) -> Bool?, hidden: Hidden) -> [AddressMatch] {
        let typos = AddressIndex.TypoVariants()
        let parts = parts(hidden)
        return parts.indices.flatMap { p in
            parts[p].index.search(
                query,
                placeNear: placeNear,
                hidden: parts[p].hidden,
                hiddenStreet: parts[p].hiddenStreet,
                elsewhere: Self.elsewhere(parts, but: p),
                typos: typos
            )
        }
    }

    /// `AddressIndex.completions` of the base and of the layer, each with its rank.
    func completions(_ text: String, near: Coordinate?, limit: Int, hidden: Hidden) -> [(match: AddressMatch, rank: CompletionRank)] {
        let parts = parts(hidden)
        return parts.indices.flatMap { p in
            parts[p].index.completions(
                text,
                near: near,
                limit: limit,
                hidden: parts[p].hidden,
                hiddenStreet: parts[p].hiddenStreet,
                elsewhere: Self.elsewhere(parts, but: p)
            )
        }
    }

    /// `AddressIndex.reverse` of the base and of the layer (each may have none).
    func reverse(_ point: Coordinate2, hidden: Hidden) -> [(match: AddressMatch, distance: Double)] {
        parts(hidden).compactMap { $0.index.reverse(point, hidden: $0.hidden, hiddenLine: $0.hiddenLine) }
    }

    /// Street lines in a box (`AddressIndex.lines(in:limit:)`), in object order.
    public func lines(in box: BoundingBox, limit: Int) -> (lines: [StreetLine], truncated: Bool) {
        guard !changes.isEmpty else { return base.lines(in: box, limit: limit) }
        var (merged, truncated) = ([StreetLine](), false)
        for part in parts(Hidden()) {
            let found = part.index.lines(in: box, limit: limit, hidden: part.hiddenLine)
            merged = OSMObjectKey.merged(merged, found.lines, id: \.id)
            truncated = truncated || found.truncated
        }
        return (Array(merged.prefix(limit)), truncated || merged.count > limit)
    }

    /// Water or building areas in a box (`MapAreaIndex.areas(of:in:limit:)`): the objects' in object order, the sea
    /// last.
    public func areas(of kind: MapArea.Kind, in box: BoundingBox, limit: Int) -> (areas: [MapArea], truncated: Bool) {
        guard !changes.isEmpty else { return base.areas.areas(of: kind, in: box, limit: limit) }
        func isSea(_ area: MapArea) -> Bool { area.id.hasPrefix(MapArea.seaPrefix) }
        var (merged, sea, truncated) = ([MapArea](), [MapArea](), false)
        for part in parts(Hidden()) {
            let found = part.areas.areas(of: kind, in: box, limit: limit, hidden: part.hiddenArea)
            merged = OSMObjectKey.merged(merged, found.areas.filter { !isSea($0) }, id: \.id)
            sea += found.areas.filter(isSea)
            truncated = truncated || found.truncated
        }
        merged += sea
        return (Array(merged.prefix(limit)), truncated || merged.count > limit)
    }

    /// The box around every area (nil: none).
    public var areaBounds: BoundingBox? {
        guard !changes.isEmpty else { return base.areas.bounds }
        let boxes = [base.areas.bounds, under?.layer.areas.bounds, areas.bounds].compactMap { $0 }
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

    /// A street as a query sees it, for comparing the layer's with a fresh index's (the tests): its name, city,
    /// postcode, anchor, and its members' ids, sorted.
    public struct ShownStreet: Hashable, Comparable, Sendable {
        public var name: String
        public var city: String
        public var postcode: String
        public var anchor: [Double]
        public var houses: [String]
        public var lines: [String]

        public static func < (a: ShownStreet, b: ShownStreet) -> Bool {
            (a.name, a.houses.first ?? "", a.lines.first ?? "") < (b.name, b.houses.first ?? "", b.lines.first ?? "")
        }
    }

    /// Every street no level hides, in every part, sorted: a fresh index of the same addresses has the same
    /// (`AddressIndex.shownStreets`).
    public var shownStreets: [ShownStreet] { parts(Hidden()).flatMap { $0.index.shownStreets(hidden: $0.hiddenStreet) }.sorted() }

    /// Houses the caller hides besides the layer's, by index and position: the records' own (`AddressBook`).
    struct Hidden {
        var house: (AddressIndex, Int32) -> Bool = { _, _ in false }
    }
}

extension AddressIndex {
    /// The streets not `hidden`, sorted (`AddressLayer.shownStreets`).
    public func shownStreets(hidden: (Int32) -> Bool = { _ in false }) -> [AddressLayer.ShownStreet] {
        streets.indices.filter { !hidden(Int32($0)) }.map { s in
            let street = streets[s]
            return AddressLayer.ShownStreet(
                name: street.name,
                city: street.city ?? "",
                postcode: street.postcode ?? "",
                anchor: [street.anchor.latitude, street.anchor.longitude],
                houses: street.addresses.map { houses.id(Int($0)) }.sorted(),
                lines: street.lines.map { lines[Int($0)].id }.sorted()
            )
        }
        .sorted()
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
