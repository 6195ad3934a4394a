import BundledData
import Datasets
import Foundation
import Gazetteer
import GeoCore
import OSM
import Records
import TestSupport
import Testing

@testable import Catalog

/// Change files applied to an imported extract, against an oracle: the same changes applied to the extract by
/// `osmium apply-changes` (libosmium), then imported afresh. POIs, houses, streets and map areas (the sea too) must be equal, row for row.
/// The changes are drawn by scripts/osm/changes.py (every kind of create, modify and delete of nodes, ways and
/// relations) from the printed seed.
@Suite struct OSMChangeTests {
    static let dataDirectory = Repository.data.path
    static let gazetteer = BundledGazetteer.shared
    static let importer = OSMImporter(mapping: try! OSMTagMapping.load(directory: dataDirectory)) {
        gazetteer.cityAndCountry(latitude: $0, longitude: $1)
    }
    let scratch = ScratchDirectory("poi-osm-change")

    /// Runs `osmium` with `arguments`. - Throws: its standard error when it fails.
    static func osmium(_ arguments: [String]) throws { _ = try Tool.run("osmium", arguments) }

    /// `extract` changed by `change` as `osmium apply-changes` makes it, with `extract`'s header box (which osmium
    /// leaves out, and an import closes the sea along).
    static func applyChanges(_ extract: String, _ change: String, into changed: String) throws {
        try osmium(["apply-changes", extract, change, "-o", changed + ".unboxed.osm.pbf", "--overwrite"])
        _ = try PythonScript.run(["scripts/osm/with_box.py", extract, changed + ".unboxed.osm.pbf", changed])
    }

    /// A database with `extract` imported, as `poi import` makes it.
    func imported(_ extract: String, _ name: String) throws -> CatalogStore {
        let store = try CatalogStore(path: scratch.file(name))
        try OSMImporter.write(try Self.importer.read(extract), to: store)
        return store
    }

    /// Everything an import makes, as the store has it: POIs by id; houses, streets and map areas (the sea too) in
    /// stored order.
    static func contents(_ store: CatalogStore) throws -> (pois: [POIRecord], houses: [AddressPoint], streets: [StreetLine], areas: [MapArea]) {
        var pois: [POIRecord] = []
        _ = try store.loadAll(blockSize: 10_000) { pois.append(contentsOf: $0) }
        let addresses = try store.loadAddresses()
        return (pois.sorted { $0.id < $1.id }, Array(addresses.addresses), addresses.streets, Array(addresses.areas))
    }

    static func expectEqual(_ ours: CatalogStore, _ fresh: CatalogStore, _ what: String) throws {
        let a = try contents(ours)
        let b = try contents(fresh)
        #expect(a.pois.count == b.pois.count, "\(what): POIs")
        for (x, y) in zip(a.pois, b.pois) where x != y {
            Issue.record("\(what): POI \(x.id) is \(x), a fresh import has \(y)")
            break
        }
        let (ids, freshIDs) = (Set(a.pois.map(\.id)), Set(b.pois.map(\.id)))
        #expect(ids.subtracting(freshIDs).isEmpty, "\(what): POIs a fresh import lacks: \(ids.subtracting(freshIDs).sorted().prefix(10))")
        #expect(freshIDs.subtracting(ids).isEmpty, "\(what): POIs missing: \(freshIDs.subtracting(ids).sorted().prefix(10))")
        #expect(a.houses.count == b.houses.count, "\(what): houses")
        if let i = a.houses.indices.first(where: { $0 < b.houses.count && a.houses[$0] != b.houses[$0] }) {
            Issue.record("\(what): house \(i) is \(a.houses[i]), a fresh import has \(b.houses[i])")
        }
        #expect(a.streets.count == b.streets.count, "\(what): streets")
        if let i = a.streets.indices.first(where: { $0 < b.streets.count && a.streets[$0] != b.streets[$0] }) {
            Issue.record("\(what): street \(i) is \(a.streets[i]), a fresh import has \(b.streets[i])")
        }
        #expect(a.areas.count == b.areas.count, "\(what): areas")
        if let i = a.areas.indices.first(where: { $0 < b.areas.count && a.areas[$0] != b.areas[$0] }) {
            Issue.record("\(what): area \(i) is \(a.areas[i]), a fresh import has \(b.areas[i])")
        }
    }

