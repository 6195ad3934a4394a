import Foundation
import GeoCore
import TextIndex

extension Gazetteer {
    /// Places matching an address or place name, best first.
    ///
    /// Ranking: a match-quality score (exact name 1.0, transliteration 0.98, alternate name 0.95, prefix 0.7, typo
    /// 0.6 less 0.1 per further edit) plus 0.05 × importance (log10 population, +1 for capitals, division level), plus
    /// 0.45 when every qualifier after a comma ("Springfield, IL") names the place's admin1/admin2/country (less
    /// 0.6 when one does not), plus up to 0.4 for nearness to `near`. Chinese addresses parsed into divisions
    /// score from 2.0 up, so they lead. Near-duplicates (same name within 20 km) keep the better one.
    public func geocode(_ query: GeocodeQuery) -> [GeocodeResult] { geocode(query, placeTypos: true) }

    /// `placeTypos: false` skips spelling neighbours of place names (the costly part of a query that names no place),
    /// for a query an imported address already answers.
    public func geocode(_ query: GeocodeQuery, placeTypos: Bool) -> [GeocodeResult] {
        var scored: [Int32: Double] = [:]
        var unresolved: [Int32: String] = [:]
        func offer(_ entity: Int32, _ score: Double) {
            if let country = query.country, self.country(of: entity) != country { return }
            var s = score
            if let near = query.near {
                let d = GreatCircle.distance(near, position(of: entity))
                s += 0.4 * exp(-d / 200_000)
            }
            if s > scored[entity] ?? -.infinity { scored[entity] = s }
        }

        // A Chinese address that parses into divisions is answered by them: spelling neighbours of the whole text (a
        // scan of every key of its byte length, most of such a query's time) would only trail them.
        var parsedAsAddress = false
        // The entities the text names: one of their names is its first part exactly (quality 0.95 and up; a prefix
        // scores 0.7 at most), or a Chinese address reads into them whole.
        var named = Set<Int32>()
        if TextNormalizer.containsCJK(query.text) {
            for match in parseChineseAddress(query.text) {
                parsedAsAddress = true
                let entity = Int32(places.count + match.division)
                // Divisions that read the whole text ("北京市海淀区") are named by it.
                if match.unresolved.isEmpty { named.insert(entity) }
                offer(entity, 2.0 + 0.1 * Double(match.depth) + 0.05 * importance(entity) / 8)
                if !match.unresolved.isEmpty { unresolved[entity] = match.unresolved }
            }
        }

        let separators: (Character) -> Bool = { Self.isPartSeparator($0) }
        let rawParts = query.text.split(whereSeparator: separators).map(TextNormalizer.trimmed)
            .filter { !TextNormalizer.normalize($0).isEmpty }
        let parts = rawParts.map { TextNormalizer.normalize($0) }
        var namedAsTyped = false
        if let name = parts.first {
            let qualifiers = Array(parts.dropFirst())
            let found = candidates(name, allowTypos: placeTypos && !parsedAsAddress)
            namedAsTyped = found.contains { $0.1 >= 0.9 }
            for (entity, quality) in found {
                if quality >= 0.9 { named.insert(entity) }
                offer(entity, quality + 0.4 * importance(entity) / 8 + qualifierScore(entity, qualifiers))
            }
            // "Paris Texas", "Haidian Beijing": when the whole text names nothing exactly, a trailing word group may
            // be a qualifier even without a comma.
            if qualifiers.isEmpty && !found.contains(where: { $0.1 >= 0.9 }) {
                let words = name.split(separator: " ").map(String.init)
                if words.count >= 2 {
                    for split in 1..<words.count {
                        let head = words[..<split].joined(separator: " ")
                        let tail = words[split...].joined(separator: " ")
                        for (entity, quality) in candidates(head, allowPrefix: false, allowTypos: placeTypos) where qualifierMatches(entity, tail) {
                            offer(entity, quality + 0.4 * importance(entity) / 8 + 0.45)
                        }
                    }
                }
            }
        }

        // "1600 Amphitheatre Parkway, Mountain View, CA": when the first part names no place, the first later part
        // that does is the place, the parts after it its qualifiers, and the parts before it a street address the
        // gazetteer cannot resolve — answered as the place, with that text reported unresolved.
        if !namedAsTyped && parts.count >= 2 && !TextNormalizer.containsCJK(query.text) {
            for k in 1..<parts.count {
                let found = candidates(parts[k], allowPrefix: false, allowTypos: placeTypos).filter { $0.1 >= 0.9 }
                guard !found.isEmpty else { continue }
                let qualifiers = Array(parts[(k + 1)...])
                let street = rawParts[..<k].joined(separator: ", ")
                for (entity, quality) in found {
                    let score = quality - 0.1 + 0.4 * importance(entity) / 8 + qualifierScore(entity, qualifiers)
                    if score > scored[entity] ?? -.infinity { unresolved[entity] = street }
                    offer(entity, score)
                }
                break
            }
        }

        let ranked = scored.sorted { a, b in
            if a.value != b.value { return a.value > b.value }
            return a.key < b.key
        }
        var results: [GeocodeResult] = []
        var kept: [(name: String, position: Coordinate)] = []
        for (entity, score) in ranked {
            var result = makeResult(entity, score: score, language: query.language, unresolved: unresolved[entity], near: query.near)
            result.namedAsTyped = named.contains(entity)
            let position = Coordinate(uncheckedLatitude: result.latitude, longitude: result.longitude)
            let key = TextNormalizer.normalize(isDivision(entity) ? division(entity).shortName : result.name)
            if kept.contains(where: { $0.name == key && GreatCircle.distance($0.position, position) < 20_000 }) { continue }
            kept.append((key, position))
            results.append(result)
            if results.count == query.limit { break }
        }
        return results
    }

