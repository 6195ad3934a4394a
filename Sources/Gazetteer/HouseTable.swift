import GeoCore
import Records
import SnapshotFile

/// The houses of an address index as columns: ids in one blob; what a house shares with its neighbours — street,
/// place, unit, postcode and city — as one number of a distinct combination of them (its context), and its house
/// number as a number of a distinct text, both into tables of distinct texts; positions as two arrays of doubles.
///
/// About 45 bytes a house instead of an `AddressPoint`'s 128 and its strings on the heap, and every column a flat
/// array, so that a snapshot serves them from its mapping (`AddressIndex.readSnapshot`) without decoding 2 million
/// houses at start-up. A house is made into an `AddressPoint` only when it is answered.
struct HouseTable: Sendable {
    var ids = PlaceTable.StringColumn()
    /// The distinct texts; a reference 0 is none, n is `texts.string(n - 1)`.
    var texts = PlaceTable.StringColumn()
    /// Each house's context and house number (a text reference).
    var contexts = FlatArray<UInt32>()
    var numbers = FlatArray<UInt32>()
    /// The contexts' columns (text references).
    var contextStreets = FlatArray<UInt32>()
    var contextPlaces = FlatArray<UInt32>()
    var contextUnits = FlatArray<UInt32>()
    var contextPostcodes = FlatArray<UInt32>()
    var contextCities = FlatArray<UInt32>()
    var latitudes = FlatArray<Double>()
    var longitudes = FlatArray<Double>()

    init() {}

    init(_ houses: HouseList) { self.init(count: houses.count, idBytes: houses.idBytes) { body in houses.forEachBlock(body) } }

    init(_ houses: [AddressPoint]) {
        self.init(count: houses.count, idBytes: houses.reduce(0) { $0 + $1.id.utf8.count }) { body in body(houses) }
    }

    /// - Parameters:
    ///   - count: the houses;
    ///   - idBytes: the UTF-8 bytes of all their ids;
    ///   - forEachBlock: hands the houses to its body in order, a block at a time.
    private init(count n: Int, idBytes idByteCount: Int, forEachBlock: (([AddressPoint]) -> Void) -> Void) {
        // The columns are made at their final size and filled in place: made as arrays and copied, every column's
        // pages were fresh memory twice (a fault and a zeroed page each, a fifth of building the index on import).
        var idBytes = FlatArray<UInt8>(repeating: 0, count: idByteCount)
        var idEnds = FlatArray<UInt64>(repeating: 0, count: n)
        var contexts = FlatArray<UInt32>(repeating: 0, count: n)
        var numbers = FlatArray<UInt32>(repeating: 0, count: n)
        var latitudes = FlatArray<Double>(repeating: 0, count: n)
        var longitudes = FlatArray<Double>(repeating: 0, count: n)
        var idEnd = 0
        var numbering = TextNumbering()
        // Neighbouring houses of an extract usually share their street, postcode and city: the last text of each
        // field is remembered, which saves most lookups.
        func reference(_ text: String?, _ recent: inout TextNumbering.Recent) -> UInt32 {
            guard let text else { return 0 }
            return numbering.number(text, recent: &recent)
        }
        var lastStreet = TextNumbering.Recent()
        var lastPlace = TextNumbering.Recent()
        var lastNumber = TextNumbering.Recent()
        var lastUnit = TextNumbering.Recent()
        var lastPostcode = TextNumbering.Recent()
        var lastCity = TextNumbering.Recent()
        var contextNumbers = ContextNumbering()
        var i = 0
        // A block of houses decoded at a time; by index within it, so that each field is read where it lies, not
        // the whole house copied.
        forEachBlock { block in
            idBytes.withUnsafeMutableBufferPointer { idBytes in
                for k in block.indices {
                    var id = block[k].id
                    id.withUTF8 { utf8 in
                        _ = UnsafeMutableBufferPointer(rebasing: idBytes[idEnd..<(idEnd + utf8.count)]).initialize(fromContentsOf: utf8)
                        idEnd += utf8.count
                    }
                    idEnds[i + k] = UInt64(idEnd)
                }
            }
            for k in block.indices {
                let context = ContextNumbering.Context(
                    street: reference(block[k].street, &lastStreet),
                    place: reference(block[k].place, &lastPlace),
                    unit: reference(block[k].unit, &lastUnit),
                    postcode: reference(block[k].postcode, &lastPostcode),
                    city: reference(block[k].city, &lastCity)
                )
                contexts[i + k] = contextNumbers.number(context)
                numbers[i + k] = reference(block[k].housenumber, &lastNumber)
                latitudes[i + k] = block[k].latitude
                longitudes[i + k] = block[k].longitude
            }
            i += block.count
        }
        self.init(
            ids: PlaceTable.StringColumn(ends: idEnds, blob: idBytes),
            texts: numbering,
            contexts: contexts,
            numbers: numbers,
            contextNumbers: contextNumbers,
            latitudes: latitudes,
            longitudes: longitudes
        )
    }

