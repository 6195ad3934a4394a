import GeoCore
import Records
import SnapshotFile

extension HouseTable {
    /// A row of the table `init(_:of:records:)` makes: a row of another table, or a record.
    enum Row: Sendable {
        case row(Int32)
        case record(Int32)
    }

    /// The rows of `source` and the `records`, in the order of `rows`: the table `init(_ houses: [AddressPoint])`
    /// makes of them as records, column for column, without making each row of `source` a record first. An address
    /// layer takes most of its houses whole from the base (the other members of the streets a change file reaches), so
    /// each file's layer copied them out as records and numbered their texts again one by one (RESULTS.md, "An address
    /// layer's houses copied as columns"); here a row's context and house number are numbered once per distinct one of
    /// `source`, its id's bytes and position copied.
    init(_ rows: [Row], of source: HouseTable, records: [AddressPoint]) {
        let n = rows.count
        var idByteCount = 0
        for row in rows {
            switch row {
            case .row(let i): idByteCount += source.idRange(Int(i)).count
            case .record(let r): idByteCount += records[Int(r)].id.utf8.count
            }
        }
        var idBytes = FlatArray<UInt8>(repeating: 0, count: idByteCount)
        var idEnds = FlatArray<UInt64>(repeating: 0, count: n)
        var contexts = FlatArray<UInt32>(repeating: 0, count: n)
        var numbers = FlatArray<UInt32>(repeating: 0, count: n)
        var latitudes = FlatArray<Double>(repeating: 0, count: n)
        var longitudes = FlatArray<Double>(repeating: 0, count: n)
        var numbering = TextNumbering()
        var contextNumbers = ContextNumbering()
        // `source`'s texts and contexts as numbered here, by their number there (`unmet`: not met yet). Texts are
        // numbered in the order the records' path meets them — a context's five fields, then the house number — so the
        // texts' numbers are too.
        let unmet = UInt32.max
        var sourceTexts = [UInt32](repeating: unmet, count: source.texts.count + 1)
        sourceTexts[0] = 0
        var sourceContexts = [UInt32](repeating: unmet, count: source.contextStreets.count)
        func text(ofSource reference: UInt32) -> UInt32 {
            let known = sourceTexts[Int(reference)]
            if known != unmet { return known }
            let number = numbering.number(source.texts.string(Int(reference) - 1))
            sourceTexts[Int(reference)] = number
            return number
        }
        func reference(_ text: String?) -> UInt32 { text.map { numbering.number($0) } ?? 0 }
        var idEnd = 0
        idBytes.withUnsafeMutableBufferPointer { idBytes in
            source.ids.blob.withUnsafeBufferPointer { sourceBytes in
                for (k, row) in rows.enumerated() {
                    switch row {
                    case .row(let i):
                        let i = Int(i)
                        let range = source.idRange(i)
                        _ = UnsafeMutableBufferPointer(rebasing: idBytes[idEnd..<(idEnd + range.count)])
                            .initialize(fromContentsOf: UnsafeBufferPointer(rebasing: sourceBytes[range]))
                        idEnd += range.count
                        let c = Int(source.contexts[i])
                        if sourceContexts[c] != unmet {
                            contexts[k] = sourceContexts[c]
                        } else {
                            let context = ContextNumbering.Context(
                                street: text(ofSource: source.contextStreets[c]),
                                place: text(ofSource: source.contextPlaces[c]),
                                unit: text(ofSource: source.contextUnits[c]),
                                postcode: text(ofSource: source.contextPostcodes[c]),
                                city: text(ofSource: source.contextCities[c])
                            )
                            contexts[k] = contextNumbers.number(context)
                            sourceContexts[c] = contexts[k]
                        }
                        numbers[k] = text(ofSource: source.numbers[i])
                        (latitudes[k], longitudes[k]) = (source.latitudes[i], source.longitudes[i])
                    case .record(let r):
                        let house = records[Int(r)]
                        var id = house.id
                        id.withUTF8 { utf8 in
                            _ = UnsafeMutableBufferPointer(rebasing: idBytes[idEnd..<(idEnd + utf8.count)]).initialize(fromContentsOf: utf8)
                            idEnd += utf8.count
                        }
                        let context = ContextNumbering.Context(
                            street: reference(house.street),
                            place: reference(house.place),
                            unit: reference(house.unit),
                            postcode: reference(house.postcode),
                            city: reference(house.city)
                        )
                        contexts[k] = contextNumbers.number(context)
                        numbers[k] = reference(house.housenumber)
                        (latitudes[k], longitudes[k]) = (house.latitude, house.longitude)
                    }
                    idEnds[k] = UInt64(idEnd)
                }
            }
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

    /// The bytes of house `i`'s id in `ids.blob`.
    func idRange(_ i: Int) -> Range<Int> { (i == 0 ? 0 : Int(ids.ends[i - 1]))..<Int(ids.ends[i]) }

    /// House `i`'s `OSMObjectKey.order`, read from its id's bytes.
    func objectOrder(_ i: Int) -> (type: Int, id: Int64, part: Int)? {
        ids.blob.withUnsafeBufferPointer { OSMObjectKey.order(of: UnsafeBufferPointer(rebasing: $0[idRange(i)])) }
    }

    /// House `i`'s `objectOrder` as `OSMObjectKey.packed`; -1 for an id that is not an OpenStreetMap object's (a
    /// binary search over the houses makes no strings).
    func objectKey(_ i: Int) -> Int64 { objectOrder(i).map(OSMObjectKey.packed) ?? -1 }
}

/// Distinct contexts (street, place, unit, postcode, city as text references) numbered from 0 as met.
struct ContextNumbering {
    struct Context: Hashable {
        var street, place, unit, postcode, city: UInt32
    }

    private(set) var list: [Context] = []
    private var numbers: [Context: UInt32] = [:]
    private var last: (Context, UInt32)?

    mutating func number(_ context: Context) -> UInt32 {
        if let (previous, known) = last, previous == context { return known }
        let number: UInt32
        if let known = numbers[context] {
            number = known
        } else {
            number = UInt32(list.count)
            numbers[context] = number
            list.append(context)
        }
        last = (context, number)
        return number
    }
}
