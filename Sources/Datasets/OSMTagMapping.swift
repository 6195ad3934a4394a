import Foundation
import GeoCore
import Records

/// OpenStreetMap tag → category, from the `osm` lists of data/categories.json (`amenity=cafe`, `shop=*`).
public struct OSMTagMapping: Sendable {
    /// Keys looked at, in this order: the first that maps decides (a shop that is also a building is a shop).
    public static let keys = [
        "amenity", "shop", "tourism", "leisure", "office", "railway", "public_transport", "station", "highway", "historic", "aeroway",
    ]
    /// Tags a POI keeps (besides its name, category and address).
    public static let keptTags = [
        "opening_hours", "website", "phone", "wheelchair", "cuisine", "brand", "operator", "ref", "addr:postcode", "name:fi", "name:sv",
        "name:en", "name:zh", "alt_name", "old_name", "official_name", "short_name",
    ]

    var exact: [String: String] = [:]
    var wildcard: [String: String] = [:]

    public init(exact: [String: String], wildcard: [String: String]) {
        self.exact = exact
        self.wildcard = wildcard
    }

    /// Reads the mapping from `categories.json` in `directory`.
    public static func load(directory: String) throws(ImportError) -> OSMTagMapping {
        let path = directory + "/categories.json"
        guard let data = FileManager.default.contents(atPath: path),
            let root = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let categories = root["categories"] as? [[String: Any]]
        else { throw .cannotRead("\(path) (not the categories file: an object with a \"categories\" array)") }
        var mapping = OSMTagMapping(exact: [:], wildcard: [:])
        for category in categories {
            guard let id = category["id"] as? String, let tags = category["osm"] as? [String] else { continue }
            for tag in tags {
                let parts = tag.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { continue }
                if parts[1] == "*" {
                    mapping.wildcard[parts[0]] = mapping.wildcard[parts[0]] ?? id
                } else {
                    mapping.exact[tag] = mapping.exact[tag] ?? id
                }
            }
        }
        return mapping
    }

    /// The category of an object with these tags, or nil when none of its tags maps.
    public func category(_ value: (String) -> String?) -> String? {
        for key in Self.keys {
            guard let v = value(key) else { continue }
            if let id = exact[key + "=" + v] ?? wildcard[key] { return id }
        }
        return nil
    }
}
