import Foundation
import Gazetteer
import GeoCore
import Records
import SnapshotFile

extension SearchEngine {
    /// The store's imported addresses: the base index mapped from its snapshot at `path`, with the change files
    /// applied since laid over it when their file beside it (`changesPath`) brings it to the store's current addresses
    /// (their generation); else the base alone, when the snapshot was written for them; else built from the store and
    /// its snapshot written and mapped in its place (a failure to write is said in the answer, not thrown: the
    /// snapshot only saves time).
    /// - Returns: the addresses, and how they were made.
    public static func openAddresses(_ store: any StoreOfRecord, snapshot path: String?) throws(CatalogError) -> (layer: AddressLayer, how: String) {
        guard store.keepsAddresses, let generation = try store.addressGeneration() else {
            return (AddressLayer(base: .empty), "none kept by the store")
        }
        var reason = "no snapshot path"
        if let path {
            switch mapped(path, generation: generation) {
            case .success(let opened): return opened
            case .failure(let error): reason = error.description
            }
        }
        let index = AddressIndex(try store.loadAddresses())
        guard let path, !index.isEmpty else {
            return (AddressLayer(base: index, generation: generation), "built from the database (\(index.isEmpty ? "no addresses" : reason))")
        }
        let kept = Self.keepSnapshot(of: index, at: path, generation: generation)
        return (AddressLayer(base: kept.index, generation: generation), "built from the database (\(reason)); \(kept.how)")
    }

    /// The addresses of `generation` from the snapshot at `path`, with the changes beside it laid over it when they
    /// bring it there, without building anything from the store.
    static func mapped(_ path: String, generation: String) -> Result<(layer: AddressLayer, how: String), SnapshotError> {
        if let changes = try? AddressChanges.read(changesPath(path)), changes.generation == generation, changes.baseGeneration != generation,
            let base = try? AddressIndex.readSnapshot(path, generation: changes.baseGeneration),
            let layer = AddressLayer(base: base, changes: changes)
        {
            return .success((layer, "read from the snapshot, with the \(changes.objects.count) objects change files made since laid over it"))
        }
        do {
            return .success(
                (AddressLayer(base: try AddressIndex.readSnapshot(path, generation: generation), generation: generation), "read from the snapshot")
            )
        } catch {
            return .failure(error)
        }
    }

    /// The store's imported addresses as `openAddresses` finds them mapped (nil: they would have to be built from the
    /// store; a store without addresses has none to lay changes over).
    public static func mappedAddresses(_ store: any StoreOfRecord, snapshot path: String) -> AddressLayer? {
        guard store.keepsAddresses, let generation = try? store.addressGeneration() else { return nil }
        return try? mapped(path, generation: generation).get().layer
    }

    /// The file of the changes laid over the address snapshot at `path` (`AddressChanges.write`).
    public static func changesPath(_ path: String) -> String { path + ".changes" }

    /// Writes `index`'s snapshot and reads it back, so that its arrays are served from the file's mapping (clean,
    /// shared page cache) instead of the heap; the changes laid over the snapshot before are removed with it.
    /// - Returns: the index to serve (the mapped one, or `index` when the file could not be written or read back) and
    ///   what happened.
    public static func keepSnapshot(of index: AddressIndex, at path: String, generation: String) -> (index: AddressIndex, how: String) {
        do {
            try index.writeSnapshot(to: path, generation: generation)
            try? FileManager.default.removeItem(atPath: changesPath(path))
            return ((try? AddressIndex.readSnapshot(path, generation: generation)) ?? index, "snapshot written")
        } catch {
            return (index, error.description)
        }
    }

    /// The imported addresses after a change file: what it made laid over `current` (`AddressChanges.add`), and the
    /// changes written beside the snapshot at `path`. With `rebuild`, a build of the whole begun in the background
    /// (`AddressRebuild.beginIfDue`) is laid under the files since it began once it is done. When no layer can be
    /// made (the layer would outgrow `AddressLayer.limit`, or the base cannot take one), the whole index is built again here from every address the store holds after the
    /// file, and its snapshot written (the addresses read from `store` unless the result carries them). `ahead` is
    /// the layer begun over `current` while the file's transaction ran (`AddressLayerAhead`), taken when it matches.
    public static func layAddresses(
        of result: OSMChangeResult,
        over current: AddressLayer,
        snapshot path: String?,
        store: any StoreOfRecord,
        rebuild: AddressRebuild? = nil,
        ahead: AddressLayerAhead? = nil
    ) throws(CatalogError) -> AddressLayer {
        // Without one of the engine's, a rebuild with no build in flight: the layer, or nil past its limit.
        if let layer = (rebuild ?? AddressRebuild()).lay(result, over: current, snapshot: path, ahead: ahead) { return layer }
        let all: AddressData
        if let carried = result.addresses { all = carried } else { all = try store.loadAddresses() }
        var index = AddressIndex(all.asStored)
        if let path { index = keepSnapshot(of: index, at: path, generation: result.addressGeneration).index }
        return AddressLayer(base: index, generation: result.addressGeneration)
    }
}
