import GeoCore
import Parallelism
import Records
import SnapshotFile
import Synchronization
import TextIndex

/// Houses and streets for forward and reverse address geocoding, built from imported OpenStreetMap data.
///
/// Streets are clusters of same-named addresses and street lines: members are bucketed by normalized name and a
/// cell of about 5 × 5 km, and neighbouring cells of one name are joined, so "Mannerheimintie" is one street
/// however many ways map it, while two towns' "Kirkkotie" stay two. Every name variant of a line (`name:sv`,
/// `alt_name`, …) finds its street. Typos are found through a one-deletion index over the names (symmetric delete:
/// a name and a query one edit apart share a one-deletion variant), verified by edit distance.
///
/// Immutable once built, so it is shared freely between threads; imports build a new one.
public final class AddressIndex: Sendable {
    let houses: HouseTable
    public let lines: [StreetLine]
    /// Water and buildings, for the `base` tiles.
    public let areas: MapAreaIndex
    let streets: [Street]
    /// Normalized name variant → streets.
    let aliases: [String: [Int32]]
    /// Every normalized name variant, numbered.
    let names: [String]
    /// Every one-deletion variant of every name, as the top 32 bits of its hash (`forEachOneDeletion`) above the
    /// number of the name it comes from, sorted: one flat array, where a dictionary of string arrays cost 20 % of
    /// building the index for 2.3 M houses. A hash shared by chance only adds a candidate, which the edit distance
    /// then refuses.
    let deletions: FlatArray<UInt64>

    /// Houses, by index into `houses`, for the nearest one.
    let houseGrid: HouseGrid
    let segments: SegmentGrid
    /// Each street's houses by house number, as flat arrays: `numberEntries[numberStarts[s]..<numberStarts[s + 1]]`
    /// are street `s`'s (number key, house) pairs in key order (`HouseNumber.key`, numbered in `numberKeys`, which
    /// is sorted, so key numbers compare as the keys do), houses of one key in the street's order.
    let numberKeys: [String]
    let numberKeyIDs: [String: UInt32]
    let numberEntries: FlatArray<NumberEntry>
    let numberStarts: FlatArray<UInt32>
    /// Each line's bounding box: west, south, east, north.
    let lineBoxes: FlatArray<Double>
    /// Street lines the segment grid does not hold in every cell they cross — of one vertex (no segment), or whose box
    /// spans more than `SegmentGrid.longSegmentCells` cells a side (a segment that long is held by its end cells
    /// only): `lines(in:limit:)` looks at these whatever the box.
    let longLines: [Int32]
    /// The street of each address and of each line (-1: none).
    let streetOfAddress: FlatArray<Int32>
    let streetOfLine: FlatArray<Int32>
    /// `namesByLength`, once made.
    let nameOrder = Mutex<NameOrder?>(nil)
    /// `isInObjectOrder`, once checked.
    let objectOrder = Mutex<Bool?>(nil)
    /// A number no other index of this process has: what is derived from this index alone (the `base` tiles) is
    /// the same while it is the same.
    public let serial = AddressIndex.serials.add(1, ordering: .relaxed).newValue
    private static let serials = Atomic<UInt64>(0)

    /// A house under one of its street's house numbers.
    struct NumberEntry: BitwiseCopyable, Equatable {
        var key: UInt32
        var house: Int32
    }

    /// The bits of an entry of `deletions` that hold the variant's hash; the others hold the name's number.
    static let variantBits: UInt64 = 0xFFFF_FFFF_0000_0000

    /// The names one of whose one-deletion variants has this hash.
    func names(deletingTo hash: UInt64) -> [Int32] {
        let key = hash & Self.variantBits
        var i = deletions.lowerBound(of: key)
        var found: [Int32] = []
        while i < deletions.count && deletions[i] & Self.variantBits == key {
            found.append(Int32(truncatingIfNeeded: deletions[i]))
            i += 1
        }
        return found
    }

    /// One street: every address and line of a name in one area.
    struct Street: Sendable {
        var name: String
        var city: String?
        var postcode: String?
        var addresses: [Int32]
        var lines: [Int32]
        /// A point on the street (half-way along its longest line), or its middle house when it has no line.
        var anchor: Coordinate2
    }

    public static let empty = AddressIndex(AddressData())

    public var isEmpty: Bool { houses.count == 0 && lines.isEmpty }

    /// The number of houses.
    public var houseCount: Int { houses.count }

