import Catalog
import Datasets
import Foundation
import Gazetteer
import GeoCore
import Records
import TestSupport
import Testing
import TextIndex

@testable import SearchEngine

/// Chinese names found by their pinyin — full, initials, as typed, mixed with Han, ü as v or u, polyphones — ranked
/// after the words as typed, and the same through nearby's filter; checked on a Beijing corpus and, against an oracle
/// written here from the characters' readings alone, on generated names.
@Suite struct PinyinSearchTests {
    static let bit = Coordinate(uncheckedLatitude: 39.9631, longitude: 116.3104)

    static let corpus: [POIRecord] = [
        poi("kfc", "肯德基(中关村店)", "food.fast_food", 39.9640, 116.3110),
        poi("kfc2", "肯德基(西单店)", "food.fast_food", 39.9100, 116.3740),
        poi("mcd", "麦当劳(魏公村店)", "food.fast_food", 39.9580, 116.3200),
        poi("bit", "北京理工大学", "education.university", 39.9631, 116.3104),
        poi("bnu", "北京师范大学", "education.university", 39.9610, 116.3660),
        poi("lvcha", "绿茶餐厅(西直门店)", "food.restaurant", 39.9400, 116.3500),
        poi("cq", "重庆小面", "food.restaurant", 39.9620, 116.3150),
        poi("boc", "中国银行(海淀支行)", "finance.bank", 39.9600, 116.3000),
        poi("cy", "朝阳公园", "leisure.park", 39.9400, 116.4700),
        poi("gw", "长城饭店", "lodging.hotel", 39.9500, 116.4600),
        poi("xa", "西安饭庄", "food.restaurant", 39.9300, 116.3500),
        poi("xian", "先锋书店", "shop.books", 39.9300, 116.3400),
        poi("bank", "Bank of Beijing Museum", "tourism.museum", 39.9000, 116.4000),
        poi("man", "Man Cafe", "food.cafe", 39.9650, 116.3120),
        poi("tea", "Tea House", "food.tea", 39.9660, 116.3130),
        poi("kdj-latin", "KDJ Print Shop", "shop.copyshop", 39.9670, 116.3140),
        poi("ktv", "好乐迪KTV", "leisure.karaoke", 39.9610, 116.3210),
    ]

    static let engine = SearchEngine(pois: corpus, taxonomy: testTaxonomy)

    static func ids(_ text: String, origin: Coordinate? = bit, limit: Int = 10) throws -> [String] {
        try engine.search(SearchQuery(text: text, origin: origin, limit: limit)).results.map(\.id)
    }

    @Test func theTableIsBundled() throws {
        let dictionary = try #require(PinyinDictionary.bundled, "data/pinyin.tsv.gz could not be read")
        #expect(dictionary.syllables.count > 400)
        #expect(Self.engine.pinyin != nil)
    }

    @Test(arguments: [
        ("kendeji", "kfc"), ("ken de ji", "kfc"), ("kdj", "kfc"), ("kend", "kfc"), ("kendej", "kfc"), ("肯de", "kfc"),
        ("ken3de2ji1", "kfc"), ("Kěndéjī", "kfc"), ("bjlg", "bit"), ("北京lg", "bit"), ("beijingligong", "bit"),
        ("ligongdaxue", "bit"), ("lgdx", "bit"), ("lvcha", "lvcha"), ("lucha", "lvcha"), ("lücha", "lvcha"), ("chongqing", "cq"),
        ("yinhang", "boc"), ("chaoyang", "cy"), ("zhaoyang", "cy"), ("changcheng", "gw"), ("xi'an", "xa"), ("xian feng", "xian"),
        ("maidanglao", "mcd"), ("mdl", "mcd"), ("kendeji zhongguancun", "kfc"), ("haoledi", "ktv"), ("weigongcun", "mcd"),
    ])
    func aPinyinFormFindsTheName(_ query: String, _ id: String) throws {
        let found = try Self.ids(query, limit: 3)
        #expect(found.contains(id), "\(query): \(found)")
        #expect(try Self.ids(query, origin: nil, limit: 3).contains(id), "\(query) without an origin")
    }

