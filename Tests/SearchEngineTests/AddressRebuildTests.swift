import Catalog
import Datasets
import Foundation
import Gazetteer
import OSM
import Records
import Synchronization
import TestSupport
import Testing

@testable import SearchEngine

/// Change files laid over an address index that is built again whole in the background meanwhile (`AddressRebuild`),
/// against the store: after every file, the addresses the layer makes are the store's, its answers a fresh index's,
/// and the snapshot with the changes beside it opens to the same addresses without reading the store (what the next
/// start maps). The files are a feed drawn by scripts/osm/changes.py from the printed seed; every other file's layer is
/// laid while its transaction runs (`AddressLayerAhead`).
@Suite struct AddressRebuildTests {
    static let dataDirectory = Repository.data.path
    static let gazetteer = BundledGazetteer.shared
    static let importer = OSMImporter(mapping: try! OSMTagMapping.load(directory: dataDirectory)) {
        gazetteer.cityAndCountry(latitude: $0, longitude: $1)
    }
    let scratch = ScratchDirectory("poi-address-rebuild")

    /// The layer's limit, set by the test between files.
    final class Limit: Sendable {
        let value = Atomic<Int>(.max)
    }

    /// `limited`: from the second file on the limit is 0, so each file finds its layer past it: it swaps in the build
    /// the last one began when that is done, or drops it and builds the whole index itself. Otherwise each file is
    /// laid over whichever base is ready (the build's, once done), and the third finds the base replaced whole first
    /// (as an import does), which drops the build in flight.
    @Test(arguments: [false, true]) func filesOverABaseBuiltAgainAreTheStoresAddresses(limited: Bool) throws {
        let seed = testSeed("filesOverABaseBuiltAgainAreTheStoresAddresses(limited: \(limited))") % 1_000_000
        let extract = scratch.file("base.osm.pbf")
        _ = try PythonScript.run(["scripts/osm/synthetic.py", extract, "--nodes", "6000", "--seed", "\(seed)"])
        let feed = scratch.file("feed")
        let files = 5
        _ = try PythonScript.run(["scripts/osm/changes.py", extract, feed, "--files", "\(files)", "--changes", "150", "--seed", "\(seed)"])
        let store = try CatalogStore(path: scratch.file("store.sqlite"))
        try OSMImporter.write(try Self.importer.read(extract), to: store)
        let path = scratch.file("store.sqlite.addresses")
        var current = try SearchEngine.openAddresses(store, snapshot: path).layer
        // A build's snapshot a stopped process left: removed when the next build begins.
        let left = scratch.write("store.sqlite.addresses.next-999", "left by a process stopped mid-build")
        let limit = Limit()
        let rebuild = AddressRebuild(trigger: { _ in 0 }, limit: { _ in limit.value.load(ordering: .relaxed) })
        for step in 1...files {
            let what = "after file \(step) (SEED=\(seed), limited: \(limited))"
            if limited && step == 2 { limit.value.store(0, ordering: .relaxed) }
            if !limited && step == 3 {
                let generation = try #require(try store.addressGeneration())
                let index = SearchEngine.keepSnapshot(of: AddressIndex(try store.loadAddresses()), at: path, generation: generation).index
                current = AddressLayer(base: index, generation: generation)
            }
            let file = "\(feed)/000/000/\(String(format: "%03d", step)).osc.gz"
            // Odd files have their layer laid while the transaction runs (`AddressLayerAhead`), as a server does.
            var ahead: AddressLayerAhead?
            let before = current
            let result = try Self.importer.apply(
                try OSMChange.read(file),
                name: "file \(step)",
                to: store,
                addressesMade: step % 2 == 1 ? { ahead = AddressLayerAhead(over: before, $0) } : nil
            )
            if step % 2 == 1 {
                let made = try #require(ahead, "\(what): the transaction told what its addresses are")
                #expect(made.layer(over: before, generation: result.addressGeneration) != nil, "\(what): the layer laid ahead is of this file")
            }
            current = try SearchEngine.layAddresses(of: result, over: current, snapshot: path, store: store, rebuild: rebuild, ahead: ahead)
            // As a follower does once it has applied every file there is (not after the fourth: the fifth comes at once).
            if step != 4 { rebuild.beginIfDue(over: current, snapshot: path) }
            if step == 1 { #expect(!FileManager.default.fileExists(atPath: left), "the snapshot a stopped build left is removed") }
            try Self.expectStoresAddresses(current, store, snapshot: path, seed: seed + UInt64(step), what)
        }
        if limited { #expect(rebuild.tally.swapped + rebuild.tally.dropped >= 1, "the build the first file began: \(rebuild.tally)") }
        current = rebuild.finish(over: current, snapshot: path)
        try Self.expectStoresAddresses(current, store, snapshot: path, seed: seed, "after the last build swapped in (SEED=\(seed))")
        if !limited { #expect(rebuild.tally.begun >= 1 && rebuild.tally.swapped >= 1, "builds begun and swapped in: \(rebuild.tally)") }
    }

    /// The layer's addresses are the store's, it answers as a fresh index of them, and the snapshot with the changes
    /// beside it opens to the same without building from the store.
    static func expectStoresAddresses(_ layer: AddressLayer, _ store: CatalogStore, snapshot path: String, seed: UInt64, _ what: String) throws {
        let stored = try store.loadAddresses()
        AddressAnswers.expectSameData(layer.whole, stored, "\(what): the layer's addresses against the store's")
        AddressAnswers.expectAlike(AddressBook(osm: layer), AddressIndex(stored), stored, seed: seed, what)
        let generation = try #require(try store.addressGeneration())
        switch SearchEngine.mapped(path, generation: generation) {
        case .success(let opened):
            AddressAnswers.expectSameData(opened.layer.whole, stored, "\(what): the snapshot's addresses (\(opened.how)) against the store's")
        case .failure(let error):
            Issue.record("\(what): the snapshot does not open to the store's addresses: \(error)")
        }
    }
}