    /// The house with this index, as a record.
    public func house(_ i: Int) -> AddressPoint { houses[i] }

    init(
        houses: HouseTable,
        lines: [StreetLine],
        streets: [Street],
        names: [String],
        streetsOfName: [[Int32]],
        deletions: FlatArray<UInt64>,
        houseGrid: HouseGrid,
        segments: SegmentGrid,
        numberKeys: [String],
        numberEntries: FlatArray<NumberEntry>,
        numberStarts: FlatArray<UInt32>,
        lineBoxes: FlatArray<Double>,
        streetOfAddress: FlatArray<Int32>,
        streetOfLine: FlatArray<Int32>,
        areas: MapAreaIndex
    ) {
        (self.houses, self.lines, self.areas, self.streets, self.names) = (houses, lines, areas, streets, names)
        var aliases: [String: [Int32]] = [:]
        aliases.reserveCapacity(names.count)
        for (n, name) in names.enumerated() where !streetsOfName[n].isEmpty { aliases[name] = streetsOfName[n] }
        self.aliases = aliases
        self.deletions = deletions
        self.houseGrid = houseGrid
        self.segments = segments
        self.numberKeys = numberKeys
        var keyIDs: [String: UInt32] = [:]
        keyIDs.reserveCapacity(numberKeys.count)
        for (i, key) in numberKeys.enumerated() { keyIDs[key] = UInt32(i) }
        numberKeyIDs = keyIDs
        self.numberEntries = numberEntries
        self.numberStarts = numberStarts
        self.lineBoxes = lineBoxes
        var longLines: [Int32] = []
        for i in lines.indices where lines[i].kind == .street {
            let (height, width) = (lineBoxes[4 * i + 3] - lineBoxes[4 * i + 1], lineBoxes[4 * i + 2] - lineBoxes[4 * i])
            if lines[i].points.count < 2 || height >= Double(SegmentGrid.longSegmentCells) * SegmentGrid.cellLatitude
                || width >= Double(SegmentGrid.longSegmentCells) * SegmentGrid.cellLongitude
            {
                longLines.append(Int32(i))
            }
        }
        self.longLines = longLines
        self.streetOfAddress = streetOfAddress
        self.streetOfLine = streetOfLine
    }

    public convenience init(_ data: AddressData) {
        // The houses' columns first: from then on a house's street, city, postcode and number are numbers of
        // distinct texts, so that each text is normalized, parsed and counted once, not once per house.
        self.init(houses: HouseTable(data.addresses), lines: data.streets, areas: data.areas)
    }

    /// Houses and lines given as records, no areas (`AddressLayer`'s): the houses' columns made from the records,
    /// not from a `HouseList` coded for the purpose and decoded again.
    convenience init(houses: [AddressPoint], lines: [StreetLine]) { self.init(houses: HouseTable(houses), lines: lines, areas: AreaList()) }