    @Test func nearerBranchesComeFirstNearAnOrigin() throws {
        // The Latin "KDJ Print Shop" first (the words as typed), then the branches of 肯德基, nearer first.
        #expect(try Self.ids("kdj").prefix(3) == ["kdj-latin", "kfc", "kfc2"])
        #expect(try Self.ids("kendeji", origin: Coordinate(uncheckedLatitude: 39.91, longitude: 116.374)).first == "kfc2")
    }

    @Test(arguments: [("bank", "bank"), ("man", "man"), ("tea", "tea"), ("kdj", "kdj-latin")])
    func latinMatchesStayFirst(_ query: String, _ id: String) throws {
        #expect(try Self.ids(query).first == id)
        #expect(try Self.ids(query, origin: nil).first == id)
    }

    @Test func aReadingThePhraseTableDoesNotGiveRanksBelowTheOneItGives() throws {
        // 重庆 is chong-qing in the phrase table; zhong-qing (重 is also zhong) still finds it, as a typo would.
        #expect(try Self.ids("zhongqing").first == "cq")
        // 银行 reads yin-hang in the table: through its pair, "yinhang" matches exactly and "yinxing" as a typo.
        func pairKinds(_ text: String) -> [InvertedIndex.Expansion.Kind] {
            let matcher = Self.engine.read { Self.engine.matcher(text, $0) }
            let yinhang = Self.engine.read { $0.text.term("银行") }
            return matcher.readings.filter { $0.rank == .pairs }.flatMap { $0.groups.flatMap(\.expansions) }.filter { $0.term == yinhang }.map(\.kind)
        }
        #expect(pairKinds("yinhang") == [.exact])
        #expect(pairKinds("yinxing") == [.typo])
    }

    @Test func nearbyAndWithinFilterByPinyinToo() throws {
        let nearby = Self.engine.nearby(NearbyQuery(Around(Self.bit, radius: 5_000), text: "kdj", limit: 10))
        #expect(nearby.results.map(\.id) == ["kfc", "kdj-latin"])
        let within = Self.engine.within(
            WithinQuery(.box(BoundingBox(uncheckedWest: 116.0, south: 39.8, east: 116.6, north: 40.1)), text: "kendeji", limit: 10)
        )
        #expect(Set(within.results.map(\.id)) == ["kfc", "kfc2"])
    }

    @Test func aNameWrittenAfterTheEngineStartedIsFoundByPinyin() throws {
        let engine = SearchEngine(pois: Self.corpus, taxonomy: testTaxonomy)
        let before = try engine.search(SearchQuery(text: "mixuebingcheng", limit: 5)).results
        #expect(before.isEmpty, "\(before.map(\.id))")
        _ = try engine.upsertPOI(poi("heytea", "蜜雪冰城(五道口店)", "food.tea", 39.99, 116.33))
        #expect(try engine.search(SearchQuery(text: "mixuebingcheng", limit: 5)).results.map(\.id) == ["heytea"])
        #expect(try engine.search(SearchQuery(text: "mxbc", limit: 5)).results.map(\.id).contains("heytea"))
        _ = try engine.deletePOI(id: "heytea")
        #expect(try engine.search(SearchQuery(text: "mixuebingcheng", limit: 5)).results.isEmpty)
    }

