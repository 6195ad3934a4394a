/// A populated place of the gazetteer (GeoNames), or a Chinese administrative division.
public struct Place: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case city
        case province
        case prefecture = "city_division"
        case district
    }

    /// GeoNames id, or the 6-digit adcode for Chinese divisions.
    public let id: Int
    public let name: String
    /// `name` folded to ASCII.
    public let asciiName: String
    /// Alternate names kept for search: Latin-script variants, Chinese names, a few local-script names.
    public let alternateNames: [String]
    public let latitude: Double
    public let longitude: Double
    /// ISO 3166-1 alpha-2.
    public let country: String
    public let admin1: String
    public let admin2: String
    public let population: Int
    public let kind: Kind

    /// The first Chinese (Han) name among the name and alternates, if any.
    public var chineseName: String? { ([name] + alternateNames).first(where: Place.isChinese) }

    /// Whether a name has a Han character.
    static func isChinese(_ text: String) -> Bool { text.unicodeScalars.contains { (0x4E00...0x9FFF).contains($0.value) } }
}
