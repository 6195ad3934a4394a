import Foundation
import GeoCore
import TextIndex

/// A house or street found for an address query.
public struct AddressMatch: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case house, street
    }

    public var kind: Kind
    /// The house's id (`osm-n…`), or for a street the id of its longest line (else of its middle house).
    public var id: String
    public var street: String
    public var housenumber: String?
    public var unit: String?
    public var postcode: String?
    public var city: String?
    public var latitude: Double
    public var longitude: Double
    public var score: Double
    /// `line` or `neighbours` for an interpolated position, see `GeocodeResult.interpolation`.
    public var interpolation: String?
    /// The part of the query the data has no match for (a house number not on the street).
    public var unresolved: String?

    public var components: AddressComponents {
        AddressComponents(street: street, housenumber: housenumber, unit: unit, postcode: postcode, city: city)
    }
}

/// An address query taken apart: "Mannerheimintie 13 a, 00100 Helsinki" → street "Mannerheimintie", number "13a",
/// postcode "00100", qualifiers ["helsinki"].
struct ParsedAddress: Equatable {
    var street: String
    var number: HouseNumber?
    var numberText: String?
    var unit: String?
    var postcode: String?
    /// Normalized later parts (cities, countries), postcodes taken out.
    var qualifiers: [String]
    /// For Chinese text: the street may be any suffix of `street` ("北京市朝阳区建国路" → "建国路").
    var streetIsSuffix = false

    static func isPostcode(_ word: Substring) -> Bool { (4...6).contains(word.count) && word.allSatisfy(\.isASCII) && word.allSatisfy(\.isNumber) }

    /// The readings of `text` as a street address; empty when it names no street (a bare number, say). When the
    /// first part has no house number and a later one does ("Stockmann, Aleksanterinkatu 52"), that later part is
    /// read as the street too, the first taken for a building's or venue's name.
    static func parse(_ text: String) -> [ParsedAddress] {
        let parts = text.split(whereSeparator: { ",，;；".contains($0) }).map(TextNormalizer.trimmed).filter { !$0.isEmpty }
        guard !parts.isEmpty else { return [] }
        var readings = parse(parts, from: 0)
        if !readings.contains(where: { $0.number != nil }) {
            for k in parts.indices.dropFirst() where parts[k].split(whereSeparator: \.isWhitespace).contains(where: HouseNumber.looksLikeNumber) {
                readings += parse(parts, from: k).filter { $0.number != nil }
                break
            }
        }
        return readings
    }

    /// `parts[first]` as street and number, the parts after it as postcode and qualifiers.
    static func parse(_ parts: [String], from first: Int) -> [ParsedAddress] {
        var postcode: String?
        var qualifiers: [String] = []
        for part in parts[(first + 1)...] {
            var words: [Substring] = []
            for word in part.split(whereSeparator: \.isWhitespace) {
                if postcode == nil && isPostcode(word) { postcode = String(word) } else { words.append(word) }
            }
            let q = TextNormalizer.normalize(words.joined(separator: " "))
            if !q.isEmpty { qualifiers.append(q) }
        }
        let head = parts[first]
        if TextNormalizer.containsCJK(head) { return parseChinese(head, postcode: postcode, qualifiers: qualifiers) }
        let words = head.split(whereSeparator: \.isWhitespace)
        let numbered = words.indices.filter { HouseNumber.looksLikeNumber(words[$0]) }
        guard !numbered.isEmpty else {
            return [ParsedAddress(street: head, postcode: postcode, qualifiers: qualifiers)]
        }
        // A street's name may hold a number ("5th Avenue", "Calle 13", "Route 66"): every number-like word is read as
        // the house number in turn, and the whole text as a street without one; the street index tells which names
        // exist, not the digits.
        var readings = numbered.flatMap { parse(words, numberAt: $0, postcode: postcode, qualifiers: qualifiers) }
        readings.append(ParsedAddress(street: head, postcode: postcode, qualifiers: qualifiers))
        return readings
    }

