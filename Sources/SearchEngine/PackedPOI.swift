import Catalog

/// One POI of an answer in the store's packed form: id, name, address and tags (a JSON object, keys sorted) as
/// consecutive UTF-8 bytes.
public struct PackedPOI: Sendable {
    public let bytes: [UInt8]
    public let idLength: Int
    public let nameLength: Int
    public let addressLength: Int?
    public let category: String
    public let city: String?
    public let country: String?
    public let latitude: Double
    public let longitude: Double

    public var idRange: Range<Int> { 0..<idLength }
    public var nameRange: Range<Int> { idLength..<idLength + nameLength }
    public var addressRange: Range<Int>? { addressLength.map { idLength + nameLength..<idLength + nameLength + $0 } }
    public var tagsRange: Range<Int> { idLength + nameLength + (addressLength ?? 0)..<bytes.count }

    public var record: POIRecord {
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        return POIRecord(
            id: text(idRange), name: text(nameRange), category: category, address: addressRange.map(text), city: city, country: country,
            lat: latitude, lon: longitude, tags: tagsRange.isEmpty ? [:] : TagsJSON.decode(text(tagsRange))
        )
    }
}
