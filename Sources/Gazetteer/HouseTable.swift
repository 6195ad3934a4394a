import GeoCore
import SnapshotFile

/// The houses of an address index as columns: ids in one blob, the texts a house shares with its neighbours (street,
/// place, house number, unit, postcode, city) once each in a table of distinct texts that the houses refer to by
/// number, and positions as two arrays of doubles.
///
/// About 60 bytes a house instead of an `AddressPoint`'s 128 and its strings on the heap, and every column a flat
/// array, so that a snapshot serves them from its mapping (`AddressIndex.readSnapshot`) without decoding 2 million
/// houses at start-up. A house is made into an `AddressPoint` only when it is answered.
struct HouseTable: Sendable {
    var ids = PlaceTable.StringColumn()
    /// The distinct texts; a house's reference 0 is none, n is `texts.string(n - 1)`.
    var texts = PlaceTable.StringColumn()
    var streets = FlatArray<UInt32>()
    var places = FlatArray<UInt32>()
    var numbers = FlatArray<UInt32>()
    var units = FlatArray<UInt32>()
    var postcodes = FlatArray<UInt32>()
    var cities = FlatArray<UInt32>()
    var latitudes = FlatArray<Double>()
    var longitudes = FlatArray<Double>()

    init() {}

    init(_ houses: [AddressPoint]) {
        var ids: [String] = []
        ids.reserveCapacity(houses.count)
        var texts: [String] = []
        var numbering: [String: UInt32] = [:]
        // Neighbouring houses of an extract usually share their street, postcode and city: the last text of each
        // column is remembered, which saves most lookups.
        var last = [(String, UInt32)?](repeating: nil, count: 6)
        func reference(_ text: String?, _ column: Int) -> UInt32 {
            guard let text else { return 0 }
            if let (previous, number) = last[column], previous == text { return number }
            let number: UInt32
            if let known = numbering[text] {
                number = known
            } else {
                texts.append(text)
                number = UInt32(texts.count)
                numbering[text] = number
            }
            last[column] = (text, number)
            return number
        }
        var columns = [[UInt32]](repeating: [], count: 6)
        for c in columns.indices { columns[c].reserveCapacity(houses.count) }
        var latitudes: [Double] = []
        var longitudes: [Double] = []
        latitudes.reserveCapacity(houses.count)
        longitudes.reserveCapacity(houses.count)
        for house in houses {
            ids.append(house.id)
            columns[0].append(reference(house.street, 0))
            columns[1].append(reference(house.place, 1))
            columns[2].append(reference(house.housenumber, 2))
            columns[3].append(reference(house.unit, 3))
            columns[4].append(reference(house.postcode, 4))
            columns[5].append(reference(house.city, 5))
            latitudes.append(house.latitude)
            longitudes.append(house.longitude)
        }
        self.ids = PlaceTable.StringColumn(ids)
        self.texts = PlaceTable.StringColumn(texts)
        (streets, places, numbers) = (FlatArray(columns[0]), FlatArray(columns[1]), FlatArray(columns[2]))
        (units, postcodes, cities) = (FlatArray(columns[3]), FlatArray(columns[4]), FlatArray(columns[5]))
        self.latitudes = FlatArray(latitudes)
        self.longitudes = FlatArray(longitudes)
    }

    var count: Int { latitudes.count }

    /// The house as a record.
    subscript(i: Int) -> AddressPoint {
        AddressPoint(
            id: id(i),
            street: text(streets[i]),
            place: text(places[i]),
            housenumber: housenumber(i),
            unit: text(units[i]),
            postcode: postcode(i),
            city: text(cities[i]),
            latitude: latitudes[i],
            longitude: longitudes[i]
        )
    }

    func id(_ i: Int) -> String { ids.string(i) }
    func housenumber(_ i: Int) -> String { text(numbers[i]) ?? "" }
    func postcode(_ i: Int) -> String? { text(postcodes[i]) }
    func streetOrPlace(_ i: Int) -> String? { text(streets[i]) ?? text(places[i]) }
    func position(_ i: Int) -> Coordinate2 { Coordinate2(latitudes[i], longitudes[i]) }

    /// Whether the house is an OpenStreetMap node (`osm-n…`) rather than a building's way or relation.
    func isNode(_ i: Int) -> Bool {
        let start = i == 0 ? 0 : Int(ids.ends[i - 1])
        let end = Int(ids.ends[i])
        let prefix = Array("osm-n".utf8)
        guard end - start >= prefix.count else { return false }
        for k in prefix.indices where ids.blob[start + k] != prefix[k] { return false }
        return true
    }

    /// Whether the house's postcode is `code`.
    func hasPostcode(_ i: Int, _ code: String) -> Bool {
        let reference = postcodes[i]
        return reference != 0 && texts.equals(Int(reference) - 1, code)
    }

    func text(_ reference: UInt32) -> String? { reference == 0 ? nil : texts.string(Int(reference) - 1) }

    /// Every column of the same length, every reference to a text that exists, the blobs' offsets in order.
    var isConsistent: Bool {
        let n = count
        let references = [streets, places, numbers, units, postcodes, cities]
        guard ids.count == n, longitudes.count == n, references.allSatisfy({ $0.count == n }), ids.isConsistent, texts.isConsistent else {
            return false
        }
        let limit = UInt32(texts.count)
        return references.allSatisfy { column in column.allSatisfy { $0 <= limit } }
    }

    func write(to file: SnapshotWriter) throws(SnapshotError) {
        for column in [ids, texts] {
            try file.write(column.ends)
            try file.write(column.blob)
        }
        for column in [streets, places, numbers, units, postcodes, cities] { try file.write(column) }
        try file.write(latitudes)
        try file.write(longitudes)
    }

    init(snapshot file: SnapshotReader) throws(SnapshotError) {
        ids = PlaceTable.StringColumn(ends: try file.readFlat(), blob: try file.readFlat())
        texts = PlaceTable.StringColumn(ends: try file.readFlat(), blob: try file.readFlat())
        streets = try file.readFlat()
        places = try file.readFlat()
        numbers = try file.readFlat()
        units = try file.readFlat()
        postcodes = try file.readFlat()
        cities = try file.readFlat()
        latitudes = try file.readFlat()
        longitudes = try file.readFlat()
        guard isConsistent else { throw .corrupt(path: file.path, reason: "house columns of different lengths or out of range") }
    }
}