    /// `words` with the house number at `k`: the street before it (or, for a number first, after it, as in English).
    static func parse(_ words: [Substring], numberAt k: Int, postcode: String?, qualifiers: [String]) -> [ParsedAddress] {
        var readings: [ParsedAddress] = []
        if k > 0 {
            // "Mannerheimintie 13 a 5, Helsinki": number, then an optional staircase letter, a unit, a postcode, a city.
            var numberText = String(words[k])
            var i = k + 1
            if i < words.count, words[i].count == 1, words[i].allSatisfy(\.isLetter) {
                numberText += String(words[i])
                i += 1
            }
            var unit: String?
            var code = postcode
            if i < words.count, words[i].allSatisfy(\.isNumber), words[i].count < 4 {
                unit = String(words[i])
                i += 1
            }
            if i < words.count, code == nil, isPostcode(words[i]) {
                code = String(words[i])
                i += 1
            }
            var more = qualifiers
            if i < words.count {
                let rest = TextNormalizer.normalize(words[i...].joined(separator: " "))
                if !rest.isEmpty { more.insert(rest, at: 0) }
            }
            if let number = HouseNumber(numberText) {
                readings.append(
                    ParsedAddress(
                        street: words[..<k].joined(separator: " "),
                        number: number,
                        numberText: numberText,
                        unit: unit,
                        postcode: code,
                        qualifiers: more
                    )
                )
            }
        } else if words.count > 1, let number = HouseNumber(String(words[0])) {
            // "13 Main Street": the number first, as in English.
            readings.append(
                ParsedAddress(
                    street: words[1...].joined(separator: " "),
                    number: number,
                    numberText: String(words[0]),
                    postcode: postcode,
                    qualifiers: qualifiers
                )
            )
        }
        return readings
    }

    /// "建国路5号", "北京市朝阳区建国路5号": the number before 号, the street any suffix of the text before it.
    static func parseChinese(_ text: String, postcode: String?, qualifiers: [String]) -> [ParsedAddress] {
        let scalars = Array(text.unicodeScalars.filter { !$0.properties.isWhitespace })
        // The number before 号, or digits ending the text ("中关村南大街 7", as typed without 号).
        let end = scalars.lastIndex(of: "号") ?? (scalars.last.map { ("0"..."9").contains($0) } == true ? scalars.count : nil)
        guard let hao = end else {
            return [
                ParsedAddress(street: String(String.UnicodeScalarView(scalars)), postcode: postcode, qualifiers: qualifiers, streetIsSuffix: true)
            ]
        }
        var start = hao
        while start > 0, ("0"..."9").contains(scalars[start - 1]) { start -= 1 }
        guard start < hao, start > 0 else { return [] }
        let digits = String(String.UnicodeScalarView(scalars[start..<hao]))
        guard let number = HouseNumber(digits) else { return [] }
        let street = String(String.UnicodeScalarView(scalars[..<start]))
        return [ParsedAddress(street: street, number: number, numberText: digits, postcode: postcode, qualifiers: qualifiers, streetIsSuffix: true)]
    }
}

extension AddressIndex {
    /// Within this distance of a point, reverse geocoding answers the nearest house.
    public static let houseRadius = 60.0
    /// Else, within this distance, the nearest street (by distance to its segments).
    public static let streetRadius = 300.0

