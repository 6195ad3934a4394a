import Foundation
import Gazetteer
import GeoCore
import Records
import SnapshotFile

extension SearchEngine {
    /// The store's address index: mapped from its snapshot at `path` when that was written for the store's current
    /// addresses (their generation), else built from the store and its snapshot written and mapped in its place (a
    /// failure to write is said in the answer, not thrown: the snapshot only saves time).
    /// - Returns: the index, and how it was made.
    public static func openAddresses(_ store: any StoreOfRecord, snapshot path: String?) throws(CatalogError) -> (index: AddressIndex, how: String) {
        guard store.keepsAddresses, let generation = try store.addressGeneration() else { return (.empty, "none kept by the store") }
        var reason = "no snapshot path"
        if let path {
            do { return (try AddressIndex.readSnapshot(path, generation: generation), "read from the snapshot") } catch { reason = error.description }
        }
        let index = AddressIndex(try store.loadAddresses())
        guard let path, !index.isEmpty else { return (index, "built from the database (\(index.isEmpty ? "no addresses" : reason))") }
        let kept = Self.keepSnapshot(of: index, at: path, generation: generation)
        return (kept.index, "built from the database (\(reason)); \(kept.how)")
    }

    /// Writes `index`'s snapshot and reads it back, so that its arrays are served from the file's mapping (clean,
    /// shared page cache) instead of the heap.
    /// - Returns: the index to serve (the mapped one, or `index` when the file could not be written or read back) and
    ///   what happened.
    static func keepSnapshot(of index: AddressIndex, at path: String, generation: String) -> (index: AddressIndex, how: String) {
        do {
            try index.writeSnapshot(to: path, generation: generation)
            return ((try? AddressIndex.readSnapshot(path, generation: generation)) ?? index, "snapshot written")
        } catch {
            return (index, error.description)
        }
    }
}
