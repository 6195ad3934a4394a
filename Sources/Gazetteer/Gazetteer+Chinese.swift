import TextIndex

extension Gazetteer {
    struct ChineseMatch {
        /// Index into `divisions` of the deepest division named.
        let division: Int
        /// 1 province, 2 city, 3 district: how much of the hierarchy the text named.
        let depth: Int
        let unresolved: String
    }

    /// Parses a Chinese address into province, city and district, with or without suffixes (省/市/区/县/...), and
    /// returns the deepest division(s) named with the trailing text that named none ("北京市海淀区中关村南大街5号" →
    /// 海淀区 with "中关村南大街5号" unresolved).
    ///
    /// Every reading "province? city? district?" is tried — each level optional, full or short names, a city among
    /// the province's children and a district among the city's (or the province's) descendants — and the one that
    /// reads the most characters wins, then the deepest ("朝阳区" is the district, not the city 朝阳 plus "区").
    /// Ambiguous names (朝阳区 exists in Beijing and in Changchun) yield every candidate of the winning reading.
    func parseChineseAddress(_ text: String) -> [ChineseMatch] {
        let chars = Array(text.filter { !$0.isWhitespace && !"，,、".contains($0) })

        // Division names are Han only: a name read at a position ends within its run of Han ("北京lg": 北京, and no
        // lookup in "lg"). The names at a position are looked up once, though each level's parse asks again.
        var runEnd = Array(repeating: chars.count, count: chars.count + 1)
        for i in stride(from: chars.count - 1, through: 0, by: -1) {
            runEnd[i] = chars[i].unicodeScalars.first.map(TextNormalizer.isCJK) == true ? runEnd[i + 1] : i
        }
        var named: [[(length: Int, divisions: [Int])]?] = Array(repeating: nil, count: chars.count + 1)
        func names(at position: Int) -> [(length: Int, divisions: [Int])] {
            if let known = named[position] { return known }
            var found: [(length: Int, divisions: [Int])] = []
            for length in stride(from: min(longestChineseName, runEnd[position] - position), through: 2, by: -1) {
                if let indices = chineseNames[String(chars[position..<(position + length)])] { found.append((length, indices)) }
            }
            named[position] = found
            return found
        }
        /// Every (length, divisions) of names at `position` that `allowed` accepts.
        func matches(at position: Int, _ allowed: (Division) -> Bool) -> [(length: Int, divisions: [Int])] {
            guard position < chars.count else { return [] }
            return names(at: position).compactMap { name in
                let accepted = name.divisions.filter { allowed(divisions[$0]) }
                return accepted.isEmpty ? nil : (name.length, accepted)
            }
        }
        func isUnder(_ d: Division, _ ancestors: [Int]) -> Bool {
            let codes = Set(ancestors.map { divisions[$0].adcode })
            var parent = d.parent
            while let code = parent {
                if codes.contains(code) { return true }
                parent = divisionIndexByAdcode[code].flatMap { divisions[$0].parent }
            }
            return false
        }

        // Every parse province? city? district? in order; keep the one that reads the most characters, then skips the
        // fewest levels between the ones it names ("辽宁朝阳" is the city 朝阳市, not the county 朝阳县), then the deepest.
        var best: (consumed: Int, gaps: Int, depth: Int, deepest: [Int])?
        func consider(_ consumed: Int, _ depth: Int, _ deepest: [Int], gaps: Int = 0) {
            guard !deepest.isEmpty else { return }
            if let b = best, (b.consumed, -b.gaps, b.depth) >= (consumed, -gaps, depth) { return }
            best = (consumed, gaps, depth, deepest)
        }
        let provinceOptions = [(length: 0, divisions: [Int]())] + matches(at: 0) { $0.level == .province }
        for province in provinceOptions {
            consider(province.length, 1, province.divisions)
            let cityOptions =
                [(length: 0, divisions: [Int]())]
                + matches(at: province.length) {
                    $0.level == .city && !$0.isPlaceholder && (province.divisions.isEmpty || isUnder($0, province.divisions))
                }
            for city in cityOptions {
                let afterCity = province.length + city.length
                consider(afterCity, 2, city.divisions)
                let parents = !city.divisions.isEmpty ? city.divisions : province.divisions
                for district in matches(at: afterCity, { $0.level == .district && (parents.isEmpty || isUnder($0, parents)) }) {
                    let gaps = city.divisions.isEmpty && !province.divisions.isEmpty ? 1 : 0
                    consider(afterCity + district.length, 3, district.divisions, gaps: gaps)
                }
            }
        }
        guard let best else { return [] }
        let rest = best.consumed < chars.count ? String(chars[best.consumed...]) : ""
        return best.deepest.map { ChineseMatch(division: $0, depth: best.depth, unresolved: rest) }
    }
}