    /// Houses and streets matching an address, best first.
    ///
    /// Scores: a house 3.0, a house whose number matched less exactly (13 for "13c", or the range 13-15 for "13")
    /// 2.85, a street for a number it lacks 2.6 (placed by interpolation when it can be) — each plus the street
    /// name's match quality (exact 1.0, one typo 0.85) less 1. A street asked without a number scores its name
    /// quality, so a city of the same name (which adds its importance) still leads it. Qualifiers after a comma add
    /// 0.3 when they name the street's city or a place within 30 km of it, and take 0.6 when they name a place
    /// far away; a postcode adds 0.1 when it is the house's and takes 0.2 when not; `near` adds up to 0.1.
    /// - Parameter placeNear: whether a normalized name is a place within 30 km of a point (nil: unknown name).
    /// - Parameter hidden: houses to pass over, as if they were not in the index (`AddressBook`'s overridden ones).
    /// - Parameter hiddenStreet: streets to pass over (`AddressLayer`'s, taken into the layer of changes).
    /// - Parameter elsewhere: whether another index searched beside this one has a street of a normalized name
    ///   (`AddressLayer`): then this one looks for no typo of it, nor for a shorter Chinese suffix, as one index of
    ///   both would not.
    public func search(
        _ query: GeocodeQuery,
        placeNear: (String, Coordinate2) -> Bool?,
        hidden: (Int32) -> Bool = { _ in false },
        hiddenStreet: (Int32) -> Bool = { _ in false },
        elsewhere: (String) -> Bool = { _ in false },
        typos: TypoVariants? = nil
    ) -> [AddressMatch] {
        guard !isEmpty else { return [] }
        var best: [String: AddressMatch] = [:]
        for reading in query.readings {
            for (street, quality) in streetCandidates(reading, hidden: hiddenStreet, elsewhere: elsewhere, typos: typos) {
                guard var match = self.match(reading, in: Int(street), quality: quality, hidden: hidden) else { continue }
                match.score += qualifierScore(
                    reading,
                    street: streets[Int(street)],
                    at: Coordinate2(match.latitude, match.longitude),
                    placeNear: placeNear
                )
                if let near = query.near {
                    let d = Self.distance(Coordinate2(near.latitude, near.longitude), Coordinate2(match.latitude, match.longitude))
                    match.score += 0.1 * exp(-d / 20_000)
                }
                let key = match.kind == .house ? match.id : "street:\(street)"
                if match.score > best[key]?.score ?? -.infinity { best[key] = match }
            }
        }
        return best.values.sorted { ($0.score, $1.id) > ($1.score, $0.id) }.prefix(query.limit).map { $0 }
    }

    /// Streets whose name matches the reading's street, with the quality of the match: 1 for the street's own name,
    /// 0.98 for another of its names (another language's, or a former name that another street now bears), 0.85
    /// less as much for one typo. Hidden streets are not there; nor is any here when `elsewhere` has the name.
    func streetCandidates(_ reading: ParsedAddress, hidden: (Int32) -> Bool, elsewhere: (String) -> Bool, typos: TypoVariants?) -> [(Int32, Double)] {
        func exact(_ found: [Int32], _ name: String, quality: Double = 1) -> [(Int32, Double)] {
            found.map { s in (s, TextNormalizer.normalize(streets[Int(s)].name) == name ? quality : quality - 0.02) }
        }
        if reading.streetIsSuffix {
            // The longest suffix that is a street name.
            let scalars = Array(reading.street.unicodeScalars)
            for start in scalars.indices {
                let name = TextNormalizer.normalize(String(String.UnicodeScalarView(scalars[start...])))
                if let found = visibleStreets(named: name, hidden: hidden) { return exact(found, name) }
                if elsewhere(name) { return [] }
            }
            return []
        }
        let name = TextNormalizer.normalize(reading.street)
        guard !name.isEmpty else { return [] }
        if let found = visibleStreets(named: name, hidden: hidden) { return exact(found, name) }
        if elsewhere(name) { return [] }
        // One typo: a name and the query one edit apart share a one-deletion variant (or one is the other's).
        let typed = Array(name.unicodeScalars)
        guard typed.count >= 5 else { return [] }
        var names = Set(self.names(deletingTo: FNV1a.hash(name)).map { self.names[Int($0)] })
        let variants = (typos ?? TypoVariants()).of(name)
        for (variant, hash) in zip(variants.strings, variants.hashes) {
            if aliases[variant] != nil { names.insert(variant) }
            for n in self.names(deletingTo: hash) { names.insert(self.names[Int(n)]) }
        }
        var out: [(Int32, Double)] = []
        for candidate in names.sorted() where EditDistance.within(typed, Array(candidate.unicodeScalars), limit: 1) != nil {
            out.append(contentsOf: exact(aliases[candidate]!.filter { !hidden($0) }, candidate, quality: 0.85))
        }
        return out
    }

