import Catalog

/// One POI of an answer in the store's packed form: id, name, address and tags (a JSON object, keys sorted) as
/// consecutive UTF-8 bytes.
struct PackedPOI: Sendable {
    let bytes: [UInt8]
    let idLength: Int
    let nameLength: Int
    let addressLength: Int?
    let category: String
    let city: String?
    let country: String?
    let latitude: Double
    let longitude: Double

    var idRange: Range<Int> { 0..<idLength }
    var nameRange: Range<Int> { idLength..<idLength + nameLength }
    var addressRange: Range<Int>? { addressLength.map { idLength + nameLength..<idLength + nameLength + $0 } }
    var tagsRange: Range<Int> { idLength + nameLength + (addressLength ?? 0)..<bytes.count }

    var record: POIRecord {
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        return POIRecord(
            id: text(idRange), name: text(nameRange), category: category, address: addressRange.map(text), city: city, country: country,
            lat: latitude, lon: longitude, tags: tagsRange.isEmpty ? [:] : TagsJSON.decode(text(tagsRange))
        )
    }
}
