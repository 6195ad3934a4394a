import Foundation
import GRDB
import GeoCore
import TestSupport
import Testing

@testable import Catalog
@testable import Records

/// A change file's map areas replaced in the store block by block (`CatalogStore.replaceAreas`), change after change,
/// against the oracle of the whole list: the kept areas merged with the added ones, the sea last (made again in some
/// changes). Small gaps between the blocks' numbers make some changes fall back to a whole write.
@Suite struct AreaReplacementTests {
    static func area(_ id: String, _ random: inout SplitMix64) -> MapArea {
        let (lat, lon) = (random.uniform(60...60.3), random.uniform(24.8...25.1))
        var points: [Coordinate2] = []
        for k in 0..<Int(3 + random.next() % 4) {
            let (dLat, dLon): (Double, Double) = (Double(k % 2) * 0.001, Double(k / 2) * 0.001)
            points.append(Coordinate2(lat + dLat, lon + dLon))
        }
        return MapArea(
            id: id,
            kind: random.next() % 2 == 0 ? .building : .water,
            name: random.next() % 3 == 0 ? "Talo \(random.next() % 50)" : nil,
            rings: [MapArea.Ring(outer: true, points: points)]
        )
    }

    static func sea(_ count: Int, _ random: inout SplitMix64) -> [MapArea] {
        (0..<count).map { area("\(MapArea.seaPrefix)\($0)", &random) }
    }

    static func objectID(_ random: inout SplitMix64) -> String {
        "osm-\(random.next() % 3 == 0 ? "r" : "w")\(Int64.random(in: 1...20_000, using: &random))"
    }