    /// The one-deletion variants of the names a query looks up for a typo and their hashes, made once for every index
    /// the query asks (`AddressLayer` asks two: making them was a fifth of a geocode's time).
    public final class TypoVariants {
        private var made: [String: (strings: [String], hashes: [UInt64])] = [:]

        public init() {}

        func of(_ name: String) -> (strings: [String], hashes: [UInt64]) {
            if let known = made[name] { return known }
            let strings = AddressIndex.oneDeletions(name).sorted()
            let variants = (strings, strings.map { FNV1a.hash($0) })
            made[name] = variants
            return variants
        }
    }

    /// The streets of a normalized name that are not hidden; nil when there are none.
    func visibleStreets(named name: String, hidden: (Int32) -> Bool) -> [Int32]? {
        guard let found = aliases[name] else { return nil }
        let visible = found.filter { !hidden($0) }
        return visible.isEmpty ? nil : visible
    }

    /// The best answer on one street for a reading.
    func match(_ reading: ParsedAddress, in s: Int, quality: Double, hidden: (Int32) -> Bool = { _ in false }) -> AddressMatch? {
        let street = streets[s]
        let base = quality - 1
        guard let number = reading.number else {
            return streetMatch(s, score: base + 1.0, interpolation: nil, point: street.anchor, unresolved: nil, reading: reading)
        }
        func house(_ index: Int32, score: Double) -> AddressMatch {
            let a = houses[Int(index)]
            return AddressMatch(
                kind: .house,
                id: a.id,
                street: street.name,
                housenumber: a.housenumber,
                unit: reading.unit ?? a.unit,
                postcode: a.postcode ?? street.postcode,
                city: a.city ?? street.city,
                latitude: a.latitude,
                longitude: a.longitude,
                score: base + score,
                interpolation: nil,
                unresolved: nil
            )
        }
        func bestHouse(_ indices: [Int32]) -> Int32 {
            // Several objects with one number (a building and the shops in it): the one whose postcode was asked,
            // else the building (a way or relation), as Nominatim answers the house.
            if let code = reading.postcode, let same = indices.first(where: { houses.hasPostcode(Int($0), code) }) { return same }
            return indices.first { !houses.isNode(Int($0)) } ?? indices[0]
        }
        let exact = houses(numbered: number.key, on: s).filter { !hidden($0) }
        if !exact.isEmpty { return house(bestHouse(exact), score: 3.0) }
        if !number.letters.isEmpty || number.last > number.number {
            let plain = houses(numbered: "\(number.number)", on: s).filter { !hidden($0) }
            if !plain.isEmpty { return house(bestHouse(plain), score: 2.85) }
        }
        for (key, group) in numberGroups(on: s) {
            let indices = group.filter { !hidden($0) }
            guard !indices.isEmpty, let other = HouseNumber(key) else { continue }
            // "13" asked: the range 13-15 covers it, and 13A (the first letter) stands for it.
            if other.covers(number) || (number.letters.isEmpty && other.number == number.number && other.last == other.number) {
                return house(bestHouse(indices), score: 2.85)
            }
        }
        let unresolved = reading.numberText
        if let p = interpolateOnLine(number.number, street: street) {
            return streetMatch(s, score: base + 2.6, interpolation: "line", point: p, unresolved: unresolved, reading: reading)
        }
        if let p = interpolateBetweenNeighbours(number.number, street: street, hidden: hidden) {
            return streetMatch(s, score: base + 2.6, interpolation: "neighbours", point: p, unresolved: unresolved, reading: reading)
        }
        return streetMatch(s, score: base + 2.5, interpolation: nil, point: street.anchor, unresolved: unresolved, reading: reading)
    }

    /// A street's id as answers carry it: its longest line's, else its first house's.
    func streetID(_ s: Int) -> String {
        let street = streets[s]
        return street.lines.max { Self.length(lines[Int($0)].points) < Self.length(lines[Int($1)].points) }.map { lines[Int($0)].id }
            ?? street.addresses.first.map { houses.id(Int($0)) } ?? "street:\(s)"
    }