    /// Generated names from Han syllables, queries drawn from them in every form, against an oracle that knows only
    /// each character's readings: a record matches when every neighbouring pair of typed pieces is a neighbouring pair
    /// of characters of its name that reads so (a Han piece: that character; a syllable: one of its readings; an
    /// initial or the last piece: a reading that begins with it), or its name begins with the letters as its readings
    /// spell them.
    @Test func queriesDrawnFromNamesFindWhatTheOracleFinds() throws {
        let dictionary = try #require(PinyinDictionary.bundled)
        var random = testRandom("PinyinSearchTests.queriesDrawnFromNamesFindWhatTheOracleFinds")
        let alphabet = Array("肯德基麦当劳北京理工大学绿茶餐厅重庆小面中国银行朝阳公园长城饭店西安先锋书喜好乐迪行长")
        var pois: [POIRecord] = []
        for i in 0..<400 {
            let length = 2 + Int(random.next() % 4)
            let name = String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
            pois.append(poi("g\(i)", name, "food.restaurant", 39.9 + random.uniform(0...0.1), 116.3 + random.uniform(0...0.1)))
        }
        let engine = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        func readings(_ c: Character) -> [String] { dictionary.readings(of: c.unicodeScalars.first!.value).map { dictionary.syllable($0) } }
        for round in 0..<150 {
            let source = pois[Int(random.next() % UInt64(pois.count))]
            let chars = Array(source.name)
            let length = min(chars.count, 2 + Int(random.next() % 2))
            let start = Int(random.next() % UInt64(chars.count - length + 1))
            let piece = Array(chars[start..<(start + length)])
            let spoken = piece.map { readings($0)[Int(random.next() % UInt64(readings($0).count))] }
            let form = random.next() % 4
            var query: String
            switch form {
            case 0: query = spoken.joined()
            case 1: query = spoken.map { String($0.first!) }.joined()
            case 2: query = spoken.dropLast().joined() + String(spoken.last!.prefix(1 + Int(random.next() % UInt64(spoken.last!.count))))
            default: query = String(piece[0]) + spoken.dropFirst().joined()
            }
            let parses = PinyinQuery.readings(of: TextNormalizer.normalize(query), dictionary: dictionary)
            try #require(!parses.isEmpty, "round \(round): \(query) is not read as pinyin")
            func allows(_ unit: PinyinQuery.Unit, _ c: Character) -> Bool {
                if let han = unit.han { return c.unicodeScalars.first!.value == han }
                return readings(c).contains { r in unit.allows(dictionary.syllableID(r)!) }
            }
            // Every typed piece on one run of characters, in order.
            func contiguous(_ name: String, _ units: [PinyinQuery.Unit]) -> Bool {
                let c = Array(name)
                guard c.count >= units.count else { return false }
                return (0...(c.count - units.count)).contains { j in units.indices.allSatisfy { allows(units[$0], c[j + $0]) } }
            }
            // Every neighbouring pair of pieces somewhere in the name (what a query of pairs can promise at most).
            func pairwise(_ name: String, _ units: [PinyinQuery.Unit]) -> Bool {
                let c = Array(name)
                if units.count == 1 { return c.contains { allows(units[0], $0) } }
                return (0..<(units.count - 1)).allSatisfy { i in
                    (0..<(c.count - 1)).contains { j in allows(units[i], c[j]) && allows(units[i + 1], c[j + 1]) }
                }
            }
            // A name's start is matched as one string of its readings (`PinyinDictionary.runTerms`), which may divide
            // the letters otherwise than the query's parse: "xiaoxian" is 小先 as parsed, and 小西安 (xiao-xi-an) by
            // its start. The name's first character may be typed as itself ("小xian").
            func spells(_ c: [Character], _ from: Int, _ rest: Substring) -> Bool {
                if rest.isEmpty { return true }
                guard from < c.count else { return false }
                return readings(c[from]).contains { r in
                    rest.hasPrefix(r) ? spells(c, from + 1, rest.dropFirst(r.count)) : r.hasPrefix(rest)
                }
            }
            func byStart(_ name: String) -> Bool {
                let c = Array(name)
                let typed = TextNormalizer.normalize(query).filter { $0 != " " }
                if let first = typed.first, first.unicodeScalars.first.map(TextNormalizer.isCJK) == true {
                    return c.first == first && spells(c, 1, typed.dropFirst())
                }
                return spells(c, 0, typed[...])
            }
            let least = Set(pois.filter { p in parses.contains { contiguous(p.name, $0.units) } }.map(\.id))
            let most = Set(pois.filter { p in byStart(p.name) || parses.contains { pairwise(p.name, $0.units) } }.map(\.id))
            guard most.count <= 90 else { continue }
            // Records matching the pinyin come first; after them, records matching the words as typed with some dropped.
            let found = try engine.search(SearchQuery(text: query, limit: 100)).results.map(\.id)
            let read = Set(found.prefix(while: { most.contains($0) }))
            #expect(least.isSubset(of: read), "round \(round): \(query) (from \(source.name)) missed \(least.subtracting(read))")
            // Where a reading of the letters is the one they were made from (not "xian" for 西安), the source is found.
            if parses.contains(where: { contiguous(String(piece), $0.units) }) {
                #expect(read.contains(source.id), "round \(round): \(query) did not find \(source.name)")
            }
        }
    }
}

