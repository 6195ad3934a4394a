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

/// Where an answer of `AddressIndex.complete` stands: the higher score first, then the shorter name it was found by (the
/// street's name variant as begun or named; for a house, its street's), that name, and the id. A total order on what
/// each index finds alone, so the best answers of two indexes merged by it are the best one index of both would give
/// (`AddressLayer`, `AddressBook`).
public struct CompletionRank: Comparable, Sendable {
    var score: Double
    var length: Int
    var name: String
    var id: String

    /// `a` comes before `b`.
    public static func < (a: CompletionRank, b: CompletionRank) -> Bool {
        if a.score != b.score { return a.score > b.score }
        return (a.length, a.name, a.id) < (b.length, b.name, b.id)
    }
}

extension AddressIndex {
    /// The name variants by length (in Unicode scalars), then in sorted order: those of length `l` are
    /// `order[starts[l]..<starts[l + 1]]`. For the streets that begin with a prefix, shortest first; made on first use.
    struct NameOrder: Sendable {
        var order: [Int32]
        var starts: [Int]
    }

    var namesByLength: NameOrder {
        nameOrder.withLock { made in
            if let made { return made }
            let lengths = names.map(\.unicodeScalars.count)
            let order = names.indices.sorted { (lengths[$0], names[$0]) < (lengths[$1], names[$1]) }.map { Int32($0) }
            var starts = [Int](repeating: 0, count: (lengths.max() ?? 0) + 2)
            for length in lengths { starts[length + 1] += 1 }
            for l in starts.indices.dropFirst() { starts[l] += starts[l - 1] }
            made = NameOrder(order: order, starts: starts)
            return made!
        }
    }

    /// The first `limit` streets with a name variant that begins with `prefix` (normalized) by (the variant's length,
    /// the variant, the street's id): exactly these, so that two indexes' answers merge into what one index of both
    /// would answer. Each street once, by its first variant in that order.
    func streets(beginning prefix: String, limit: Int, hidden: (Int32) -> Bool = { _ in false }) -> [(street: Int32, name: String)] {
        let byLength = namesByLength
        var out: [(street: Int32, name: String)] = []
        var seen = Set<Int32>()
        var length = prefix.unicodeScalars.count
        while length + 1 < byLength.starts.count, out.count < limit {
            var (low, high) = (byLength.starts[length], byLength.starts[length + 1])
            let end = high
            while low < high {
                let mid = (low + high) / 2
                if names[Int(byLength.order[mid])] < prefix { low = mid + 1 } else { high = mid }
            }
            var i = low
            while i < end, out.count < limit, names[Int(byLength.order[i])].hasPrefix(prefix) {
                let name = names[Int(byLength.order[i])]
                var found = (aliases[name] ?? []).filter { !hidden($0) && !seen.contains($0) }
                if found.count > 1 { found = found.map { ($0, streetID(Int($0))) }.sorted { $0.1 < $1.1 }.map(\.0) }
                for s in found.prefix(limit - out.count) {
                    seen.insert(s)
                    out.append((s, name))
                }
                i += 1
            }
            length += 1
        }
        return out
    }

    /// Houses and streets as a search box completes what is typed, best first.
    ///
    /// A house number begun on a street named in full gives that street's houses whose number begins so — the number
    /// as typed first, then by number ("1" → 1, 1A, 10, 11 …), each scored 3.0 less 0.01 per place in that order, to
    /// stay in the geocoder's scale where a house is 3.0; a street begun gives the streets whose name begins so (a name
    /// typed in full 1.0, else 0.9, shorter names first). Near `near`, a street's nearer namesake first. Ties go by
    /// `CompletionRank`.
    /// - Parameter hidden: houses to pass over (`AddressBook`'s overridden ones).
    /// - Parameter hiddenStreet: streets to pass over (`AddressLayer`'s, taken into the layer of changes).
    public func complete(
        _ text: String,
        near: Coordinate?,
        limit: Int,
        hidden: (Int32) -> Bool = { _ in false },
        hiddenStreet: (Int32) -> Bool = { _ in false }
    ) -> [AddressMatch] {
        completions(text, near: near, limit: limit, hidden: hidden, hiddenStreet: hiddenStreet).map(\.match)
    }

    /// `complete`, each answer with its rank. `elsewhere` as in `search`: a Chinese suffix another index has whole
    /// is not begun here.
    func completions(
        _ text: String,
        near: Coordinate?,
        limit: Int,
        hidden: (Int32) -> Bool = { _ in false },
        hiddenStreet: (Int32) -> Bool = { _ in false },
        elsewhere: (String) -> Bool = { _ in false }
    ) -> [(match: AddressMatch, rank: CompletionRank)] {
        guard !isEmpty else { return [] }
        var best: [String: (match: AddressMatch, rank: CompletionRank)] = [:]
        func offer(_ match: AddressMatch, by name: String) {
            var match = match
            if let near {
                let d = Self.distance(Coordinate2(near.latitude, near.longitude), Coordinate2(match.latitude, match.longitude))
                match.score += 0.005 * exp(-d / 20_000)
            }
            let rank = CompletionRank(score: match.score, length: name.unicodeScalars.count, name: name, id: match.id)
            let key = match.kind == .house ? match.id : "street:\(match.street)|\(match.city ?? "")|\(match.id)"
            if best[key].map({ rank < $0.rank }) ?? true { best[key] = (match, rank) }
        }
        func offerStreet(_ s: Int32, score: Double, by name: String) {
            offer(streetMatch(Int(s), score: score, interpolation: nil, point: streets[Int(s)].anchor, unresolved: nil), by: name)
        }
        for reading in PartialAddress.parse(text) {
            let named: [Int32]
            var namedBy = reading.street
            if reading.streetIsSuffix {
                // The longest suffix of the text that is a street's name, or failing that, that begins one.
                let scalars = Array(reading.street.unicodeScalars)
                var found: [Int32] = []
                var begun: [(street: Int32, name: String)] = []
                for start in scalars.indices {
                    let suffix = String(String.UnicodeScalarView(scalars[start...]))
                    if let exact = visibleStreets(named: suffix, hidden: hiddenStreet) {
                        (found, namedBy) = (exact, suffix)
                        break
                    }
                    if elsewhere(suffix) { break }
                    if begun.isEmpty && reading.number == nil && scalars.count - start >= 2 {
                        begun = streets(beginning: suffix, limit: limit, hidden: hiddenStreet)
                    }
                }
                if reading.number == nil && found.isEmpty {
                    for (s, name) in begun { offerStreet(s, score: 0.9, by: name) }
                    continue
                }
                named = found
            } else if reading.number != nil {
                named = (aliases[reading.street] ?? []).filter { !hiddenStreet($0) }
            } else {
                for (s, name) in streets(beginning: reading.street, limit: limit, hidden: hiddenStreet) {
                    offerStreet(s, score: name == reading.street ? 1.0 : 0.9, by: name)
                }
                continue
            }
            guard let typed = reading.number else {
                for s in named { offerStreet(s, score: 1.0, by: namedBy) }
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
                    offer(houseMatch(house, street: Int(s), score: 3.0 - 0.01 * Double(min(rank, 50))), by: namedBy)
                    rank += 1
                    if rank >= limit { break }
                }
            }
        }
        return best.values.sorted { $0.rank < $1.rank }.prefix(limit).map { $0 }
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
