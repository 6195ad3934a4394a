import GeoCore
import Records
import SnapshotFile
import TextIndex

/// The address index's snapshot: the houses' columns, the streets, the name and typo tables, the house grid and the
/// segment grid as they are in memory, so that a start with 2 million houses maps them instead of reading and
/// indexing every house again. It is keyed by the store's address generation (a token that every replacement of
/// the addresses changes, `StoreOfRecord.addressGeneration`) and the text analyzer's version, and used only while
/// both match.
extension AddressIndex {
    /// "ADR" and a version: 6, the map areas as flat arrays (5: the map areas as one block; 4: each line's name count
    /// as a number; 3: as the length of an array of zeros; 2: a house's street, place, unit, postcode and city each its
    /// own text number; 1: houses in an R-tree).
    static let snapshotFormat: UInt32 = 0x4144_5206

    static func snapshotKey(generation: String) -> String { "addresses \(generation); analyzer \(InvertedIndex.snapshotVersion)" }

    /// Writes the index to `path` (atomically: a reader sees the old file or the new one), for the addresses of
    /// this `generation`.
    public func writeSnapshot(to path: String, generation: String) throws(SnapshotError) {
        let file = try SnapshotWriter(path: path, formatVersion: Self.snapshotFormat)
        try file.write(Self.snapshotKey(generation: generation))
        file.mark()
        try houses.write(to: file)
        file.mark()
        // The lines' columns in one pass over them, each field read where it lies: a `map` a column copied every
        // line (and its arrays' references) once per column.
        var ids: [String] = []
        var kinds: [UInt8] = []
        var nameCounts: [UInt32] = []
        var allNames: [String] = []
        var pointCounts: [Int] = []
        var numberCounts: [Int] = []
        var coordinates: [Double] = []
        var numbered: [Int64] = []
        var cities: [String?] = []
        var postcodes: [String?] = []
        for i in lines.indices {
            ids.append(lines[i].id)
            kinds.append(Self.kindCodes[lines[i].kind]!)
            nameCounts.append(UInt32(lines[i].names.count))
            allNames.append(contentsOf: lines[i].names)
            pointCounts.append(2 * lines[i].points.count)
            for p in lines[i].points {
                coordinates.append(p.latitude)
                coordinates.append(p.longitude)
            }
            numberCounts.append(2 * lines[i].numbers.count)
            for n in lines[i].numbers {
                numbered.append(Int64(n.vertex))
                numbered.append(Int64(n.number))
            }
            cities.append(lines[i].city)
            postcodes.append(lines[i].postcode)
        }
        try file.write(ids)
        try file.write(kinds)
        try file.write(nameCounts)
        try file.write(allNames)
        try file.write(nestedCounts: pointCounts, values: coordinates)
        try file.write(nestedCounts: numberCounts, values: numbered)
        try Self.write(cities, to: file)
        try Self.write(postcodes, to: file)
        file.mark()
        try file.write(streets.map(\.name))
        try Self.write(streets.map(\.city), to: file)
        try Self.write(streets.map(\.postcode), to: file)
        try file.write(nested: streets.map(\.addresses))
        try file.write(nested: streets.map(\.lines))
        var anchors: [Double] = []
        anchors.reserveCapacity(2 * streets.count)
        for street in streets {
            anchors.append(street.anchor.latitude)
            anchors.append(street.anchor.longitude)
        }
        try file.write(anchors)
        file.mark()
        try file.write(names)
        var streetsOfName = [[Int32]](repeating: [], count: names.count)
        for (n, name) in names.enumerated() { streetsOfName[n] = aliases[name] ?? [] }
        try file.write(nested: streetsOfName)
        try file.write(deletions)
        try file.write(numberKeys)
        try file.write(numberEntries)
        try file.write(numberStarts)
        try file.write(lineBoxes)
        try file.write(streetOfAddress)
        try file.write(streetOfLine)
        file.mark()
        try houseGrid.cells.write(to: file)
        try segments.cells.write(to: file)
        file.mark()
        try areas.write(to: file)
        try file.commit()
    }