    convenience init(houses: HouseTable, lines: [StreetLine], areas: AreaList) {
        let data = (streets: lines, areas: areas)
        let houseCount = houses.count
        // The houses' and the street segments' grids need only positions: made on a second thread meanwhile.
        let spatial = Background { (HouseGrid(latitudes: houses.latitudes, longitudes: houses.longitudes), SegmentGrid(lines: data.streets)) }
        // Every normalized name gets a number; members are bucketed by (name, cell).
        var names: [String] = []
        var nameNumbers: [String: Int32] = [:]
        func name(_ spelling: String) -> Int32? {
            let normalized = TextNormalizer.normalize(spelling)
            guard !normalized.isEmpty else { return nil }
            if let number = nameNumbers[normalized] { return number }
            let number = Int32(names.count)
            nameNumbers[normalized] = number
            names.append(normalized)
            return number
        }
        // Per text of the house table: its name number (-1: none; -2: not normalized yet) and its house number key
        // (-1: not a house number; -2: not parsed yet).
        var nameOfText = [Int32](repeating: -2, count: houses.texts.count + 1)
        func name(ofText text: UInt32) -> Int32? {
            if nameOfText[Int(text)] == -2 { nameOfText[Int(text)] = houses.text(text).flatMap(name) ?? -1 }
            return nameOfText[Int(text)] >= 0 ? nameOfText[Int(text)] : nil
        }
        var keysMet: [String] = []
        var keyMet: [String: Int32] = [:]
        var keyOfText = [Int32](repeating: -2, count: houses.texts.count + 1)
        func key(ofText text: UInt32) -> Int32? {
            if keyOfText[Int(text)] == -2 {
                keyOfText[Int(text)] = -1
                if let number = houses.text(text).flatMap(HouseNumber.init) {
                    let key = number.key
                    if let known = keyMet[key] {
                        keyOfText[Int(text)] = known
                    } else {
                        keyOfText[Int(text)] = Int32(keysMet.count)
                        keyMet[key] = Int32(keysMet.count)
                        keysMet.append(key)
                    }
                }
            }
            return keyOfText[Int(text)] >= 0 ? keyOfText[Int(text)] : nil
        }
        // Each member's name and cell, houses first, then lines: sorted by packed keys below instead of filed in a
        // dictionary of buckets (a hash and an array append a house: a third of building the index at 2.3 M houses).
        var memberNames: [Int32] = []
        var memberCells: [UInt32] = []
        var members: [Int32] = []
        memberNames.reserveCapacity(houseCount + data.streets.count)
        memberCells.reserveCapacity(houseCount + data.streets.count)
        members.reserveCapacity(houseCount + data.streets.count)
        for i in 0..<houseCount {
            let text = houses.streetText(i) != 0 ? houses.streetText(i) : houses.placeText(i)
            guard text != 0, let n = name(ofText: text) else { continue }
            memberNames.append(n)
            memberCells.append(Self.cell(houses.latitudes[i], houses.longitudes[i]))
            members.append(Int32(i))
        }
        let houseMembers = members.count
        var variantsOfLine = [[Int32]](repeating: [], count: data.streets.count)
        for (i, line) in data.streets.enumerated() where !line.points.isEmpty {
            let numbers = line.names.compactMap(name)
            guard let primary = numbers.first else { continue }
            variantsOfLine[i] = numbers
            let middle = line.points[line.points.count / 2]
            memberNames.append(primary)
            memberCells.append(Self.cell(middle.latitude, middle.longitude))
            members.append(Int32(i))
        }
        // Keys in (name, cell) order — names in their text's order — so that streets are numbered the same whatever
        // order the data came in: each name's rank among the names, above its cell's row and column.
        var rankOfName = [UInt64](repeating: 0, count: names.count)
        for (rank, n) in names.indices.sorted(by: { names[$0] < names[$1] }).enumerated() { rankOfName[n] = UInt64(rank) }
        var memberKeys = memberNames.indices.map { rankOfName[Int(memberNames[$0])] << 24 | UInt64(memberCells[$0]) }
        // Stable: a key's houses, in their order, before its lines, in theirs. The keys sorted in place.
        let order = RadixSort.sortWithOrder(&memberKeys)
        var keys: [UInt64] = []  // the distinct keys, ascending
        var keyStarts: [Int] = []  // where each key's members start in `order`
        for (position, key) in memberKeys.enumerated() where keys.last != key {
            keys.append(key)
            keyStarts.append(position)
        }
        keyStarts.append(order.count)
        // Union neighbouring cells of one name: the key of the cell to the east is one more, and those of the row to
        // the north start 4 095 past it (west of it), so one pointer walks them as the keys ascend.
        var parent = Array(keys.indices)
        func find(_ x: Int) -> Int {
            var x = x
            while parent[x] != x {
                parent[x] = parent[parent[x]]
                x = parent[x]
            }
            return x
        }
        func union(_ i: Int, _ j: Int) {
            let a = find(i)
            let b = find(j)
            if a != b { parent[max(a, b)] = min(a, b) }
        }
        var north = 0
        for (i, key) in keys.enumerated() {
            if i + 1 < keys.count && keys[i + 1] == key + 1 { union(i, i + 1) }
            let northWest = key + Self.rowStride - 1
            while north < keys.count && keys[north] < northWest { north += 1 }
            var j = north
            while j < keys.count && keys[j] <= northWest + 2 {
                union(i, j)
                j += 1
            }
        }
        // A street per set of joined keys, numbered in the order of each set's first key; its members in key order.
        var streetOfKey = [Int32](repeating: -1, count: keys.count)
        var streetCount = 0
        for i in keys.indices {
            let root = find(i)
            if streetOfKey[root] < 0 {
                streetOfKey[root] = Int32(streetCount)
                streetCount += 1
            }
            streetOfKey[i] = streetOfKey[root]
        }
        var groupAddresses = [[Int32]](repeating: [], count: streetCount)
        var groupLines = [[Int32]](repeating: [], count: streetCount)
        var groupNames = [[Int32]](repeating: [], count: streetCount)
        for i in keys.indices {
            let s = Int(streetOfKey[i])
            for position in keyStarts[i]..<keyStarts[i + 1] {
                let entry = Int(order[position])
                if entry < houseMembers { groupAddresses[s].append(members[entry]) } else { groupLines[s].append(members[entry]) }
            }
            groupNames[s].append(memberNames[Int(order[keyStarts[i]])])
        }
        var streets: [Street] = []
        streets.reserveCapacity(streetCount)
        var streetsOfName = [[Int32]](repeating: [], count: names.count)
        // Each street's (number key, house) pairs in the street's order; keys numbered as met, then renumbered in
        // key order once all are known.
        var streetNumbers: [[NumberEntry]] = []
        streetNumbers.reserveCapacity(streetCount)
        var streetOfAddress = FlatArray<Int32>(repeating: -1, count: houseCount)
        var streetOfLine = [Int32](repeating: -1, count: data.streets.count)
        for s in 0..<streetCount {
            let index = Int32(s)
            let addresses = groupAddresses[s]
            let lines = groupLines[s]
            var houseNumbers: [NumberEntry] = []
            houseNumbers.reserveCapacity(addresses.count)
            // Houses counted by context (street, place, postcode and city at once), a run of one context at a time.
            var contextCounts: [(context: UInt32, count: Int)] = []
            for a in addresses {
                let i = Int(a)
                streetOfAddress[i] = index
                let context = houses.contexts[i]
                if contextCounts.last?.context == context {
                    contextCounts[contextCounts.count - 1].count += 1
                } else {
                    contextCounts.append((context, 1))
                }
                if houses.numbers[i] != 0, let key = key(ofText: houses.numbers[i]) { houseNumbers.append(NumberEntry(key: UInt32(key), house: a)) }
            }
            // Texts counted by text number (distinct numbers are distinct texts), then by text.
            var spellingTexts: [(text: UInt32, count: Int)] = []
            var cityTexts: [(text: UInt32, count: Int)] = []
            var postcodeTexts: [(text: UInt32, count: Int)] = []
            for (context, count) in contextCounts {
                let c = Int(context)
                let street = houses.contextStreets[c] != 0 ? houses.contextStreets[c] : houses.contextPlaces[c]
                if street != 0 { spellingTexts.append((street, count)) }
                if houses.contextCities[c] != 0 { cityTexts.append((houses.contextCities[c], count)) }
                if houses.contextPostcodes[c] != 0 { postcodeTexts.append((houses.contextPostcodes[c], count)) }
            }
            var spellings = Tally(spellingTexts, houses)
            var cities = Tally(cityTexts, houses)
            var nameSet = groupNames[s]
            for l in lines {
                streetOfLine[Int(l)] = index
                let line = data.streets[Int(l)]
                if let primary = line.names.first { spellings.add(primary, 2) }
                if let c = line.city { cities.add(c, 1) }
                nameSet.append(contentsOf: variantsOfLine[Int(l)])
            }
            streets.append(
                Street(
                    name: spellings.commonest ?? "",
                    city: cities.commonest,
                    postcode: Tally(postcodeTexts, houses).commonest,
                    addresses: addresses,
                    lines: lines,
                    anchor: Self.anchor(lines: lines.map { data.streets[Int($0)] }, addresses: addresses, houses)
                )
            )
            streetNumbers.append(houseNumbers)
            nameSet.sort()
            for (k, n) in nameSet.enumerated() where k == 0 || nameSet[k - 1] != n { streetsOfName[Int(n)].append(index) }
        }
        var deletions: [UInt64] = []
        // One variant a character: room for all at once (a doubling array copies into fresh memory each time).
        deletions.reserveCapacity(names.reduce(0) { $0 + $1.utf8.count })
        for (n, name) in names.enumerated() where !streetsOfName[n].isEmpty {
            Self.forEachOneDeletion(of: name) { deletions.append($0 & Self.variantBits | UInt64(n)) }
        }
        RadixSort.sort(&deletions)
        let keyOrder = keysMet.indices.sorted { keysMet[$0] < keysMet[$1] }
        var rank = [UInt32](repeating: 0, count: keysMet.count)
        for (r, k) in keyOrder.enumerated() { rank[k] = UInt32(r) }
        var entries = FlatArray<NumberEntry>()
        entries.reserveCapacity(houseCount)
        var starts: [UInt32] = [0]
        for var pairs in streetNumbers {
            // Key order, and the street's order within a key (a stable sort keeps it).
            for k in pairs.indices { pairs[k].key = rank[Int(pairs[k].key)] }
            if zip(pairs, pairs.dropFirst()).contains(where: { $0.key > $1.key }) {
                pairs = pairs.enumerated().sorted { ($0.element.key, $0.offset) < ($1.element.key, $1.offset) }.map(\.element)
            }
            for entry in pairs { entries.append(entry) }
            starts.append(UInt32(entries.count))
        }
        var boxes: [Double] = []
        boxes.reserveCapacity(data.streets.count * 4)
        for line in data.streets {
            var box = (west: Double.infinity, south: Double.infinity, east: -Double.infinity, north: -Double.infinity)
            for p in line.points {
                box = (min(box.west, p.longitude), min(box.south, p.latitude), max(box.east, p.longitude), max(box.north, p.latitude))
            }
            boxes.append(contentsOf: [box.west, box.south, box.east, box.north])
        }
        let (grid, segments) = try! spatial.value()  // made without throwing
        self.init(
            houses: houses,
            lines: data.streets,
            streets: streets,
            names: names,
            streetsOfName: streetsOfName,
            deletions: FlatArray(deletions),
            houseGrid: grid,
            segments: segments,
            numberKeys: keyOrder.map { keysMet[$0] },
            numberEntries: entries,
            numberStarts: FlatArray(starts),
            lineBoxes: FlatArray(boxes),
            streetOfAddress: streetOfAddress,
            streetOfLine: FlatArray(streetOfLine),
            areas: MapAreaIndex(data.areas)
        )
    }

