import Foundation
import GeoCore
import Records
import TestSupport
import Testing

@testable import Catalog
@testable import Gazetteer

/// The address index with change files laid over it (`AddressLayer`) against a fresh index of every address the store
/// holds after them: drawn queries of every kind answered alike.
struct AddressLayerOracle {
    /// The base as the import left it, and the changes laid over it so far.
    private(set) var base: AddressIndex
    private(set) var changes: AddressChanges
    /// The layer after the last file, taken on top of the one before.
    private(set) var layer: AddressLayer?
    /// The layers in two levels (`AddressLayer.adding`, as a server lays them): one kept over the first file's layer,
    /// and one that makes a single layer again after two files over one.
    private(set) var kept: AddressLayer?
    private(set) var alternating: AddressLayer?
    private(set) var files = 0

    init(_ store: CatalogStore) throws {
        base = AddressIndex(try store.loadAddresses())
        changes = AddressChanges(baseGeneration: try store.addressGeneration() ?? "")
    }

    /// Lays a change file's result over the layer, and checks it against a fresh index of `store`'s addresses.
    mutating func check(after result: OSMChangeResult, store: CatalogStore, seed: UInt64, _ what: String) throws {
        changes.add(changed: result.changedObjects, made: result.made, sea: result.sea, generation: result.addressGeneration, over: base)
        guard let whole = AddressLayer(base: base, changes: changes), let layer = AddressLayer(base: base, changes: changes, previous: layer)
        else {
            Issue.record("\(what): the base is not in object order")
            return
        }
        self.layer = layer
        func adding(_ over: AddressLayer?, topLimit: @escaping (Int, Int, Int) -> Int) -> AddressLayer? {
            (over ?? AddressLayer(base: base, generation: changes.baseGeneration)).adding(
                changed: result.changedObjects,
                made: result.made,
                sea: result.sea,
                generation: result.addressGeneration,
                topLimit: topLimit
            )
        }
        files += 1
        kept = adding(kept) { _, _, _ in .max }
        #expect(files == 1 || kept?.under != nil, "\(what): the layer kept over the first file's is in two levels")
        alternating = adding(alternating) { _, _, files in files % 2 == 0 ? 0 : .max }
        // Taken on top of the last, the layer is the one built from nothing.
        #expect(layer.hiddenHouses == whole.hiddenHouses && layer.hiddenLines == whole.hiddenLines, "\(what): hidden houses and lines")
        #expect(layer.hiddenAreas == whole.hiddenAreas && layer.hiddenStreets == whole.hiddenStreets, "\(what): hidden areas and streets")
        #expect(layer.takenHouses == whole.takenHouses && layer.takenLines == whole.takenLines, "\(what): members taken from the base")
        #expect(layer.changedObjects == whole.changedObjects, "\(what): the changed objects")
        #expect(
            (0..<layer.index.houseCount).map(layer.index.house) == (0..<whole.index.houseCount).map(whole.index.house)
                && layer.index.lines == whole.index.lines,
            "\(what): the houses and lines the layer indexes"
        )
        // Written and read back: what the next start lays over the snapshot.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("poi-layer-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try changes.write(to: path)
        #expect(try AddressChanges.read(path) == changes, "\(what): the changes read back")
        let stored = try store.loadAddresses()
        // The addresses base and layer make together are the store's, in its order: what a build in the background
        // starts from (`AddressRebuild`).
        AddressAnswers.expectSameData(layer.whole, stored, "\(what): the layer's whole addresses against the store's")
        let fresh = AddressIndex(stored)
        AddressAnswers.expectAlike(AddressBook(osm: layer), fresh, stored, seed: seed, what)
        AddressAnswers.expectSameStreets(layer, fresh, what)
        for (levels, name) in [(kept, "kept over the first file's"), (alternating, "made one again after two files over it")] {
            guard let levels else {
                Issue.record("\(what): no layer in two levels (\(name))")
                continue
            }
            #expect(levels.changes == changes, "\(what): the changes of the layer in two levels (\(name))")
            AddressAnswers.expectSameData(levels.whole, stored, "\(what): the whole addresses of the layer in two levels (\(name))")
            AddressAnswers.expectAlike(AddressBook(osm: levels), fresh, stored, seed: seed, "\(what), in two levels (\(name))")
            AddressAnswers.expectSameStreets(levels, fresh, "\(what), in two levels (\(name))")
        }
    }
}