/// Real chain and landmark names of Beijing among 50 000 generated records (half in China, Chinese chain and branch
/// names), each typed in pinyin as pypinyin reads it — full, initials, the last syllable begun, Han and pinyin mixed —
/// by someone standing within 100 m of it: it is among the first three nearly always.
@Suite struct PinyinLandmarkTests {
    @Test func landmarksAreAmongTheFirstThreeNearThem() throws {
        let names = PinyinReadingTests.landmarks.filter { $0.count >= 2 }
        var random = testRandom("PinyinLandmarkTests.landmarksAreAmongTheFirstThreeNearThem")
        var generator = SyntheticPOIGenerator(
            places: try PlaceFile.loadPlaces(directory: JudgedRelevanceTests.dataDirectory),
            seed: random.next(),
            chinaShare: 0.5
        )
        var pois = (0..<50_000).map { _ in generator.next() }
        let landmarks = names.enumerated().map { i, name in
            let at = GreatCircle.destination(
                from: Coordinate(uncheckedLatitude: 39.9042, longitude: 116.4074),
                distance: random.uniform(0...25_000),
                bearing: random.uniform(0...360)
            )
            return poi("landmark-\(i)", name, "tourism.attraction", at.latitude, at.longitude)
        }
        pois += landmarks
        let engine = SearchEngine(pois: pois, taxonomy: testTaxonomy)
        // pypinyin's readings: an independent reader.
        let scratch = ScratchDirectory("poi-pinyin-landmarks")
        try names.joined(separator: "\n").appending("\n").write(toFile: scratch.file("names.txt"), atomically: true, encoding: .utf8)
        let readings = try PythonScript.run(["scripts/pinyin/readings.py", scratch.file("names.txt")]).split(separator: "\n").map {
            $0.split(separator: " ").map(String.init)
        }
        var found: [String: (hits: Int, total: Int)] = [:]
        var misses: [String] = []
        for (landmark, syllables) in zip(landmarks, readings) {
            let full = syllables.joined()
            let cut = full.prefix(syllables[0].count + 1 + Int(random.next() % UInt64(max(1, full.count - syllables[0].count - 1))))
            let forms = [
                ("full", full), ("initials", syllables.map { String($0.prefix(1)) }.joined()), ("as typed", String(cut)),
                ("mixed", String(landmark.name.prefix(1)) + syllables.dropFirst().joined()),
            ]
            let near = GreatCircle.destination(
                from: Coordinate(uncheckedLatitude: landmark.lat, longitude: landmark.lon),
                distance: random.uniform(0...100),
                bearing: random.uniform(0...360)
            )
            for (form, text) in forms {
                let top = try engine.search(SearchQuery(text: text, origin: near, limit: 3)).results.map(\.id)
                let hit = top.contains(landmark.id)
                found[form, default: (0, 0)].hits += hit ? 1 : 0
                found[form, default: (0, 0)].total += 1
                if !hit { misses.append("\(form) \(text) for \(landmark.name): \(top)") }
            }
        }
        let hits = found.values.reduce(0) { $0 + $1.hits }
        let total = found.values.reduce(0) { $0 + $1.total }
        print(
            "pinyin landmarks in the first three: \(hits) of \(total); "
                + found.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.hits)/\($0.value.total)" }.joined(separator: ", ")
        )
        for miss in misses { print("  missed: \(miss)") }
        #expect(hits * 100 >= total * 95, "\(hits) of \(total): \(misses)")
    }
}
