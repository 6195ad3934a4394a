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
        let parts: (base: AddressIndex, changes: AddressChanges)
        switch mappedParts(path, generation: generation) {
        case .success(let found): parts = found
        case .failure(let error): return .failure(error)
        }
        if parts.changes.isEmpty { return .success((AddressLayer(base: parts.base, generation: generation), "read from the snapshot")) }
        guard let layer = AddressLayer(base: parts.base, changes: parts.changes) else {
            return .failure(.stale(path: path, reason: "the changes beside it cannot lie over it (it is not in object order)"))
        }
        return .success((layer, "read from the snapshot, with the \(parts.changes.objects.count) objects change files made since laid over it"))
    }

    /// The base index read from the snapshot at `path` by `read` and the changes beside it that bring it to
    /// `generation` (none when the snapshot is of `generation` itself): what `mapped` lays (the whole `AddressIndex`),
    /// and what a writer that serves no query (`poi import x.osc.gz`, `poi replicate`) adds each file to
    /// (`addAddressChanges`, over an `AddressOutline`), leaving the laying to the server that maps them.
    static func mappedParts<Base: AddressBase>(
        _ path: String,
        generation: String,
        read: (_ path: String, _ generation: String) throws(SnapshotError) -> Base = AddressIndex.readSnapshot
    ) -> Result<(base: Base, changes: AddressChanges), SnapshotError> {
        if let changes = try? AddressChanges.read(changesPath(path)), changes.generation == generation, changes.baseGeneration != generation,
            let base = try? read(path, changes.baseGeneration)
        {
            // Changes are written only over a base in object order (`AddressChanges.canLie`): not scanned again.
            if !changes.isEmpty { base.knownInObjectOrder() }
            return .success((base, changes))
        }
        do {
            return .success((try read(path, generation), AddressChanges(baseGeneration: generation)))
        } catch {
            return .failure(error)
        }
    }

    /// The store's imported addresses as a writer of change files finds them (`mappedParts`): the base's outline read
    /// from its snapshot and the changes beside it. Nil: they would have to be built from the store (a store without
    /// addresses has none to add changes to).
    public static func mappedAddressChanges(_ store: any StoreOfRecord, snapshot path: String) -> (base: any AddressBase, changes: AddressChanges)? {
        guard store.keepsAddresses, let generation = try? store.addressGeneration() else { return nil }
        guard
            let found = try? mappedParts(
                path,
                generation: generation,
                read: { (path, generation) throws(SnapshotError) in
                    try AddressOutline(snapshot: path, generation: generation)
                }
            ).get()
        else { return nil }
        return (found.base, found.changes)
    }

    /// `changes` with a change file's addresses added (`AddressChanges.add`) and written beside the snapshot at
    /// `path`, where the next start lays them over the base (`mapped`). Nil, writing nothing, when the layer they
    /// would make may pass `limit` (`AddressLayer.limit` unless given; `AddressChanges.layerSizeBound`) or cannot lie over the base: the
    /// caller builds the whole index (`buildAddresses`).
    public static func addAddressChanges(
        of result: OSMChangeResult,
        to changes: AddressChanges,
        over base: some AddressBase,
        snapshot path: String?,
        limit: Int? = nil
    ) -> AddressChanges? {
        var changes = changes
        changes.add(changed: result.changedObjects, made: result.made, sea: result.sea, generation: result.addressGeneration, over: base)
        guard changes.canLie(over: base), changes.layerSizeBound(over: base) <= limit ?? AddressLayer.limit(over: base) else { return nil }
        if let path {
            let file = changesPath(path)
            do { try changes.write(to: file) } catch { try? FileManager.default.removeItem(atPath: file) }
        }
        return changes
    }

    /// The whole address index after a change file, built from every address the store holds after it (read from
    /// `store` unless the result carries them), and its snapshot written at `path` in place of the old with the
    /// changes beside it.
    public static func buildAddresses(
        of result: OSMChangeResult,
        snapshot path: String?,
        store: any StoreOfRecord
    ) throws(CatalogError) -> AddressIndex {
        let all: AddressData
        if let carried = result.addresses { all = carried } else { all = try store.loadAddresses() }
        let index = AddressIndex(all.asStored)
        guard let path else { return index }
        return keepSnapshot(of: index, at: path, generation: result.addressGeneration).index
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
        return AddressLayer(base: try buildAddresses(of: result, snapshot: path, store: store), generation: result.addressGeneration)
    }
}