    /// The distance between the keys of vertically neighbouring cells (see `cell`).
    static let rowStride: UInt64 = 1 << 12

    /// A cell of about 5 × 5 km (0.05° of latitude by 0.1° of longitude) as its row above its column, 12 bits each.
    static func cell(_ latitude: Double, _ longitude: Double) -> UInt32 {
        // Rows and columns of valid coordinates run from -1 800 to 1 800: offset by 2 048, and kept in 12 bits. Clamped
        // before the conversion, so that no value traps (an outline's coordinates are read unchecked: `AddressOutline`).
        func part(_ value: Double) -> UInt32 { value.isNaN ? 0 : UInt32(max(-2_048, min(2_047, value.rounded(.down))) + 2_048) }
        return part(latitude / 0.05) << 12 | part(longitude / 0.1)
    }

    /// How many houses or lines give each text, to choose a street's commonest name, city or postcode: a street has
    /// few distinct ones, so a list searched from its end, not a dictionary a street.
    struct Tally {
        var counts: [(text: String, count: Int)] = []

        /// From counts of house texts, by text number (distinct numbers are distinct texts).
        init(_ texts: [(text: UInt32, count: Int)], _ houses: borrowing HouseTable) {
            var texts = texts
            texts.sort { $0.text < $1.text }
            for (k, (text, count)) in texts.enumerated() {
                if k > 0 && texts[k - 1].text == text { counts[counts.count - 1].count += count } else { counts.append((houses.text(text)!, count)) }
            }
        }

