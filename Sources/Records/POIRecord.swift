import BundledData

/// A place of interest (docs/ARCHITECTURE.md, "Records"). Positions are WGS-84.
public struct POIRecord: Codable, Sendable, Equatable {
    public var id: String
    public var kind: String = "poi"
    public var name: String
    /// Lowercase dot path, e.g. `food.cafe`.
    public var category: String
    public var address: String?
    public var city: String?
    /// ISO 3166-1 alpha-2.
    public var country: String?
    public var lat: Double
    public var lon: Double
    public var tags: [String: String]

    public init(
        id: String,
        name: String,
        category: String,
        address: String? = nil,
        city: String? = nil,
        country: String? = nil,
        lat: Double,
        lon: Double,
        tags: [String: String] = [:]
    ) {
        self.id = id
        self.name = name
        self.category = category
        self.address = address
        self.city = city
        self.country = country
        self.lat = lat
        self.lon = lon
        self.tags = tags
    }

    /// The record as one line of JSON, keys in the order of docs/ARCHITECTURE.md ("Records") and tags sorted, so
    /// output is byte-for-byte reproducible. Much faster than JSONEncoder for bulk output.
    public func jsonLine(into out: inout [UInt8]) {
        var json = JSONWriter(buffer: out)
        json.beginObject()
        json.key("id")
        json.string(id)
        json.key("kind")
        json.string(kind)
        json.key("name")
        json.string(name)
        json.key("category")
        json.string(category)
        if let address {
            json.key("address")
            json.string(address)
        }
        if let city {
            json.key("city")
            json.string(city)
        }
        if let country {
            json.key("country")
            json.string(country)
        }
        json.field("lat", lat)
        json.field("lon", lon)
        json.key("tags")
        json.beginObject()
        for key in tags.keys.sorted() {
            json.key(text: key)
            json.string(tags[key]!)
        }
        json.endObject()
        json.endObject()
        out = json.buffer
        out.append(UInt8(ascii: "\n"))
    }
}