    /// Three change files in a row on a synthetic extract: after each, the database equals a fresh import of the
    /// extract osmium changed the same way.
    @Test func changesEqualAFreshImportOfTheChangedExtract() throws {
        let seed = testSeed("changesEqualAFreshImportOfTheChangedExtract") % 1_000_000
        var extract = scratch.file("base.osm.pbf")
        _ = try PythonScript.run(["scripts/osm/synthetic.py", extract, "--nodes", "6000", "--seed", "\(seed)"])
        let ours = try imported(extract, "ours.sqlite")
        var layer = try AddressLayerOracle(ours)
        for step in 1...3 {
            let change = scratch.file("change-\(step).osc.gz")
            _ = try PythonScript.run(["scripts/osm/changes.py", extract, change, "--seed", "\(seed + UInt64(step))", "--changes", "250"])
            let changed = scratch.file("changed-\(step).osm.pbf")
            try Self.applyChanges(extract, change, into: changed)
            let result = try Self.importer.apply(try OSMChange.read(change), name: "change-\(step)", to: ours)
            #expect(result.report.nodes > 0 && result.report.ways > 0)
            try Self.expectEqual(ours, try imported(changed, "fresh-\(step).sqlite"), "after change \(step) (SEED=\(seed))")
            try layer.check(after: result, store: ours, seed: seed + UInt64(step), "the layer after change \(step)")
            extract = changed
        }
    }

    /// The Helsinki extract (real data: multipolygons of several ways, clipped ways) with a drawn change file.
    @Test func aChangedRealExtractEqualsItsFreshImport() throws {
        let seed = testSeed("aChangedRealExtractEqualsItsFreshImport") % 1_000_000
        let extract = Repository.path("data/Helsinki.osm.pbf")
        let ours = try imported(extract, "ours.sqlite")
        var layer = try AddressLayerOracle(ours)
        let change = scratch.file("change.osc.gz")
        _ = try PythonScript.run(["scripts/osm/changes.py", extract, change, "--seed", "\(seed)", "--changes", "400"])
        let changed = scratch.file("changed.osm.pbf")
        try Self.applyChanges(extract, change, into: changed)
        let result = try Self.importer.apply(try OSMChange.read(change), name: "change", to: ours)
        try Self.expectEqual(ours, try imported(changed, "fresh.sqlite"), "Helsinki (SEED=\(seed))")
        try layer.check(after: result, store: ours, seed: seed, "the layer over Helsinki")
    }

