import GeoCore
import SpatialIndex
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
    public let addresses: [AddressPoint]
    public let lines: [StreetLine]
    let streets: [Street]
    /// Normalized name variant → streets.
    let aliases: [String: [Int32]]
    /// One-deletion variant of a normalized name → the names it comes from.
    let deletions: [String: [String]]
    /// Houses, by index into `addresses`.
    let addressTree: RTree
    let segments: SegmentGrid
    /// Per street, its house numbers → indices into `addresses`.
    let numbers: [[String: [Int32]]]
    /// Each line's bounding box.
    let lineBoxes: [(west: Double, south: Double, east: Double, north: Double)]
    /// The street of each address and of each line (-1: none).
    let streetOfAddress: [Int32]
    let streetOfLine: [Int32]

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

    public var isEmpty: Bool { addresses.isEmpty && lines.isEmpty }

    public init(_ data: AddressData) {
        addresses = data.addresses
        lines = data.streets
        // Bucket every member by (name, cell); members are addresses (>= 0) and lines (encoded as -1 - index).
        struct Bucket {
            var addresses: [Int32] = []
            var lines: [Int32] = []
        }
        struct Key: Hashable, Comparable {
            var name: String
            var y: Int
            var x: Int
            static func < (a: Key, b: Key) -> Bool { (a.name, a.y, a.x) < (b.name, b.y, b.x) }
        }
        var buckets: [Key: Bucket] = [:]
        var variantsOfLine: [Int: [String]] = [:]
        // Many houses share a street: each spelling is normalized once.
        var normalized: [String: String] = [:]
        func normalize(_ text: String) -> String {
            if let known = normalized[text] { return known }
            let n = TextNormalizer.normalize(text)
            normalized[text] = n
            return n
        }
        func key(_ name: String, _ p: Coordinate2) -> Key {
            Key(name: name, y: Int((p.latitude / 0.05).rounded(.down)), x: Int((p.longitude / 0.1).rounded(.down)))
        }
        for (i, a) in data.addresses.enumerated() {
            guard let street = a.streetOrPlace else { continue }
            let name = normalize(street)
            guard !name.isEmpty else { continue }
            buckets[key(name, Coordinate2(a.latitude, a.longitude)), default: Bucket()].addresses.append(Int32(i))
        }
        for (i, line) in data.streets.enumerated() where !line.points.isEmpty {
            let names = line.names.map(normalize).filter { !$0.isEmpty }
            guard let primary = names.first else { continue }
            variantsOfLine[i] = names
            buckets[key(primary, line.points[line.points.count / 2]), default: Bucket()].lines.append(Int32(i))
        }
        // Union neighbouring cells of one name.
        let keys = buckets.keys.sorted()
        var parent = Array(keys.indices)
        func find(_ x: Int) -> Int {
            var x = x
            while parent[x] != x {
                parent[x] = parent[parent[x]]
                x = parent[x]
            }
            return x
        }
        var position: [Key: Int] = [:]
        for (i, k) in keys.enumerated() { position[k] = i }
        for (i, k) in keys.enumerated() {
            for dy in -1...1 {
                for dx in -1...1 where dy != 0 || dx != 0 {
                    if let j = position[Key(name: k.name, y: k.y + dy, x: k.x + dx)] {
                        let a = find(i)
                        let b = find(j)
                        if a != b { parent[max(a, b)] = min(a, b) }
                    }
                }
            }
        }
        var groups: [Int: Bucket] = [:]
        for (i, k) in keys.enumerated() {
            let root = find(i)
            groups[root, default: Bucket()].addresses.append(contentsOf: buckets[k]!.addresses)
            groups[root, default: Bucket()].lines.append(contentsOf: buckets[k]!.lines)
        }
        var streets: [Street] = []
        var aliases: [String: [Int32]] = [:]
        var numbers: [[String: [Int32]]] = []
        var streetOfAddress = [Int32](repeating: -1, count: data.addresses.count)
        var streetOfLine = [Int32](repeating: -1, count: data.streets.count)
        for root in groups.keys.sorted() {
            let group = groups[root]!
            let index = Int32(streets.count)
            for a in group.addresses { streetOfAddress[Int(a)] = index }
            for l in group.lines { streetOfLine[Int(l)] = index }
            var spellings: [String: Int] = [:]
            var cities: [String: Int] = [:]
            var postcodes: [String: Int] = [:]
            var houseNumbers: [String: [Int32]] = [:]
            var names = Set<String>()
            for a in group.addresses {
                let address = data.addresses[Int(a)]
                if let s = address.streetOrPlace { spellings[s, default: 0] += 1 }
                if let c = address.city { cities[c, default: 0] += 1 }
                if let p = address.postcode { postcodes[p, default: 0] += 1 }
                if let n = HouseNumber(address.housenumber) { houseNumbers[n.key, default: []].append(a) }
                names.insert(normalize(address.streetOrPlace ?? ""))
            }
            for l in group.lines {
                let line = data.streets[Int(l)]
                if let primary = line.names.first { spellings[primary, default: 0] += 2 }
                if let c = line.city { cities[c, default: 0] += 1 }
                names.formUnion(variantsOfLine[Int(l)] ?? [])
            }
            func commonest(_ counts: [String: Int]) -> String? { counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key }
            let anchor = Self.anchor(lines: group.lines.map { data.streets[Int($0)] }, addresses: group.addresses.map { data.addresses[Int($0)] })
            streets.append(
                Street(
                    name: commonest(spellings) ?? "",
                    city: commonest(cities),
                    postcode: commonest(postcodes),
                    addresses: group.addresses,
                    lines: group.lines,
                    anchor: anchor
                )
            )
            numbers.append(houseNumbers)
            for name in names where !name.isEmpty { aliases[name, default: []].append(index) }
        }
        var deletions: [String: [String]] = [:]
        for name in aliases.keys {
            for variant in Self.oneDeletions(name) { deletions[variant, default: []].append(name) }
        }
        self.streets = streets
        self.aliases = aliases
        self.deletions = deletions
        self.numbers = numbers
        self.streetOfAddress = streetOfAddress
        self.streetOfLine = streetOfLine
        addressTree = RTree(
            bulkLoading: data.addresses.enumerated().map {
                IndexedPoint(id: UInt32($0.offset), latitude: $0.element.latitude, longitude: $0.element.longitude)
            }
        )
        segments = SegmentGrid(lines: data.streets)
        lineBoxes = data.streets.map { line in
            var box = (west: Double.infinity, south: Double.infinity, east: -Double.infinity, north: -Double.infinity)
            for p in line.points {
                box = (min(box.west, p.longitude), min(box.south, p.latitude), max(box.east, p.longitude), max(box.north, p.latitude))
            }
            return box
        }
    }

    /// A point on the street: half-way along its longest line; without lines, the house nearest the houses' mean.
    static func anchor(lines: [StreetLine], addresses: [AddressPoint]) -> Coordinate2 {
        if let longest = lines.filter({ $0.kind == .street }).max(by: { length($0.points) < length($1.points) }), !longest.points.isEmpty {
            return point(along: longest.points, at: length(longest.points) / 2)
        }
        guard !addresses.isEmpty else { return lines.first?.points.first ?? Coordinate2(0, 0) }
        let lat = addresses.map(\.latitude).reduce(0, +) / Double(addresses.count)
        let lon = addresses.map(\.longitude).reduce(0, +) / Double(addresses.count)
        let middle = addresses.min { a, b in
            GreatCircle.distance(latitude1: lat, longitude1: lon, latitude2: a.latitude, longitude2: a.longitude)
                < GreatCircle.distance(latitude1: lat, longitude1: lon, latitude2: b.latitude, longitude2: b.longitude)
        }!
        return Coordinate2(middle.latitude, middle.longitude)
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
}