        mutating func add(_ text: String, _ count: Int) {
            if let i = counts.lastIndex(where: { $0.text == text }) { counts[i].count += count } else { counts.append((text, count)) }
        }

        /// The text with the highest count; of equal counts, the first in text order.
        var commonest: String? { counts.max { ($0.count, $1.text) < ($1.count, $0.text) }?.text }
    }

    /// Street `s`'s houses with this number key, in the street's order (empty: none).
    func houses(numbered key: String, on s: Int) -> [Int32] {
        guard let id = numberKeyIDs[key] else { return [] }
        let start = Int(numberStarts[s])
        let end = Int(numberStarts[s + 1])
        var low = start
        var high = end
        while low < high {
            let middle = (low + high) / 2
            if numberEntries[middle].key < id { low = middle + 1 } else { high = middle }
        }
        var out: [Int32] = []
        while low < end && numberEntries[low].key == id {
            out.append(numberEntries[low].house)
            low += 1
        }
        return out
    }

    /// Street `s`'s house number keys in order, each with its houses in the street's order.
    func numberGroups(on s: Int) -> [(key: String, houses: [Int32])] {
        var out: [(key: String, houses: [Int32])] = []
        var lastKey: UInt32?
        for i in Int(numberStarts[s])..<Int(numberStarts[s + 1]) {
            let entry = numberEntries[i]
            if entry.key == lastKey {
                out[out.count - 1].houses.append(entry.house)
            } else {
                out.append((numberKeys[Int(entry.key)], [entry.house]))
                lastKey = entry.key
            }
        }
        return out
    }

