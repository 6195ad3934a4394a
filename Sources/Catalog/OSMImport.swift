import GeoCore

/// Everything an OpenStreetMap extract gives: POIs, house addresses and street lines.
public struct OSMImport: Sendable {
    public var pois: [POIRecord] = []
    public var addresses = AddressData()
    public var report = OSMImportReport()

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
}

/// What reading an extract found.
public struct OSMImportReport: Sendable {
    public var nodes = 0
    public var ways = 0
    public var relations = 0
    public var pois = 0
    public var addresses = 0
    public var streets = 0
    public var interpolations = 0
    /// POIs of earlier imports that this extract no longer has (removed when written).
    public var removed = 0
    /// Objects skipped or imported incompletely, with why (the first 1 000), and how many in all.
    public var problems: [ImportProblem] = []
    public var problemCount = 0
    public var seconds = 0.0
    /// Bytes per node of the node-location store ways are assembled from.
    public var bytesPerNode = 0

    public init() {}
}
