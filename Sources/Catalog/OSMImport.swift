import GeoCore

/// Everything an OpenStreetMap extract gives: POIs, house addresses and street lines.
public struct OSMImport: Sendable {
    public var pois: [POIRecord] = []
    public var addresses = AddressData()
    public var report = OSMImportReport()

    public init() {}
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
