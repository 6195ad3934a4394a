import Foundation
import GeoCore
import Synchronization
import TextIndex

/// An address as a search box has it while it is typed: the street as far as typed, or whole with the house number
/// begun ("Mannerheimintie 1" → 1, 1A, 10, 11 …; "中关村南大街5" → 5号, 50号 …).
struct PartialAddress: Equatable {
    /// The street's name as typed (normalized).
    var street: String
    /// The house number as far as typed (its key: lower case, no spaces), nil when none was begun.
    var number: String?
    /// For Chinese text: the street may be any suffix of `street` ("北京市海淀区中关村南大街" → "中关村南大街").
    var streetIsSuffix = false

    /// The readings of a search box's text: the whole text as a street begun, and — where a word of it could be a
    /// house number begun — the words before it as a whole street ("Calle 13" is a street begun, and also the street
    /// "Calle" with number 13 begun: the street index tells which names exist). Only the first comma part counts.
    static func parse(_ text: String) -> [PartialAddress] {
        guard let head = text.split(whereSeparator: { ",，;；".contains($0) }).first.map(TextNormalizer.trimmed), !head.isEmpty else {
            return []
        }
        if TextNormalizer.containsCJK(head) {
            var scalars = Array(head.unicodeScalars.filter { !$0.properties.isWhitespace })
            if scalars.last == "号" { scalars.removeLast() }
            var start = scalars.count
            while start > 0, ("0"..."9").contains(scalars[start - 1]) { start -= 1 }
            let street = TextNormalizer.normalize(String(String.UnicodeScalarView(scalars[..<start])))
            guard !street.isEmpty else { return [] }
            let digits = String(String.UnicodeScalarView(scalars[start...]))
            return [PartialAddress(street: street, number: digits.isEmpty ? nil : digits, streetIsSuffix: true)]
        }
        let words = head.split(whereSeparator: \.isWhitespace)
        var readings: [PartialAddress] = []
        let whole = TextNormalizer.normalize(head)
        if !whole.isEmpty { readings.append(PartialAddress(street: whole)) }
        if words.count >= 2, let last = words.last, HouseNumber.looksLikeNumber(last) {
            let street = TextNormalizer.normalize(words.dropLast().joined(separator: " "))
            if !street.isEmpty { readings.append(PartialAddress(street: street, number: last.lowercased())) }
        }
        if words.count >= 2, HouseNumber.looksLikeNumber(words[0]) {
            // "13 Main St": the number first, as in English, the street begun after it.
            let street = TextNormalizer.normalize(words.dropFirst().joined(separator: " "))
            if !street.isEmpty { readings.append(PartialAddress(street: street, number: words[0].lowercased())) }
        }
        return readings
    }
}

extension AddressIndex {
    /// The numbers of the name variants, in sorted order (for streets by a prefix of their name), made on first use.
    var sortedNames: [Int32] {
        nameOrder.withLock { order in
            if let order { return order }
            let made = names.indices.sorted { names[$0] < names[$1] }.map { Int32($0) }
            order = made
            return made
        }
    }

    /// Streets with a name variant that begins with `prefix` (normalized), the shortest names first.
    func streets(beginning prefix: String, limit: Int) -> [(street: Int32, exact: Bool)] {
        let order = sortedNames
        var low = 0
        var high = order.count
        while low < high {
            let mid = (low + high) / 2
            if names[Int(order[mid])] < prefix { low = mid + 1 } else { high = mid }
        }
        var matched: [(name: String, street: Int32)] = []
        var i = low
        while i < order.count, names[Int(order[i])].hasPrefix(prefix) {
            let name = names[Int(order[i])]
            for s in aliases[name] ?? [] { matched.append((name, s)) }
            i += 1
            if matched.count > 4 * limit + 64 { break }
        }
        matched.sort { ($0.name.count, $0.name, $0.street) < ($1.name.count, $1.name, $1.street) }
        var seen = Set<Int32>()
        var out: [(street: Int32, exact: Bool)] = []
        for (name, s) in matched where seen.insert(s).inserted {
            out.append((s, name == prefix))
            if out.count == limit { break }
        }
        return out
    }