    /// The index in the snapshot at `path`, if it was written for the addresses of this `generation`.
    /// - Throws: `SnapshotError` when it is missing, of another format or generation, or damaged.
    public static func readSnapshot(_ path: String, generation: String) throws(SnapshotError) -> AddressIndex {
        let file = try SnapshotReader(path: path, formatVersion: snapshotFormat)
        guard try file.readString() == snapshotKey(generation: generation) else {
            throw .stale(path: path, reason: "it was written for other addresses")
        }
        func corrupt(_ what: String) -> SnapshotError { .corrupt(path: path, reason: what) }
        let houses = try HouseTable(snapshot: file)

        let ids = try file.readStrings()
        let kinds: [UInt8] = try file.read()
        let nameCounts = try file.read([UInt32].self).map { Int($0) }
        let allNames = try file.readStrings()
        let points = try file.readNestedFlat(Double.self)
        let numbers = try file.readNestedFlat(Int64.self)
        let cities = try readOptionals(file)
        let postcodes = try readOptionals(file)
        let n = ids.count
        guard kinds.count == n, nameCounts.count == n, nameCounts.reduce(0, +) == allNames.count, points.count == n, numbers.count == n,
            cities.count == n, postcodes.count == n
        else { throw corrupt("street line columns of different lengths") }
        var lines: [StreetLine] = []
        lines.reserveCapacity(n)
        var nextName = 0
        for i in 0..<n {
            guard let kind = kindOfCode[kinds[i]], points[i].count % 2 == 0, numbers[i].count % 2 == 0 else { throw corrupt("street line \(i)") }
            let vertices = points[i].count / 2
            var line = StreetLine(id: ids[i], kind: kind, names: Array(allNames[nextName..<nextName + nameCounts[i]]), points: [])
            nextName += nameCounts[i]
            line.points.reserveCapacity(vertices)
            for v in 0..<vertices { line.points.append(Coordinate2(points[i][2 * v], points[i][2 * v + 1])) }
            for k in stride(from: 0, to: numbers[i].count, by: 2) {
                let vertex = Int(numbers[i][k])
                guard vertex >= 0 && vertex < vertices else { throw corrupt("interpolation vertex of street line \(i)") }
                line.numbers.append(NumberedVertex(vertex: vertex, number: Int(numbers[i][k + 1])))
            }
            (line.city, line.postcode) = (cities[i], postcodes[i])
            lines.append(line)
        }

        let streetNames = try file.readStrings()
        let streetCities = try readOptionals(file)
        let streetPostcodes = try readOptionals(file)
        let streetHouses: [[Int32]] = try file.readNested()
        let streetLines: [[Int32]] = try file.readNested()
        let anchors: [Double] = try file.read()
        let s = streetNames.count
        guard streetCities.count == s, streetPostcodes.count == s, streetHouses.count == s, streetLines.count == s, anchors.count == 2 * s,
            streetHouses.allSatisfy({ $0.allSatisfy { $0 >= 0 && Int($0) < houses.count } }),
            streetLines.allSatisfy({ $0.allSatisfy { $0 >= 0 && Int($0) < n } })
        else { throw corrupt("street columns of different lengths or out of range") }
        var streets: [Street] = []
        streets.reserveCapacity(s)
        for i in 0..<s {
            streets.append(
                Street(
                    name: streetNames[i],
                    city: streetCities[i],
                    postcode: streetPostcodes[i],
                    addresses: streetHouses[i],
                    lines: streetLines[i],
                    anchor: Coordinate2(anchors[2 * i], anchors[2 * i + 1])
                )
            )
        }

        let names = try file.readStrings()
        let streetsOfName: [[Int32]] = try file.readNested()
        let deletions: FlatArray<UInt64> = try file.readFlat()
        let numberKeys = try file.readStrings()
        let numberEntries: FlatArray<NumberEntry> = try file.readFlat()
        let numberStarts: FlatArray<UInt32> = try file.readFlat()
        let lineBoxes: FlatArray<Double> = try file.readFlat()
        let streetOfAddress: FlatArray<Int32> = try file.readFlat()
        let streetOfLine: FlatArray<Int32> = try file.readFlat()
        guard streetsOfName.count == names.count, streetsOfName.allSatisfy({ $0.allSatisfy { $0 >= 0 && Int($0) < s } }),
            deletions.allSatisfy({ Int(truncatingIfNeeded: $0 & ~variantBits) < names.count }),
            numberStarts.count == s + 1, numberStarts.first == 0, Int(numberStarts.last!) == numberEntries.count,
            zip(numberStarts, numberStarts.dropFirst()).allSatisfy({ $0 <= $1 }),
            numberEntries.allSatisfy({ Int($0.key) < numberKeys.count && $0.house >= 0 && Int($0.house) < houses.count }),
            lineBoxes.count == 4 * n, streetOfAddress.count == houses.count, streetOfLine.count == n,
            streetOfAddress.allSatisfy({ $0 >= -1 && Int($0) < s }), streetOfLine.allSatisfy({ $0 >= -1 && Int($0) < s })
        else { throw corrupt("name, number or street tables of inconsistent sizes") }

        let houseGrid = HouseGrid(cells: try CellTable(snapshot: file))
        let segments = SegmentGrid(lines: lines, cells: try CellTable(snapshot: file))
        let areas = try MapAreaIndex(snapshot: file)
        guard file.isAtEnd, houseGrid.isConsistent(houseCount: houses.count), segments.isConsistent else {
            throw corrupt("sections of inconsistent sizes")
        }
        file.releaseResidentPages()
        return AddressIndex(
            houses: houses,
            lines: lines,
            streets: streets,
            names: names,
            streetsOfName: streetsOfName,
            deletions: deletions,
            houseGrid: houseGrid,
            segments: segments,
            numberKeys: numberKeys,
            numberEntries: numberEntries,
            numberStarts: numberStarts,
            lineBoxes: lineBoxes,
            streetOfAddress: streetOfAddress,
            streetOfLine: streetOfLine,
            areas: areas
        )
    }

    static let kindCodes: [StreetLine.Kind: UInt8] = [.street: 0, .odd: 1, .even: 2, .all: 3]
    static let kindOfCode: [UInt8: StreetLine.Kind] = Dictionary(uniqueKeysWithValues: kindCodes.map { ($1, $0) })

    /// Optional strings: whether each is there, then those that are.
    static func write(_ strings: [String?], to file: SnapshotWriter) throws(SnapshotError) {
        try file.write(strings.map { $0 == nil ? UInt8(0) : 1 })
        try file.write(strings.compactMap { $0 })
    }

    static func readOptionals(_ file: SnapshotReader) throws(SnapshotError) -> [String?] {
        let present: [UInt8] = try file.read()
        let strings = try file.readStrings()
        guard present.count(where: { $0 != 0 }) == strings.count else {
            throw .corrupt(path: file.path, reason: "optional strings and their presence differ")
        }
        var next = 0
        return present.map { flag in
            guard flag != 0 else { return nil }
            next += 1
            return strings[next - 1]
        }
    }
}