    /// The columns made, with the texts and contexts as numbered.
    init(
        ids: PlaceTable.StringColumn,
        texts: TextNumbering,
        contexts: FlatArray<UInt32>,
        numbers: FlatArray<UInt32>,
        contextNumbers: ContextNumbering,
        latitudes: FlatArray<Double>,
        longitudes: FlatArray<Double>
    ) {
        self.ids = ids
        self.texts = PlaceTable.StringColumn(texts.texts)
        self.contexts = contexts
        self.numbers = numbers
        contextStreets = FlatArray(contextNumbers.list.map(\.street))
        contextPlaces = FlatArray(contextNumbers.list.map(\.place))
        contextUnits = FlatArray(contextNumbers.list.map(\.unit))
        contextPostcodes = FlatArray(contextNumbers.list.map(\.postcode))
        contextCities = FlatArray(contextNumbers.list.map(\.city))
        self.latitudes = latitudes
        self.longitudes = longitudes
    }

    var count: Int { latitudes.count }

    /// The house as a record.
    subscript(i: Int) -> AddressPoint {
        let c = Int(contexts[i])
        return AddressPoint(
            id: id(i),
            street: text(contextStreets[c]),
            place: text(contextPlaces[c]),
            housenumber: housenumber(i),
            unit: text(contextUnits[c]),
            postcode: text(contextPostcodes[c]),
            city: text(contextCities[c]),
            latitude: latitudes[i],
            longitude: longitudes[i]
        )
    }

    /// Text references of a house's fields (0: none).
    func streetText(_ i: Int) -> UInt32 { contextStreets[Int(contexts[i])] }
    func placeText(_ i: Int) -> UInt32 { contextPlaces[Int(contexts[i])] }
    func postcodeText(_ i: Int) -> UInt32 { contextPostcodes[Int(contexts[i])] }
    func cityText(_ i: Int) -> UInt32 { contextCities[Int(contexts[i])] }

    func id(_ i: Int) -> String { ids.string(i) }
    func housenumber(_ i: Int) -> String { text(numbers[i]) ?? "" }
    func postcode(_ i: Int) -> String? { text(postcodeText(i)) }
    func position(_ i: Int) -> Coordinate2 { Coordinate2(latitudes[i], longitudes[i]) }

    /// Whether the house is an OpenStreetMap node (`osm-n…`) rather than a building's way or relation.
    func isNode(_ i: Int) -> Bool {
        let start = i == 0 ? 0 : Int(ids.ends[i - 1])
        let end = Int(ids.ends[i])
        guard end - start >= Self.nodePrefix.count else { return false }
        for k in Self.nodePrefix.indices where ids.blob[start + k] != Self.nodePrefix[k] { return false }
        return true
    }

    static let nodePrefix = Array("osm-n".utf8)

    /// Whether the house's postcode is `code`.
    func hasPostcode(_ i: Int, _ code: String) -> Bool {
        let reference = postcodeText(i)
        return reference != 0 && texts.equals(Int(reference) - 1, code)
    }

    func text(_ reference: UInt32) -> String? { reference == 0 ? nil : texts.string(Int(reference) - 1) }

    /// Every column of the same length, every reference to a context or text that exists, the blobs' offsets in
    /// order.
    var isConsistent: Bool {
        let n = count
        let contextColumns = [contextStreets, contextPlaces, contextUnits, contextPostcodes, contextCities]
        let k = contextStreets.count
        guard ids.count == n, longitudes.count == n, contexts.count == n, numbers.count == n, contextColumns.allSatisfy({ $0.count == k }),
            ids.isConsistent, texts.isConsistent
        else { return false }
        let limit = UInt32(texts.count)
        return contexts.allSatisfy { Int($0) < k } && (contextColumns + [numbers]).allSatisfy { column in column.allSatisfy { $0 <= limit } }
    }

    func write(to file: SnapshotWriter) throws(SnapshotError) {
        for column in [ids, texts] {
            try file.write(column.ends)
            try file.write(column.blob)
        }
        for column in [contexts, numbers, contextStreets, contextPlaces, contextUnits, contextPostcodes, contextCities] { try file.write(column) }
        try file.write(latitudes)
        try file.write(longitudes)
    }

    init(snapshot file: SnapshotReader) throws(SnapshotError) {
        ids = PlaceTable.StringColumn(ends: try file.readFlat(), blob: try file.readFlat())
        texts = PlaceTable.StringColumn(ends: try file.readFlat(), blob: try file.readFlat())
        contexts = try file.readFlat()
        numbers = try file.readFlat()
        contextStreets = try file.readFlat()
        contextPlaces = try file.readFlat()
        contextUnits = try file.readFlat()
        contextPostcodes = try file.readFlat()
        contextCities = try file.readFlat()
        latitudes = try file.readFlat()
        longitudes = try file.readFlat()
        guard isConsistent else { throw .corrupt(path: file.path, reason: "house columns of different lengths or out of range") }
    }
}