    @Test(arguments: [1, CatalogStore.houseBlockGap])
    func onlyTheBlocksReachedAreWritten(gap: Int64) throws {
        let seed = testSeed("areaReplacementInStore-\(gap)")
        var random = SplitMix64(seed: seed)
        let scratch = ScratchDirectory("poi-area-spans")
        let store = try CatalogStore(path: scratch.file("areas.sqlite"))
        var ids = Set<String>()
        while ids.count < 3_000 + Int(random.next() % 3_000) { ids.insert(Self.objectID(&random)) }
        var objects = OSMObjectKey.inOrder(ids.map { Self.area($0, &random) }, id: \.id)
        var sea = Self.sea(Int(random.next() % 3), &random)
        try store.pool.write { db in try CatalogStore.writeAreas(AreaList(objects + sea), db, gap: gap) }
        var (incremental, whole) = (0, 0)
        for round in 0..<30 {
            let before = try store.pool.read { db in try Row.fetchAll(db, sql: "SELECT seq, data FROM map_area_block") }
            var changedIDs = Set<String>()
            for _ in 0..<Int(1 + random.next() % 25) {
                if !objects.isEmpty, random.next() % 2 == 0 {
                    changedIDs.insert(objects[Int(random.next() % UInt64(objects.count))].id)
                } else {
                    changedIDs.insert(Self.objectID(&random))
                }
            }
            let added = OSMObjectKey.inOrder(changedIDs.filter { _ in random.next() % 3 != 0 }.map { Self.area($0, &random) }, id: \.id)
            let newSea = random.next() % 4 == 0 ? Self.sea(Int(random.next() % 3), &random) : nil
            let changed = Set(changedIDs.compactMap { OSMObjectKey.order(of: $0).map(OSMObjectKey.packed) })
            objects = OSMObjectKey.merged(objects.filter { !changedIDs.contains($0.id) }, added, id: \.id)
            if let newSea { sea = newSea }

            let done = try store.pool.write { db in
                try CatalogStore.replaceAreas(changed: changed, added: AreaList(added), sea: newSea, db, gap: gap)
            }
            if done {
                incremental += 1
            } else {
                try store.pool.write { db in try CatalogStore.writeAreas(AreaList(objects + sea), db, gap: gap) }
                whole += 1
            }
            let stored = try store.pool.read { db in try CatalogStore.areas(db) }
            let same = stored == AreaList(objects + sea)  // not the lists in the message: thousands of areas
            #expect(same, "seed \(seed), round \(round): \(stored.count) areas where the oracle has \(objects.count + sea.count)")
            // Every block's span is its first and last area's object (the sea's blocks span past every object).
            let blocks = try store.pool.read { db in
                try Row.fetchAll(
                    db,
                    sql: "SELECT b.seq, b.data, r.first, r.last FROM map_area_block b LEFT JOIN map_area_range r USING (seq) ORDER BY b.seq"
                )
            }
            for row in blocks {
                let areas = try AreaList(checking: [[UInt8](row[1] as Data)])
                func key(_ i: Int) -> Int64 {
                    OSMObjectKey.order(of: areas.id(of: i)).map(OSMObjectKey.packed) ?? CatalogStore.seaSpan
                }
                #expect(!areas.isEmpty && areas.count <= CatalogStore.areaBlockSize)
                #expect(
                    row[2] as Int64? == key(0) && row[3] as Int64? == key(areas.count - 1),
                    "seed \(seed), round \(round): block \(row[0] as Int64)"
                )
            }
            if done && newSea == nil {
                // A block whose span holds no changed object and where no area was added is left as it was.
                let now = Dictionary(uniqueKeysWithValues: blocks.map { (row: Row) -> (Int64, Data) in (row[0], row[1]) })
                let untouched = before.filter { now[$0[0] as Int64] == ($0[1] as Data) }.count
                // (With gaps of 1 most runs take their neighbours in, and those are written again too.)
                #expect(gap == 1 || untouched >= before.count - changed.count * 2 - added.count, "seed \(seed), round \(round)")
            }
        }
        // Where numbers run out (gaps of 1), the run takes its neighbours in: never the whole list.
        #expect(whole == 0, "seed \(seed): \(whole) lists written whole with gaps of \(gap)")
        // No room: a full middle block that gains an area splits in two, with no number free between its neighbours.
        // They are read and written again with it, numbered apart; the blocks past them stay as they were.
        try store.pool.write { db in try CatalogStore.writeAreas(AreaList(objects + sea), db, gap: 1) }
        let middle = try #require(OSMObjectKey.order(of: objects[CatalogStore.areaBlockSize + CatalogStore.areaBlockSize / 2].id))
        let newID = try #require(
            (Int64(1)...1_000).lazy.map { "osm-\(["n", "w", "r"][middle.type])\(middle.id + $0)" }.first { id in !objects.contains { $0.id == id } }
        )
        let gained = Self.area(newID, &random)
        let beforeSplit = try store.pool.read { db in try Row.fetchAll(db, sql: "SELECT seq, data FROM map_area_block ORDER BY seq") }
        let split = try store.pool.write { db in
            try CatalogStore.replaceAreas(changed: [OSMObjectKey.packed(OSMObjectKey.order(of: newID)!)], added: [gained], sea: nil, db, gap: 1)
        }
        objects = OSMObjectKey.merged(objects, [gained], id: \.id)
        let after = try store.pool.read { db in try CatalogStore.areas(db) }
        #expect(split && after == AreaList(objects + sea), "seed \(seed): the split's areas")
        let afterSplit = try store.pool.read { db in try Row.fetchAll(db, sql: "SELECT seq, data FROM map_area_block ORDER BY seq") }
        let kept = Dictionary(uniqueKeysWithValues: afterSplit.map { (row: Row) -> (Int64, Data) in (row[0], row[1]) })
        let untouched = beforeSplit.filter { kept[$0[0] as Int64] == ($0[1] as Data) }.count
        #expect(untouched == beforeSplit.count - 3, "seed \(seed): \(untouched) of \(beforeSplit.count) blocks kept")
        // A database from before the spans (migration v11 leaves the table empty): written whole by the caller.
        let withoutSpans = try store.pool.write { db in
            try db.execute(sql: "DELETE FROM map_area_range")
            return try CatalogStore.replaceAreas(changed: [], added: [], sea: nil, db)
        }
        #expect(!withoutSpans)
        #expect(incremental == 30, "seed \(seed): \(incremental) of 30 changes written block by block")
    }
}
