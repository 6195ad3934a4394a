/// One `key=value` tag of an OpenStreetMap object.
public struct OSMTag: Sendable, Equatable {
    public let key: String
    public let value: String

    public init(key: String, value: String) { (self.key, self.value) = (key, value) }
}

/// A node: a point with tags. Coordinates are WGS-84 degrees at OSM's precision (1e-7° after granularity).
public struct OSMNode: Sendable, Equatable {
    public let id: Int64
    public let latitude: Double
    public let longitude: Double
    public let tags: [OSMTag]

    public init(id: Int64, latitude: Double, longitude: Double, tags: [OSMTag]) {
        (self.id, self.latitude, self.longitude, self.tags) = (id, latitude, longitude, tags)
    }
}

/// A way: an ordered list of node ids (closed when the first equals the last) with tags.
public struct OSMWay: Sendable, Equatable {
    public let id: Int64
    public let refs: [Int64]
    public let tags: [OSMTag]

    public init(id: Int64, refs: [Int64], tags: [OSMTag]) { (self.id, self.refs, self.tags) = (id, refs, tags) }

    public var isClosed: Bool { refs.count >= 4 && refs.first == refs.last }
}

/// A relation: typed, roled members with tags.
public struct OSMRelation: Sendable, Equatable {
    public enum MemberType: Int, Sendable {
        case node = 0
        case way = 1
        case relation = 2
    }

    public struct Member: Sendable, Equatable {
        public let type: MemberType
        public let ref: Int64
        public let role: String

        public init(type: MemberType, ref: Int64, role: String) { (self.type, self.ref, self.role) = (type, ref, role) }
    }

    public let id: Int64
    public let members: [Member]
    public let tags: [OSMTag]

    public init(id: Int64, members: [Member], tags: [OSMTag]) { (self.id, self.members, self.tags) = (id, members, tags) }
}

extension Array where Element == OSMTag {
    /// The value of `key`, if the object has it (linear: objects carry a handful of tags).
    public subscript(key: String) -> String? {
        // By index: `for tag in self` copied every tag (two strings retained and released) to compare its key.
        for i in indices where self[i].key == key { return self[i].value }
        return nil
    }
}

/// The contents of one primitive block, in file order, with where the block starts in the file.
public struct OSMBlock: Sendable, Equatable {
    /// Byte offset of the block's header in the file (what errors name).
    public let offset: Int
    public var nodes: [OSMNode] = []
    public var ways: [OSMWay] = []
    public var relations: [OSMRelation] = []
}

/// What the file's header block says.
public struct OSMHeader: Sendable, Equatable {
    public var requiredFeatures: [String] = []
    public var optionalFeatures: [String] = []
    public var writingProgram: String?
    public var source: String?
    /// west, south, east, north in degrees, when the file declares one.
    public var bbox: (west: Double, south: Double, east: Double, north: Double)?
    public var replicationTimestamp: Int64?
    /// The replication sequence the extract was cut at, and the feed it follows (`osmosis_replication_*`).
    public var replicationSequence: Int64?
    public var replicationBaseURL: String?

    public static func == (a: OSMHeader, b: OSMHeader) -> Bool {
        a.requiredFeatures == b.requiredFeatures && a.optionalFeatures == b.optionalFeatures && a.writingProgram == b.writingProgram
            && a.source == b.source && a.replicationTimestamp == b.replicationTimestamp && a.replicationSequence == b.replicationSequence
            && a.replicationBaseURL == b.replicationBaseURL
            && a.bbox.map { [$0.west, $0.south, $0.east, $0.north] } == b.bbox.map { [$0.west, $0.south, $0.east, $0.north] }
    }
}