    /// The characters between the parts of an address: "," and ";", full-width or not, and "、".
    static func isPartSeparator(_ character: Character) -> Bool {
        guard let scalar = character.unicodeScalars.first, character.unicodeScalars.count == 1 else { return false }
        switch scalar {
        case ",", ";", "，", "、", "；": return true
        default: return false
        }
    }

    /// Entities whose names match `name` exactly, by prefix, or within the typo budget, with a match quality.
    func candidates(_ name: String, allowPrefix: Bool = true, allowTypos: Bool = true) -> [(Int32, Double)] {
        var best: [Int32: Double] = [:]
        func take(_ key: Int32, _ quality: Double) {
            let entity = names.targets[Int(key)]
            if quality > best[entity] ?? 0 { best[entity] = quality }
        }
        for key in names.exact(name) {
            switch names.kinds[Int(key)] {
            case .primary: take(key, 1.0)
            case .transliteration: take(key, 0.98)
            case .alternate: take(key, 0.95)
            }
        }
        if allowPrefix {
            for key in names.prefixed(name, limit: 300, importance: importance) {
                take(key, names.kinds[Int(key)] == .alternate ? 0.65 : 0.7)
            }
        }
        // Typos only when nothing matches as typed: no exact name and no name starting with the text.
        if best.isEmpty && allowTypos {
            let length = name.unicodeScalars.count
            for (key, edits) in names.typos(name, maxEdits: EditDistance.allowedTypos(length: length)) {
                take(key, 0.6 - 0.1 * Double(edits - 1))
            }
        }
        return Array(best)
    }

    /// +0.45 when every qualifier names one of the entity's enclosing areas, −0.6 when one does not.
    func qualifierScore(_ entity: Int32, _ qualifiers: [String]) -> Double {
        guard !qualifiers.isEmpty else { return 0 }
        return qualifiers.allSatisfy { qualifierMatches(entity, $0) } ? 0.45 : -0.6
    }

    /// Whether a normalized qualifier names the entity's admin1, admin2, country (name or code), a US state code,
    /// or for Chinese divisions a parent division (Chinese or pinyin).
    func qualifierMatches(_ entity: Int32, _ qualifier: String) -> Bool {
        if isDivision(entity) {
            var parent = division(entity).parent
            while let code = parent, let j = divisionIndexByAdcode[code] {
                let d = divisions[j]
                if !d.isPlaceholder, [d.name, d.shortName, d.pinyin].contains(where: { TextNormalizer.normalize($0) == qualifier }) { return true }
                parent = d.parent
            }
            return countryCodes[qualifier] == "CN"
        }
        let place = places[Int(entity)]
        if countryCodes[qualifier] == place.country { return true }
        let admin1 = TextNormalizer.normalize(place.admin1)
        if !admin1.isEmpty {
            if admin1 == qualifier || admin1.hasPrefix(qualifier + " ") { return true }
            if admin1Codes[place.country + "|" + admin1]?.contains(qualifier) == true { return true }
        }
        let admin2 = TextNormalizer.normalize(place.admin2)
        return !admin2.isEmpty && (admin2 == qualifier || admin2.hasPrefix(qualifier + " "))
    }

