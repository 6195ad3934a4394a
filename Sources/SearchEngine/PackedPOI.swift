import Records

/// One POI of an answer in the store's packed form: id, name, address, tags (a JSON object, keys sorted), category,
/// city and country as consecutive UTF-8 bytes in one array.
///
/// Category, city and country are interned in the store; they are copied in here (a few dozen bytes into the same
/// allocation) rather than held as three `String`s, whose reference counts every copy of a hit used to retain and
/// release — 12 atomic operations per result of an answer (issue 17, `poi bench wire`).
public struct PackedPOI: Sendable {
    public let bytes: [UInt8]
    // Lengths of the parts in order; -1 for an absent address, city or country.
    private let idLength: Int32
    private let nameLength: Int32
    private let addressLength: Int32
    private let tagsLength: Int32
    private let categoryLength: Int32
    private let cityLength: Int32
    private let countryLength: Int32
    public let latitude: Double
    public let longitude: Double

    /// The parts' lengths as `PackedPOI.Lengths` describes them, `bytes` holding them in that order.
    init(bytes: [UInt8], lengths: Lengths, latitude: Double, longitude: Double) {
        precondition(bytes.count == lengths.total, "packed bytes do not match their lengths")
        self.bytes = bytes
        idLength = Int32(lengths.id)
        nameLength = Int32(lengths.name)
        addressLength = lengths.address.map(Int32.init) ?? -1
        tagsLength = Int32(lengths.tags)
        categoryLength = Int32(lengths.category)
        cityLength = lengths.city.map(Int32.init) ?? -1
        countryLength = lengths.country.map(Int32.init) ?? -1
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The length of each part; nil for an absent one.
    struct Lengths {
        var id: Int
        var name: Int
        var address: Int?
        var tags: Int
        var category: Int
        var city: Int?
        var country: Int?

        var total: Int { id + name + (address ?? 0) + tags + category + (city ?? 0) + (country ?? 0) }
    }

    public var idRange: Range<Int> { 0..<Int(idLength) }
    public var nameRange: Range<Int> { idRange.upperBound..<idRange.upperBound + Int(nameLength) }
    public var addressRange: Range<Int>? { addressLength < 0 ? nil : nameRange.upperBound..<nameRange.upperBound + Int(addressLength) }
    private var addressEnd: Int { nameRange.upperBound + max(Int(addressLength), 0) }
    public var tagsRange: Range<Int> { addressEnd..<addressEnd + Int(tagsLength) }
    public var categoryRange: Range<Int> { tagsRange.upperBound..<tagsRange.upperBound + Int(categoryLength) }
    public var cityRange: Range<Int>? { cityLength < 0 ? nil : categoryRange.upperBound..<categoryRange.upperBound + Int(cityLength) }
    private var cityEnd: Int { categoryRange.upperBound + max(Int(cityLength), 0) }
    public var countryRange: Range<Int>? { countryLength < 0 ? nil : cityEnd..<cityEnd + Int(countryLength) }

    private func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }

    public var category: String { text(categoryRange) }
    public var city: String? { cityRange.map(text) }
    public var country: String? { countryRange.map(text) }

    public var record: POIRecord {
        POIRecord(
            id: text(idRange),
            name: text(nameRange),
            category: category,
            address: addressRange.map(text),
            city: city,
            country: country,
            lat: latitude,
            lon: longitude,
            tags: tagsRange.isEmpty ? [:] : TagsJSON.decode(text(tagsRange))
        )
    }
}