    func streetMatch(_ s: Int, score: Double, interpolation: String?, point: Coordinate2, unresolved: String?, reading: ParsedAddress) -> AddressMatch
    {
        let street = streets[s]
        return AddressMatch(
            kind: .street,
            id: streetID(s),
            street: street.name,
            housenumber: nil,
            unit: nil,
            postcode: street.postcode,
            city: street.city,
            latitude: point.latitude,
            longitude: point.longitude,
            score: score,
            interpolation: interpolation,
            unresolved: unresolved
        )
    }

    /// A position for `number` on an `addr:interpolation` line of the street whose numbered vertices bracket it, by
    /// length along the line between them (OSM's rule); the line's parity must allow the number.
    func interpolateOnLine(_ number: Int, street: Street) -> Coordinate2? {
        for l in street.lines {
            let line = lines[Int(l)]
            guard line.kind != .street else { continue }
            if line.kind == .odd && number % 2 == 0 { continue }
            if line.kind == .even && number % 2 != 0 { continue }
            for (a, b) in zip(line.numbers, line.numbers.dropFirst()) {
                let low = min(a.number, b.number)
                let high = max(a.number, b.number)
                guard low < number, number < high, a.vertex < b.vertex else { continue }
                let piece = Array(line.points[a.vertex...b.vertex])
                let t = Double(number - a.number) / Double(b.number - a.number)
                return Self.point(along: piece, at: t * Self.length(piece))
            }
        }
        return nil
    }

    /// A position for `number` between the street's nearest lower and higher house numbers — of the same parity
    /// when the street has such on both sides (one side of a street is usually odd, the other even) — in proportion
    /// to the numbers; nil unless there are numbers on both sides, within 1 km of each other.
    func interpolateBetweenNeighbours(_ number: Int, street: Street, hidden: (Int32) -> Bool = { _ in false }) -> Coordinate2? {
        var lower: [Bool: (Int, Coordinate2)] = [:]
        var higher: [Bool: (Int, Coordinate2)] = [:]
        for i in street.addresses where !hidden(i) {
            guard let n = HouseNumber(houses.housenumber(Int(i))) else { continue }
            let sameParity = n.number % 2 == number % 2
            let p = houses.position(Int(i))
            if n.number < number, n.number > lower[sameParity]?.0 ?? Int.min { lower[sameParity] = (n.number, p) }
            if n.number > number, n.number < higher[sameParity]?.0 ?? Int.max { higher[sameParity] = (n.number, p) }
        }
        let pair = lower[true] != nil && higher[true] != nil ? (lower[true]!, higher[true]!) : nil
        let fallback: ((Int, Coordinate2), (Int, Coordinate2))? = {
            let lows = [lower[true], lower[false]].compactMap { $0 }
            let highs = [higher[true], higher[false]].compactMap { $0 }
            guard let l = lows.max(by: { $0.0 < $1.0 }), let h = highs.min(by: { $0.0 < $1.0 }) else { return nil }
            return (l, h)
        }()
        guard let (low, high) = pair ?? fallback, Self.distance(low.1, high.1) <= 1_000 else { return nil }
        let t = Double(number - low.0) / Double(high.0 - low.0)
        return Coordinate2(low.1.latitude + t * (high.1.latitude - low.1.latitude), low.1.longitude + t * (high.1.longitude - low.1.longitude))
    }

    func qualifierScore(_ reading: ParsedAddress, street: Street, at point: Coordinate2, placeNear: (String, Coordinate2) -> Bool?) -> Double {
        var score = 0.0
        if let code = reading.postcode {
            score += code == street.postcode ? 0.1 : -0.2
        }
        let city = street.city.map(TextNormalizer.normalize)
        var mismatch = false
        for q in reading.qualifiers {
            if q == city {
                score += 0.3
            } else if let near = placeNear(q, point) {
                if near { score += 0.3 } else { mismatch = true }
            }
        }
        return mismatch ? score - 0.6 : score
    }
}