    func country(of entity: Int32) -> String { isDivision(entity) ? "CN" : places.country(Int(entity)) }

    func position(of entity: Int32) -> Coordinate {
        if isDivision(entity) {
            let d = division(entity)
            return Coordinate(uncheckedLatitude: d.latitude, longitude: d.longitude)
        }
        return Coordinate(uncheckedLatitude: places.latitude(Int(entity)), longitude: places.longitude(Int(entity)))
    }

    func makeResult(_ entity: Int32, score: Double, language: GeocodeQuery.Language, unresolved: String?, near: Coordinate?) -> GeocodeResult {
        let distance = near.map { GreatCircle.distance($0, position(of: entity)) }
        let rounded = (score * 1000).rounded() / 1000
        if isDivision(entity) {
            let d = division(entity)
            let chain = divisionChain(d)
            let province = chain.first { $0.level == .province }
            let city = chain.first { $0.level == .city && !$0.isPlaceholder }
            let chineseDisplay = chain.filter { !$0.isPlaceholder }.map(\.name).joined()
            let englishName = "\(d.pinyin) \(Gazetteer.englishSuffix(d))".trimmingCharacters(in: .whitespaces)
            let englishDisplay = (chain.filter { !$0.isPlaceholder }.reversed().map { $0.pinyin } + ["China"]).joined(separator: ", ")
            return GeocodeResult(
                id: "adcode:\(d.adcode)",
                name: language == .zh ? d.name : englishName,
                displayName: language == .zh ? chineseDisplay : englishDisplay,
                latitude: d.latitude,
                longitude: d.longitude,
                country: "CN",
                admin1: province.map { language == .zh ? $0.name : $0.pinyin } ?? "",
                admin2: d.level == .district ? (city.map { language == .zh ? $0.name : $0.pinyin } ?? "") : "",
                population: nil,
                type: d.level == .city ? "prefecture" : d.level.rawValue,
                score: rounded,
                adcode: String(d.adcode),
                unresolved: unresolved,
                distance: distance
            )
        }
        // Field by field from the place columns: alternate names are decoded only for a Chinese name.
        let i = Int(entity)
        let placeName = places.name(i)
        let name = language == .zh ? (places.chineseName(i) ?? placeName) : placeName
        let country = places.country(i)
        let admin1 = places.admin1s.string(i)
        let admin2 = places.admin2s.string(i)
        let countryName = countries[country]?.name ?? country
        var display = [name]
        for part in [admin2, admin1, countryName] where !part.isEmpty && !display.contains(part) { display.append(part) }
        return GeocodeResult(
            id: "geonames:\(places.ids[i])",
            name: name,
            displayName: display.joined(separator: ", "),
            latitude: places.latitude(i),
            longitude: places.longitude(i),
            country: country,
            admin1: admin1,
            admin2: admin2,
            population: places.population(i),
            type: "city",
            score: rounded,
            adcode: nil,
            unresolved: unresolved,
            distance: distance
        )
    }

    /// The division and its ancestors, province first.
    func divisionChain(_ division: Division) -> [Division] {
        var chain = [division]
        var parent = division.parent
        while let code = parent, let j = divisionIndexByAdcode[code] {
            chain.insert(divisions[j], at: 0)
            parent = divisions[j].parent
        }
        return chain
    }

    static func englishSuffix(_ d: Division) -> String {
        let suffixes: [(String, String)] = [
            ("特别行政区", "SAR"), ("自治区", "Autonomous Region"), ("自治州", "Autonomous Prefecture"), ("自治县", "Autonomous County"),
            ("自治旗", "Autonomous Banner"), ("地区", "Prefecture"), ("省", "Province"), ("市", d.level == .province ? "" : "City"),
            ("区", "District"), ("县", "County"), ("盟", "League"), ("旗", "Banner"),
        ]
        return suffixes.first { d.name.hasSuffix($0.0) }?.1 ?? ""
    }
}
