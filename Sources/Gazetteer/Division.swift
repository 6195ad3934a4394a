/// A Chinese administrative division (province, prefecture-level city or county-level district) from cpca, with
/// its centroid converted from AMap's GCJ-02 to WGS-84.
public struct Division: Sendable, Equatable {
    public enum Level: String, Sendable {
        case province, city, district
    }

    /// Six-digit administrative division code (GB/T 2260).
    public let adcode: Int
    /// Full name with suffix, e.g. 海淀区.
    public let name: String
    /// Name without its administrative suffix, e.g. 海淀.
    public let shortName: String
    /// Toneless pinyin of the short name, e.g. Haidian.
    public let pinyin: String
    public let level: Level
    /// Adcode of the parent division, or nil for provinces.
    public let parent: Int?
    public let latitude: Double
    public let longitude: Double

    /// Placeholder rows ("市辖区", the districts directly under a municipality) that name no place of their own.
    public var isPlaceholder: Bool { name == "市辖区" || name == "县" || name == "省直辖县级行政区划" }
}

/// A country of the gazetteer.
public struct Country: Sendable, Equatable {
    public let code: String
    public let name: String
    public let capital: String
}
