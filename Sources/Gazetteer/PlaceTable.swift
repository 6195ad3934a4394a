import SnapshotFile

/// The gazetteer's places as columns: numbers in flat arrays, each text field as one UTF-8 blob with end offsets.
///
/// After a restart every column is read in place from the gazetteer's snapshot (`FlatArray`), so a start decodes no
/// strings: a `Place` is made when one is read (`self[i]`), which answers need for a few places, and the hot paths
/// of ranking and reverse geocoding read single fields (`population(_:)`, `country(_:)`, positions) without making
/// the place.
public struct PlaceTable: RandomAccessCollection, Sendable {
    /// Strings as one UTF-8 blob and the end offset of each.
    struct StringColumn: Sendable {
        var ends = FlatArray<UInt64>()
        var blob = FlatArray<UInt8>()

        init() {}

        init(_ strings: [String]) {
            var bytes: [UInt8] = []
            var ends: [UInt64] = []
            ends.reserveCapacity(strings.count)
            for string in strings {
                bytes.append(contentsOf: string.utf8)
                ends.append(UInt64(bytes.count))
            }
            self.ends = FlatArray(ends)
            blob = FlatArray(bytes)
        }

        init(ends: FlatArray<UInt64>, blob: FlatArray<UInt8>) {
            self.ends = ends
            self.blob = blob
        }

        var count: Int { ends.count }

        /// Offsets ascend and stay within the blob.
        var isConsistent: Bool {
            var previous: UInt64 = 0
            for end in ends {
                guard end >= previous else { return false }
                previous = end
            }
            return previous <= UInt64(blob.count)
        }

        func string(_ i: Int) -> String {
            let start = i == 0 ? 0 : Int(ends[i - 1])
            let end = Int(ends[i])
            return blob.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[start..<end]), as: UTF8.self) }
        }

        func equals(_ i: Int, _ text: String) -> Bool {
            let start = i == 0 ? 0 : Int(ends[i - 1])
            let end = Int(ends[i])
            var text = text
            return text.withUTF8 { wanted in
                wanted.count == end - start && blob.withUnsafeBufferPointer { UnsafeBufferPointer(rebasing: $0[start..<end]).elementsEqual(wanted) }
            }
        }
    }

    static let kinds: [Place.Kind] = [.city, .province, .prefecture, .district]

    var ids = FlatArray<Int>()
    var latitudes = FlatArray<Double>()
    var longitudes = FlatArray<Double>()
    var populations = FlatArray<Int>()
    /// Index into `PlaceTable.kinds`.
    var kindCodes = FlatArray<UInt8>()
    var names = StringColumn()
    var asciiNames = StringColumn()
    var countries = StringColumn()
    var admin1s = StringColumn()
    var admin2s = StringColumn()
    /// Place i's alternate names are `alternates[alternateStarts[i]..<alternateStarts[i + 1]]`.
    var alternateStarts: FlatArray<UInt32> = [0]
    var alternates = StringColumn()

    init() {}

    public init(_ places: [Place]) {
        ids = FlatArray(places.map(\.id))
        latitudes = FlatArray(places.map(\.latitude))
        longitudes = FlatArray(places.map(\.longitude))
        populations = FlatArray(places.map(\.population))
        kindCodes = FlatArray(places.map { place in UInt8(PlaceTable.kinds.firstIndex(of: place.kind)!) })
        names = StringColumn(places.map(\.name))
        asciiNames = StringColumn(places.map(\.asciiName))
        countries = StringColumn(places.map(\.country))
        admin1s = StringColumn(places.map(\.admin1))
        admin2s = StringColumn(places.map(\.admin2))
        var starts: [UInt32] = [0]
        starts.reserveCapacity(places.count + 1)
        for place in places { starts.append(starts.last! + UInt32(place.alternateNames.count)) }
        alternateStarts = FlatArray(starts)
        alternates = StringColumn(places.flatMap(\.alternateNames))
    }

    /// Every column of the same length, offsets in range, kinds known.
    var isConsistent: Bool {
        let n = ids.count
        let columns = [names, asciiNames, countries, admin1s, admin2s]
        guard latitudes.count == n, longitudes.count == n, populations.count == n, kindCodes.count == n, alternateStarts.count == n + 1,
            columns.allSatisfy({ $0.count == n && $0.isConsistent }), alternates.isConsistent,
            kindCodes.allSatisfy({ Int($0) < PlaceTable.kinds.count }), alternateStarts.first == 0
        else { return false }
        var previous: UInt32 = 0
        for start in alternateStarts {
            guard start >= previous else { return false }
            previous = start
        }
        return Int(previous) == alternates.count
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { ids.count }

    public subscript(i: Int) -> Place {
        let alternateRange = Int(alternateStarts[i])..<Int(alternateStarts[i + 1])
        return Place(
            id: ids[i],
            name: names.string(i),
            asciiName: asciiNames.string(i),
            alternateNames: alternateRange.map { alternates.string($0) },
            latitude: latitudes[i],
            longitude: longitudes[i],
            country: countries.string(i),
            admin1: admin1s.string(i),
            admin2: admin2s.string(i),
            population: populations[i],
            kind: PlaceTable.kinds[Int(kindCodes[i])]
        )
    }

    func population(_ i: Int) -> Int { populations[i] }

    /// `Place.chineseName` of place i, decoding the alternates one at a time.
    func chineseName(_ i: Int) -> String? {
        let own = names.string(i)
        if Place.isChinese(own) { return own }
        for j in Int(alternateStarts[i])..<Int(alternateStarts[i + 1]) {
            let alternate = alternates.string(j)
            if Place.isChinese(alternate) { return alternate }
        }
        return nil
    }
    func country(_ i: Int) -> String { countries.string(i) }
    func isInCountry(_ i: Int, _ code: String) -> Bool { countries.equals(i, code) }
    func name(_ i: Int) -> String { names.string(i) }
    func latitude(_ i: Int) -> Double { latitudes[i] }
    func longitude(_ i: Int) -> Double { longitudes[i] }
}