    /// A point on the street: half-way along its longest line; without lines, the house nearest the houses' mean.
    static func anchor(lines: [StreetLine], addresses: [Int32], _ houses: HouseTable) -> Coordinate2 {
        // Each length and distance computed once (the first of equals wins, as `max` and `min` choose).
        var longest: (line: StreetLine, length: Double)?
        for line in lines where line.kind == .street {
            let metres = length(line.points)
            if longest == nil || metres > longest!.length { longest = (line, metres) }
        }
        if let longest, !longest.line.points.isEmpty {
            return point(along: longest.line.points, at: longest.length / 2)
        }
        guard !addresses.isEmpty else { return lines.first?.points.first ?? Coordinate2(0, 0) }
        var lat = 0.0
        var lon = 0.0
        for a in addresses {
            lat += houses.latitudes[Int(a)]
            lon += houses.longitudes[Int(a)]
        }
        (lat, lon) = (lat / Double(addresses.count), lon / Double(addresses.count))
        var nearest = (house: addresses[0], metres: Double.infinity)
        for a in addresses {
            let metres = GreatCircle.distance(
                latitude1: lat,
                longitude1: lon,
                latitude2: houses.latitudes[Int(a)],
                longitude2: houses.longitudes[Int(a)]
            )
            if metres < nearest.metres { nearest = (a, metres) }
        }
        return houses.position(Int(nearest.house))
    }

    /// Length of a polyline in metres.
    static func length(_ points: [Coordinate2]) -> Double {
        guard points.count >= 2 else { return 0 }
        var total = 0.0
        for i in 1..<points.count { total += distance(points[i - 1], points[i]) }
        return total
    }

    /// The point `metres` along a polyline (clamped to its ends).
    static func point(along points: [Coordinate2], at metres: Double) -> Coordinate2 {
        guard points.count >= 2, metres > 0 else { return points.first ?? Coordinate2(0, 0) }
        var left = metres
        for i in 1..<points.count {
            let d = distance(points[i - 1], points[i])
            if d >= left && d > 0 {
                let t = left / d
                return Coordinate2(
                    points[i - 1].latitude + t * (points[i].latitude - points[i - 1].latitude),
                    points[i - 1].longitude + t * (points[i].longitude - points[i - 1].longitude)
                )
            }
            left -= d
        }
        return points[points.count - 1]
    }

    static func distance(_ a: Coordinate2, _ b: Coordinate2) -> Double {
        GreatCircle.distance(latitude1: a.latitude, longitude1: a.longitude, latitude2: b.latitude, longitude2: b.longitude)
    }

    /// Every string made by deleting one character (Unicode scalar) of `word`.
    static func oneDeletions(_ word: String) -> Set<String> {
        let scalars = Array(word.unicodeScalars)
        guard scalars.count >= 2 else { return [] }
        var out = Set<String>()
        for i in scalars.indices {
            var s = String.UnicodeScalarView()
            s.append(contentsOf: scalars[..<i])
            s.append(contentsOf: scalars[(i + 1)...])
            out.insert(String(s))
        }
        return out
    }

    /// Calls `body` with the hash of every string made by deleting one character (Unicode scalar) of `word`, without
    /// making the strings: the UTF-8 bytes before and after the character, hashed as `FNV1a.hash` hashes a string.
    static func forEachOneDeletion(of word: String, _ body: (UInt64) -> Void) {
        var word = word
        word.withUTF8 { bytes in
            // The character deleted runs from `start` to the next character's first byte.
            func isFirstByte(_ i: Int) -> Bool { bytes[i] & 0xC0 != 0x80 }
            var characters = 0
            for i in bytes.indices where isFirstByte(i) { characters += 1 }
            guard characters >= 2 else { return }
            // The hash of the bytes before the character, carried from one deletion to the next: only what follows
            // it is hashed each time.
            var prefix = FNV1a()
            var start = 0
            while start < bytes.count {
                var end = start + 1
                while end < bytes.count && !isFirstByte(end) { end += 1 }
                var hash = prefix
                for i in end..<bytes.count { hash.combine(bytes[i]) }
                body(hash.value)
                for i in start..<end { prefix.combine(bytes[i]) }
                start = end
            }
        }
    }
}
