import GeoCore
import Records
import TestSupport
import Testing
import TextIndex

@testable import Gazetteer

/// Layers of changes in one level and in two (`AddressLayer`) against a fresh index of the same addresses, on drawn
/// data made to join and split streets: six names in six towns, houses moved across cells and towns and renamed,
/// objects made and deleted. After every file each layer shows the fresh index's streets (name, city,
/// postcode, anchor, members) and answers drawn queries alike.
@Suite struct AddressLevelsTests {
    /// Objects and what each makes: a node houses (one, or two as `#0`/`#1`), a way a street line, a relation a
    /// building.
    struct World {
        var random: SplitMix64
        var objects: [String: AddressData] = [:]
        var next = 1
        static let names = ["Kirkkotie", "Rantatie", "Koulukatu", "Mäkitie", "Puistokatu", "Asematie"]
        static let cities = ["Espoo", "Vantaa", "Kauniainen"]

        init(seed: UInt64) {
            random = SplitMix64(seed: seed)
            towns = (0..<6).map { _ in Coordinate2(60.0 + random.uniform(0...2), 22.0 + random.uniform(0...6)) }
        }

        mutating func chance(_ oneIn: UInt64) -> Bool { random.next() % oneIn == 0 }
        mutating func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        /// Towns a few cells of the index (0.05° × 0.1°) across, far enough apart that each has streets of its own.
        var towns: [Coordinate2] = []
        /// A point in one of the towns, where few houses stand in each cell: some streets join across cells, others
        /// stay apart, and a house made or moved may join two.
        mutating func point() -> Coordinate2 {
            let town = pick(towns)
            return Coordinate2(town.latitude + random.uniform(-0.1...0.1), town.longitude + random.uniform(-0.2...0.2))
        }

        mutating func newID() -> String {
            next += 1
            return "osm-\(pick(["n", "n", "n", "w", "r"]))\(next)"
        }

        /// What object `id` makes, drawn afresh.
        mutating func make(_ id: String) -> AddressData {
            let p = point()
            if id.hasPrefix("osm-n") {
                let count = chance(5) ? 2 : 1
                let street: String? = chance(10) ? nil : pick(Self.names)
                let houses = (0..<count).map { k in
                    AddressPoint(
                        id: count == 1 ? id : "\(id)#\(k)",
                        street: street,
                        place: street == nil ? pick(Self.names) : nil,
                        housenumber: "\(1 + random.next() % 40)",
                        postcode: chance(3) ? nil : "0\(2100 + random.next() % 4)",
                        city: chance(2) ? pick(Self.cities) : nil,
                        latitude: p.latitude + Double(k) * 0.0001,
                        longitude: p.longitude
                    )
                }
                return AddressData(addresses: houses)
            }
            if id.hasPrefix("osm-w") {
                let points = (0..<3).map { i in Coordinate2(p.latitude + Double(i) * 0.01, p.longitude + Double(i) * 0.02) }
                var names = [pick(Self.names)]
                if chance(4) { names.append(pick(Self.names)) }
                return AddressData(streets: [StreetLine(id: id, names: names, points: points, city: chance(2) ? pick(Self.cities) : nil)])
            }
            let (a, b) = (p.latitude, p.longitude)
            let ring = [p, Coordinate2(a + 0.001, b), Coordinate2(a + 0.001, b + 0.002), Coordinate2(a, b + 0.002), p]
            return AddressData(areas: [MapArea(id: id, kind: .building, rings: [MapArea.Ring(outer: true, points: ring)])])
        }

        /// Every object's houses, lines and areas, in object order.
        var whole: AddressData {
            var (houses, lines, areas) = ([AddressPoint](), [StreetLine](), [MapArea]())
            for id in OSMObjectKey.inOrder(Array(objects.keys), id: { $0 }) {
                let data = objects[id]!
                houses += Array(data.addresses)
                lines += data.streets
                areas += Array(data.areas)
            }
            return AddressData(addresses: houses, streets: lines, areas: areas).asStored
        }

