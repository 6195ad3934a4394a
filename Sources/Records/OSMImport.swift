import GeoCore

/// Everything an OpenStreetMap extract gives: POIs, house addresses and street lines.
public struct OSMImport: Sendable {
    public var pois: [POIRecord] = []
    public var addresses = AddressData()
    public var report = OSMImportReport()
    /// The objects as read, for the stores that keep them to apply change files to (`OSMMirror`).
    public var mirror: OSMMirrorImport?

    public init() {}

    /// The id prefix of every POI an OpenStreetMap import makes (`osm-n…`, `osm-w…`, `osm-r…`).
    public static let idPrefix = "osm-"

    /// What makes a store's OpenStreetMap POIs this import's, in one transaction: every POI of `existing` (the ids of
    /// the POIs earlier imports made) that the extract no longer has deleted, then each of its POIs put. Both `poi
    /// import` (`OSMImporter.write`) and an import into a running server (`SearchEngine.applyOSMImport`) write it.
    /// - Returns: the changes, and how many of them are deletions.
    public func changes(replacing existing: [String]) -> (changes: [StoreChange], removed: Int) {
        let kept = Set(pois.map(\.id))
        var changes: [StoreChange] = existing.filter { !kept.contains($0) }.map { .delete(.poi, id: $0) }
        let removed = changes.count
        changes.reserveCapacity(removed + pois.count)
        for poi in pois { changes.append(.put(.poi(poi))) }
        return (changes, removed)
    }

    /// Stores the extract's mirror in place of an earlier import's (none: the earlier one goes, so that change files
    /// are refused rather than misapplied) and lets go of it, encoded on a thread of its own while it is written. The
    /// first step of both `poi import` (`OSMImporter.write`) and an import into a running server
    /// (`SearchEngine.applyOSMImport`): the node locations and way lists are the import's largest part.
    public mutating func writeMirror(to store: any StoreOfRecord) throws(CatalogError) {
        let encoded = mirror.map { EncodedOSMMirror($0) } ?? .none
        defer { encoded.cancel() }
        mirror = nil
        try store.replaceOSMMirror(encoded)
    }
}

/// What reading an extract found.
public struct OSMImportReport: Sendable {
    public var nodes = 0, ways = 0, relations = 0
    public var pois = 0
    public var addresses = 0
    public var streets = 0
    public var interpolations = 0
    /// Water (the sea too) and buildings drawn by the `base` tiles.
    public var areas = 0
    /// POIs of earlier imports that this extract no longer has (removed when written).
    public var removed = 0
    /// Objects skipped or imported incompletely, with why.
    public var problems = ImportProblems()
    public var seconds = 0.0
    /// Bytes per node of the node-location store ways are assembled from.
    public var bytesPerNode = 0

    public init() {}
}

/// What applying a change file did.
public struct OSMChangeReport: Sendable {
    /// The objects the file creates, modifies or deletes.
    public var nodes = 0, ways = 0, relations = 0
    /// Objects converted again because something they are built from changed (a way whose node moved).
    public var rebuilt = 0
    public var poisPut = 0, poisRemoved = 0
    public var houses = 0
    public var streets = 0
    /// The stored houses' blocks encoded again by the change (the others kept as they were), of all after it.
    public var houseBlocks = (encoded: 0, of: 0)
    public var problems = ImportProblems()
    public var seconds = 0.0
    /// The data's OSM timestamp and replication sequence after the change.
    public var timestamp: String?
    public var sequence: Int?

    public init() {}
}

/// A change applied: what the store committed, for a server to apply to its indexes.
public struct OSMChangeResult: Sendable {
    /// The POIs put and deleted, as committed.
    public var changes: [StoreChange] = []
    /// Every house, street line and area after the change when the change was also written to a shared store
    /// (nil otherwise: reading them all back would cost what the change itself does not; `StoreOfRecord.loadAddresses`
    /// has them), and their new generation.
    public var addresses: AddressData?
    public var addressGeneration = ""
    /// The objects the file converted again ("osm-w12"), what they make now (houses, lines, areas), and the sea when
    /// the file made it again: what the address index's layer of changes takes (`AddressChanges.add`).
    public var changedObjects: Set<String> = []
    public var made = AddressData()
    public var sea: [MapArea]?
    public var report = OSMChangeReport()
    /// The store's change sequence just before and after the transaction.
    public var sequences: (before: ChangeSequence, after: ChangeSequence)?

    public init() {}
}