    /// Moving two nodes of Helsinki's coastline (one in the middle of a shore, one at the extract's edge) and deleting
    /// a coastline way makes the sea again, as a fresh import of the changed extract makes it.
    @Test func aMovedCoastlineRemakesTheSea() throws {
        let extract = Repository.path("data/Helsinki.osm.pbf")
        let ours = try imported(extract, "ours.sqlite")
        var layer = try AddressLayerOracle(ours)
        let before = try ours.loadAddresses().areas.filter { $0.id.hasPrefix(MapArea.seaPrefix) }
        #expect(!before.isEmpty, "the Helsinki extract has a sea")
        for (step, body) in [
            #"""
            <modify>
              <node id="25453710" version="100" timestamp="2026-01-01T00:00:00Z" lat="60.1764" lon="24.9472"/>
              <node id="60072245" version="100" timestamp="2026-01-01T00:00:00Z" lat="60.1665" lon="24.9528"/>
            </modify>
            """#,
            #"<delete><way id="499729175" version="100" timestamp="2026-01-02T00:00:00Z"/></delete>"#,
        ].enumerated() {
            let change = scratch.write(
                "coast-\(step).osc",
                #"<?xml version="1.0" encoding="UTF-8"?><osmChange version="0.6" generator="test">"# + body + "</osmChange>"
            )
            let source = step == 0 ? extract : scratch.file("coast-0.osm.pbf")
            let changed = scratch.file("coast-\(step).osm.pbf")
            try Self.applyChanges(source, change, into: changed)
            let result = try Self.importer.apply(try OSMChange.read(change), name: "coast-\(step)", to: ours)
            try Self.expectEqual(ours, try imported(changed, "coast-fresh-\(step).sqlite"), "coastline change \(step)")
            try layer.check(after: result, store: ours, seed: UInt64(step), "the layer after coastline change \(step)")
        }
        #expect(try ours.loadAddresses().areas.filter { $0.id.hasPrefix(MapArea.seaPrefix) } != before, "the sea moved")
    }

    /// Bad change files are refused by name, and leave the database exactly as it was.
    @Test func badChangeFilesChangeNothing() throws {
        let extract = scratch.file("base.osm.pbf")
        _ = try PythonScript.run(["scripts/osm/synthetic.py", extract, "--nodes", "3000", "--seed", "11"])
        let store = try imported(extract, "db.sqlite")
        let before = try Self.contents(store)
        let sequence = try store.changeSequence()
        func refused(_ xml: String, _ expected: String) {
            do {
                let change = try OSMChange.parse(Data(xml.utf8), name: "bad.osc")
                _ = try Self.importer.apply(change, name: "bad.osc", to: store)
                Issue.record("accepted: \(xml)")
            } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
        }
        let move = #"<node id="1" version="2" lat="60.2" lon="24.9"/>"#
        refused(#"<osmChange version="0.6"><modify>\#(move)</modify"#, "bad.osc:1: malformed XML")
        refused(#"<osmChange version="0.6"><modify><node id="999999" version="2" lat="60" lon="24"/></modify></osmChange>"#, "modify of node 999999")
        refused(#"<osmChange version="0.6"><delete><way id="888888" version="2"/></delete></osmChange>"#, "delete of way 888888")
        // A move that would be fine, then an unknown relation: the move is not applied either.
        refused(
            #"<osmChange version="0.6"><modify>\#(move)<relation id="777" version="3"/></modify></osmChange>"#,
            "modify of relation 777, which the data does not have"
        )
        refused(#"<osmChange version="0.6"><modify><node id="1" lat="95" lon="24"/></modify></osmChange>"#, "node 1 has no valid lat and lon")
        refused(#"<osm version="0.6"/>"#, "not an osmChange file")
        // Older than the data: a file applied, then one whose objects are all older.
        let newer =
            #"<osmChange version="0.6"><modify><node id="1" version="2" timestamp="2026-02-01T00:00:00Z" lat="60.2" lon="24.9"/></modify></osmChange>"#
        _ = try Self.importer.apply(try OSMChange.parse(Data(newer.utf8), name: "newer.osc"), name: "newer.osc", to: store)
        let after = try Self.contents(store)
        let sequenceAfter = try store.changeSequence()
        refused(
            #"<osmChange version="0.6"><modify><node id="1" version="3" timestamp="2026-01-01T00:00:00Z" lat="60.3" lon="24.9"/></modify></osmChange>"#,
            "older than the data"
        )
        #expect(try store.changeSequence() == sequenceAfter)
        let unchanged = try Self.contents(store)
        #expect(unchanged.houses == after.houses && unchanged.pois == after.pois && unchanged.streets == after.streets)
        #expect(sequenceAfter.sequence == sequence.sequence + 1, "only the good file was committed")
        #expect(before.pois.count == after.pois.count)
        // A truncated gzip file.
        let truncated = scratch.file("truncated.osc.gz")
        _ = try PythonScript.run(["scripts/osm/changes.py", extract, truncated, "--seed", "3"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: truncated))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: truncated))
        #expect {
            _ = try OSMChange.read(truncated)
        } throws: { error in
            "\(error)".hasPrefix("truncated.osc.gz") && "\(error)".contains("unexpected end of file")
        }
    }

    /// A replication feed in a directory: followed from the extract's sequence, resumed where it stopped, a gap and
    /// a feed behind the data refused.
    @Test func aReplicationFeedIsFollowedAndAGapRefused() throws {
        let feed = scratch.file("feed")
        var extract = scratch.file("base.osm.pbf")
        _ = try PythonScript.run(["scripts/osm/synthetic.py", extract, "--nodes", "3000", "--seed", "5"])
        let store = try imported(extract, "db.sqlite")
        func write(_ text: String, _ path: String) throws {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        }
        for sequence in 101...103 {
            let name = feed + "/" + ReplicationSource.path(of: sequence)
            try FileManager.default.createDirectory(atPath: (name as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            _ = try PythonScript.run(["scripts/osm/changes.py", extract, name + ".osc.gz", "--seed", "\(sequence)", "--changes", "60"])
            let changed = scratch.file("changed-\(sequence).osm.pbf")
            try Self.applyChanges(extract, name + ".osc.gz", into: changed)
            extract = changed
            try write("sequenceNumber=\(sequence)\ntimestamp=2026-01-01T00\\:0\(sequence - 100)\\:00Z\n", name + ".state.txt")
        }
        try write("#\nsequenceNumber=103\ntimestamp=2026-01-01T00\\:03\\:00Z\n", feed + "/state.txt")
        let replicator = Replicator(source: ReplicationSource(feed))
        var applied: [Int] = []
        func apply(_ change: OSMChange, _ name: String, _ state: ReplicationState) throws {
            _ = try Self.importer.apply(change, name: name, to: store, sequence: state.sequence, timestamp: state.timestamp, source: feed)
            applied.append(state.sequence)
        }
        #expect(try replicator.catchUp(from: 100, limit: 1, apply: apply) == 101)
        let resumed = try #require(try store.osmMirrorState())
        #expect(resumed.sequence == 101 && resumed.timestamp == "2026-01-01T00:01:00Z" && resumed.source == feed)
        #expect(try replicator.catchUp(from: resumed.sequence!, apply: apply) == 103)
        #expect(applied == [101, 102, 103])
        try Self.expectEqual(store, try imported(extract, "fresh.sqlite"), "after the feed")
        // The feed behind the data, then a gap.
        #expect(throws: OSMChangeError.self) { try replicator.catchUp(from: 104, apply: apply) }
        try write("sequenceNumber=105\n", feed + "/state.txt")
        #expect {
            try replicator.catchUp(from: 103, apply: apply)
        } throws: { error in
            "\(error)".contains("sequence 104 (000/000/104.osc.gz) is missing while the feed is at 105: a gap; the data stays at 103")
        }
        #expect(try store.osmMirrorState()?.sequence == 103)
    }
}