    /// Houses and streets as a search box completes what is typed, best first.
    ///
    /// A house number begun on a street named in full gives that street's houses whose number begins so — the number
    /// as typed first, then by number ("1" → 1, 1A, 10, 11 …), each scored 3.0 less 0.01 per place in that order, to
    /// stay in the geocoder's scale where a house is 3.0; a street begun gives the streets whose name begins so (a name
    /// typed in full 1.0, else 0.9, shorter names first). Near `near`, a street's nearer namesake first.
    /// - Parameter hidden: houses to pass over (`AddressBook`'s overridden ones).
    public func complete(_ text: String, near: Coordinate?, limit: Int, hidden: (Int32) -> Bool = { _ in false }) -> [AddressMatch] {
        guard !isEmpty else { return [] }
        var best: [String: AddressMatch] = [:]
        func offer(_ match: AddressMatch) {
            var match = match
            if let near {
                let d = Self.distance(Coordinate2(near.latitude, near.longitude), Coordinate2(match.latitude, match.longitude))
                match.score += 0.005 * exp(-d / 20_000)
            }
            let key = match.kind == .house ? match.id : "street:\(match.street)|\(match.city ?? "")|\(match.id)"
            if match.score > best[key]?.score ?? -.infinity { best[key] = match }
        }
        for reading in PartialAddress.parse(text) {
            let named: [Int32]
            if reading.streetIsSuffix {
                // The longest suffix of the text that is a street's name, or failing that, that begins one.
                let scalars = Array(reading.street.unicodeScalars)
                var found: [Int32] = []
                var begun: [(street: Int32, exact: Bool)] = []
                for start in scalars.indices {
                    let suffix = String(String.UnicodeScalarView(scalars[start...]))
                    if let exact = aliases[suffix] {
                        found = exact
                        break
                    }
                    if begun.isEmpty && reading.number == nil && scalars.count - start >= 2 { begun = streets(beginning: suffix, limit: limit) }
                }
                if reading.number == nil && found.isEmpty {
                    for (s, _) in begun { offer(streetMatch(Int(s), score: 0.9, interpolation: nil, point: streets[Int(s)].anchor, unresolved: nil)) }
                    continue
                }
                named = found
            } else if reading.number != nil {
                named = aliases[reading.street] ?? []
            } else {
                for (s, exact) in streets(beginning: reading.street, limit: limit) {
                    offer(streetMatch(Int(s), score: exact ? 1.0 : 0.9, interpolation: nil, point: streets[Int(s)].anchor, unresolved: nil))
                }
                continue
            }
            guard let typed = reading.number else {
                for s in named { offer(streetMatch(Int(s), score: 1.0, interpolation: nil, point: streets[Int(s)].anchor, unresolved: nil)) }
                continue
            }
            for s in named {
                var numbers: [(key: String, houses: [Int32])] = numberGroups(on: Int(s)).filter { $0.key.hasPrefix(typed) }
                numbers.sort { a, b in
                    let x = HouseNumber(a.key)
                    let y = HouseNumber(b.key)
                    return (a.key != typed ? 1 : 0, x?.number ?? .max, a.key) < (b.key != typed ? 1 : 0, y?.number ?? .max, b.key)
                }
                var rank = 0
                for (_, group) in numbers {
                    let visible = group.filter { !hidden($0) }
                    guard let house = visible.first(where: { !houses.isNode(Int($0)) }) ?? visible.first else { continue }
                    offer(houseMatch(house, street: Int(s), score: 3.0 - 0.01 * Double(min(rank, 50))))
                    rank += 1
                    if rank >= limit { break }
                }
            }
        }
        return best.values.sorted { ($0.score, $1.id) > ($1.score, $0.id) }.prefix(limit).map { $0 }
    }

    /// A house as an answer.
    func houseMatch(_ index: Int32, street s: Int, score: Double) -> AddressMatch {
        let a = houses[Int(index)]
        let street = streets[s]
        return AddressMatch(
            kind: .house,
            id: a.id,
            street: street.name,
            housenumber: a.housenumber,
            unit: a.unit,
            postcode: a.postcode ?? street.postcode,
            city: a.city ?? street.city,
            latitude: a.latitude,
            longitude: a.longitude,
            score: score,
            interpolation: nil,
            unresolved: nil
        )
    }

    /// A street as an answer (`streetMatch(_:score:…reading:)` without a reading).
    func streetMatch(_ s: Int, score: Double, interpolation: String?, point: Coordinate2, unresolved: String?) -> AddressMatch {
        streetMatch(
            s,
            score: score,
            interpolation: interpolation,
            point: point,
            unresolved: unresolved,
            reading: ParsedAddress(street: "", qualifiers: [])
        )
    }
}
