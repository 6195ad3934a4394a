/// A user-submitted location (docs/ARCHITECTURE.md, "Records"). Positions are WGS-84; timestamps ISO 8601 UTC with milliseconds,
/// set by the server.
public struct PinRecord: Codable, Sendable, Equatable {
    public var id: String
    public var kind: String = "pin"
    public var uniqueKey: String
    public var firstName: String
    public var lastName: String
    public var mapString: String
    public var mediaURL: String
    public var lat: Double
    public var lon: Double
    public var createdAt: String
    public var updatedAt: String
    /// The user who placed the pin (their token's `sub`); nil when a key or an open server wrote it. Only they may
    /// move or delete it (and keys with the pins:write scope).
    public var owner: String?

    public init(
        id: String,
        uniqueKey: String,
        firstName: String,
        lastName: String,
        mapString: String,
        mediaURL: String,
        lat: Double,
        lon: Double,
        createdAt: String,
        updatedAt: String,
        owner: String? = nil
    ) {
        self.id = id
        self.uniqueKey = uniqueKey
        self.firstName = firstName
        self.lastName = lastName
        self.mapString = mapString
        self.mediaURL = mediaURL
        self.lat = lat
        self.lon = lon
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.owner = owner
    }
}