        /// A change file: objects changed (drawn again), made, or deleted; their ids and what they make now.
        mutating func file() -> (changed: Set<String>, made: AddressData) {
            var changed = Set<String>()
            var (houses, lines, areas) = ([AddressPoint](), [StreetLine](), [MapArea]())
            let existing = objects.keys.sorted()
            for _ in 0..<(3 + random.next() % 12) {
                let isNew = existing.isEmpty || chance(4)
                let id = isNew ? newID() : pick(existing)
                guard changed.insert(id).inserted else { continue }
                if !isNew && chance(5) {
                    objects[id] = nil
                    continue
                }
                let data = make(id)
                objects[id] = data
                houses += Array(data.addresses)
                lines += data.streets
                areas += Array(data.areas)
            }
            return (changed, AddressData(addresses: houses, streets: lines, areas: areas))
        }
    }

    static let everywhere = BoundingBox(uncheckedWest: -180, south: -90, east: 180, north: 90)

    /// `OSMObjectKey.replacing` (binary search per changed object) against reading every id (`merged` of the kept
    /// items and the added ones), on drawn lists of ids: objects of several parts, ids that are not OpenStreetMap's,
    /// objects changed that make nothing now, and new ones.
    @Test func replacingAChangedObjectsItemsEqualsReadingEveryID() {
        let seed = testSeed("replacingAChangedObjectsItemsEqualsReadingEveryID")
        var random = SplitMix64(seed: seed)
        func ids(_ count: Int) -> [String] {
            (0..<count).flatMap { _ -> [String] in
                if random.next() % 25 == 0 { return ["poi-\(random.next() % 50)"] }
                let object = "osm-\(["n", "w", "r"][Int(random.next() % 3)])\(1 + random.next() % 400)"
                return random.next() % 4 == 0 ? ["\(object)#0", "\(object)#1"] : [object]
            }
        }
        for round in 0..<200 {
            let items = OSMObjectKey.inOrder(Array(Set(ids(Int(random.next() % 60)))), id: { $0 })
            var changed = Set(ids(Int(random.next() % 8)).map(OSMObjectKey.object(of:)))
            if round % 10 == 0 { changed.insert("poi-7") }
            let added = OSMObjectKey.inOrder(ids(Int(random.next() % 8)).filter { changed.contains(OSMObjectKey.object(of: $0)) }, id: { $0 })
            let expected = OSMObjectKey.merged(items.filter { !changed.contains(OSMObjectKey.object(of: $0)) }, added, id: { $0 })
            #expect(
                OSMObjectKey.replacing(items, changed: changed, with: added, id: { $0 }) == expected,
                "round \(round) (SEED=\(seed)): \(items) with \(changed) replaced by \(added)"
            )
        }
    }

    /// Eight files over a base of 300 objects, laid in one level (taken on top of the last) and in two: kept over
    /// the first file's layer, made one again after two files over one, and as `adding` decides by itself.
    @Test func layersInOneAndTwoLevelsShowAFreshIndexsStreets() {
        let seed = testSeed("layersInOneAndTwoLevelsShowAFreshIndexsStreets")
        var world = World(seed: seed)
        for _ in 0..<300 {
            let id = world.newID()
            world.objects[id] = world.make(id)
        }
        let base = AddressIndex(world.whole)
        var changes = AddressChanges(baseGeneration: "0")
        var one: AddressLayer?
        let policies: [(name: String, limit: (Int, Int, Int) -> Int)] = [
            ("kept over the first file's layer", { _, _, _ in .max }),
            ("made one again after two files over one", { _, _, files in files % 2 == 0 ? 0 : .max }),
            ("as adding decides", AddressLayer.topLimit),
        ]
        var levels = [AddressLayer](repeating: AddressLayer(base: base, generation: "0"), count: policies.count)
        var twoLevels = 0
        for step in 1...8 {
            let (changed, made) = world.file()
            let what = "after file \(step) (SEED=\(seed))"
            changes.add(changed: changed, made: made, sea: nil, generation: "\(step)", over: base)
            one = AddressLayer(base: base, changes: changes, previous: one)
            let stored = world.whole
            let fresh = AddressIndex(stored)
            guard let one else {
                Issue.record("\(what): the base is not in object order")
                return
            }
            AddressAnswers.expectSameStreets(one, fresh, "\(what), one level")
            for (p, policy) in policies.enumerated() {
                guard
                    let next = levels[p].adding(changed: changed, made: made, sea: nil, generation: "\(step)", topLimit: policy.limit)
                else {
                    Issue.record("\(what): no layer (\(policy.name))")
                    return
                }
                levels[p] = next
                if next.under != nil { twoLevels += 1 }
                let name = "\(what), \(policy.name)"
                #expect(next.changes == changes, "\(name): the changes")
                AddressAnswers.expectSameData(next.whole, stored, "\(name): the whole addresses")
                AddressAnswers.expectSameStreets(next, fresh, name)
                #expect(
                    next.lines(in: Self.everywhere, limit: 100_000).lines == fresh.lines(in: Self.everywhere, limit: 100_000).lines,
                    "\(name): every street line"
                )
                for kind in MapArea.Kind.allCases {
                    #expect(
                        next.areas(of: kind, in: Self.everywhere, limit: 100_000).areas
                            == fresh.areas.areas(of: kind, in: Self.everywhere, limit: 100_000).areas,
                        "\(name): every \(kind) area"
                    )
                }
                // Drawn queries cost a debug build seconds a layer: after every third file.
                if step % 3 == 2 { AddressAnswers.expectAlike(AddressBook(osm: next), fresh, stored, seed: seed &+ UInt64(step), name) }
            }
            #expect(levels[0].under != nil || step == 1, "\(what): the layer kept over the first file's is in two levels")
        }
        #expect(twoLevels >= 10, "layers in two levels made: \(twoLevels)")
    }

    /// What a writer of change files reads of the base (`AddressOutline`, from the base's snapshot, nothing decoded)
    /// answers every question `AddressChanges` asks as the whole index does, and eight files added over each make
    /// the same changes.
    @Test func anOutlineOfTheBaseAnswersAsTheIndexAndMakesTheSameChanges() throws {
        let seed = testSeed("anOutlineOfTheBaseAnswersAsTheIndexAndMakesTheSameChanges")
        var world = World(seed: seed)
        for _ in 0..<300 {
            let id = world.newID()
            world.objects[id] = world.make(id)
        }
        let base = AddressIndex(world.whole)
        let scratch = ScratchDirectory("address-outline")
        let path = scratch.file("addresses.snapshot")
        try base.writeSnapshot(to: path, generation: "0")
        let outline = try AddressOutline(snapshot: path, generation: "0")
        let what = "SEED=\(seed)"
        #expect(
            [outline.houseCount, outline.lineCount, outline.areaCount] == [base.houseCount, base.lineCount, base.areaCount],
            "\(what): the counts"
        )
        #expect(outline.isInObjectOrder && base.isInObjectOrder, "\(what): in object order")
        for object in world.objects.keys.sorted() + ["osm-n1", "osm-w999999", "osm-r0"] {
            let key = OSMObjectKey.packed(OSMObjectKey.order(of: object)!)
            #expect(outline.houseRange(ofObject: key) == base.houseRange(ofObject: key), "\(what): the houses of \(object)")
            #expect(outline.lineRange(ofObject: key) == base.lineRange(ofObject: key), "\(what): the lines of \(object)")
        }
        #expect((0..<base.houseCount).allSatisfy { outline.street(ofHouse: $0) == base.street(ofHouse: $0) }, "\(what): houses' streets")
        #expect((0..<base.lineCount).allSatisfy { outline.street(ofLine: $0) == base.street(ofLine: $0) }, "\(what): lines' streets")
        for s in 0..<Int32(base.streets.count) {
            #expect(outline.memberCount(ofStreet: s) == base.memberCount(ofStreet: s), "\(what): street \(s)'s members")
            #expect(outline.memberCells(of: s) == base.memberCells(of: s), "\(what): street \(s)'s cells")
        }
        let names = Set(World.names.map(TextNormalizer.normalize) + ["nowhere", "", "kirkkoti"])
        #expect(outline.streets(named: names) == base.streets(named: names), "\(what): streets by name")
        #expect(!base.streets(named: names).isEmpty, "\(what): the names asked have streets")

        var (overIndex, overOutline) = (AddressChanges(baseGeneration: "0"), AddressChanges(baseGeneration: "0"))
        for step in 1...8 {
            let (changed, made) = world.file()
            overIndex.add(changed: changed, made: made, sea: nil, generation: "\(step)", over: base)
            overOutline.add(changed: changed, made: made, sea: nil, generation: "\(step)", over: outline)
            #expect(overOutline == overIndex, "\(what): the changes after file \(step)")
            #expect(overOutline.layerSizeBound(over: outline) == overIndex.layerSizeBound(over: base), "\(what): the bound after file \(step)")
        }
        #expect(!overIndex.streets.isEmpty, "\(what): the files took base streets")
        #expect(AddressLayer.limit(over: outline) == AddressLayer.limit(over: base))
    }
}
