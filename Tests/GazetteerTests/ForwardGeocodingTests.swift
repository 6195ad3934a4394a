import GeoCore
import TestSupport
import Testing

@testable import Gazetteer

/// The query table: what a user types and the place that must come first.
@Suite struct ForwardGeocodingTests {
    struct Case: Sendable, CustomStringConvertible {
        let query: String
        let expected: String
        var country: String? = nil
        var description: String { query }
    }

    static let cases: [Case] = [
        // Capitals and big cities, case and spacing.
        Case(query: "Helsinki", expected: "geonames:658225"),
        Case(query: "HELSINKI", expected: "geonames:658225"),
        Case(query: "  helsinki  ", expected: "geonames:658225"),
        Case(query: "Tokyo", expected: "geonames:1850147"),
        Case(query: "Beijing", expected: "geonames:1816670"),
        Case(query: "London", expected: "geonames:2643743"),
        Case(query: "Paris", expected: "geonames:2988507"),
        Case(query: "Mexico City", expected: "geonames:3530597"),
        Case(query: "Buenos Aires", expected: "geonames:3435910"),
        Case(query: "Nairobi", expected: "geonames:184745"),
        Case(query: "Seoul", expected: "geonames:1835848"),
        Case(query: "Toronto", expected: "geonames:6167865"),
        // Typos: one edit from 5 letters, two from 9.
        Case(query: "Helsinky", expected: "geonames:658225"),
        Case(query: "Hlesinki", expected: "geonames:658225"),
        Case(query: "Sao Paolo", expected: "geonames:3448439"),
        Case(query: "Barcelna", expected: "geonames:3128760"),
        Case(query: "Amsterdm", expected: "geonames:2759794"),
        // Prefixes (autocomplete).
        Case(query: "Hels", expected: "geonames:658225"),
        Case(query: "Stockh", expected: "geonames:2673730"),
        // Diacritics and their absence.
        Case(query: "sao paulo", expected: "geonames:3448439"),
        Case(query: "São Paulo", expected: "geonames:3448439"),
        Case(query: "Zurich", expected: "geonames:2657896"),
        Case(query: "Zürich", expected: "geonames:2657896"),
        Case(query: "Krakow", expected: "geonames:3094802"),
        Case(query: "Gdansk", expected: "geonames:3099434"),
        Case(query: "Malmo", expected: "geonames:2692969"),
        Case(query: "Reykjavik", expected: "geonames:3413829"),
        Case(query: "Hà Nội", expected: "geonames:1581130"),
        Case(query: "İstanbul", expected: "geonames:745044"),
        // Other names of a place.
        Case(query: "Helsingfors", expected: "geonames:658225"),
        Case(query: "Peking", expected: "geonames:1816670"),
        Case(query: "Munchen", expected: "geonames:2867714"),
        Case(query: "München", expected: "geonames:2867714"),
        Case(query: "Cologne", expected: "geonames:2886242"),
        Case(query: "Moskva", expected: "geonames:524901"),
        Case(query: "Bombay", expected: "geonames:1275339"),
        Case(query: "New York", expected: "geonames:5128581"),
        Case(query: "NYC", expected: "geonames:5128581"),
        Case(query: "Nueva York", expected: "geonames:5128581"),
        Case(query: "Åbo", expected: "geonames:633679"),
        // Non-Latin scripts.
        Case(query: "Москва", expected: "geonames:524901"),
        Case(query: "서울", expected: "geonames:1835848"),
        Case(query: "Αθήνα", expected: "geonames:264371"),
        Case(query: "東京", expected: "geonames:1850147"),
        Case(query: "赫尔辛基", expected: "geonames:658225"),
        Case(query: "纽约", expected: "geonames:5128581"),
        // Ambiguous names, with and without qualifiers.
        Case(query: "Springfield, IL", expected: "geonames:4250542"),
        Case(query: "Springfield, Illinois", expected: "geonames:4250542"),
        Case(query: "Springfield, MO", expected: "geonames:4409896"),
        Case(query: "Springfield, Massachusetts", expected: "geonames:4951788"),
        Case(query: "Paris, Texas", expected: "geonames:4717560"),
        Case(query: "Paris Texas", expected: "geonames:4717560"),
        Case(query: "Paris TX", expected: "geonames:4717560"),
        Case(query: "London, Ontario", expected: "geonames:6058560"),
        Case(query: "London, UK", expected: "geonames:2643743"),
        Case(query: "Portland, Oregon", expected: "geonames:5746545"),
        Case(query: "Portland, ME", expected: "geonames:4975802"),
        Case(query: "Cambridge, MA", expected: "geonames:4931972"),
        Case(query: "Cambridge, England", expected: "geonames:2653941"),
        Case(query: "Vancouver, WA", expected: "geonames:5814616"),
        Case(query: "Sydney, Nova Scotia", expected: "geonames:6354908"),
        Case(query: "Springfield", expected: "geonames:4409896"),  // the most populous of many
        // Chinese addresses at each level, with and without suffixes, with street text.
        Case(query: "北京", expected: "adcode:110000"),
        Case(query: "上海市", expected: "adcode:310000"),
        Case(query: "广州", expected: "adcode:440100"),
        Case(query: "成都市", expected: "adcode:510100"),
        Case(query: "海淀区", expected: "adcode:110108"),
        Case(query: "海淀", expected: "adcode:110108"),
        Case(query: "北京市海淀区", expected: "adcode:110108"),
        Case(query: "北京海淀", expected: "adcode:110108"),
        Case(query: "北京市海淀区中关村南大街5号", expected: "adcode:110108"),
        Case(query: "浙江省杭州市西湖区", expected: "adcode:330106"),
        Case(query: "杭州西湖区", expected: "adcode:330106"),
        Case(query: "长春市朝阳区", expected: "adcode:220104"),
        Case(query: "辽宁朝阳", expected: "adcode:211300"),
        Case(query: "深圳南山", expected: "adcode:440305"),
        Case(query: "广西", expected: "adcode:450000"),
        Case(query: "新疆", expected: "adcode:650000"),
        // Mixed scripts and pinyin.
        Case(query: "Haidian, Beijing", expected: "adcode:110108"),
        Case(query: "Haidian Beijing", expected: "adcode:110108"),
        Case(query: "Tianhe, Guangzhou", expected: "adcode:440106"),
        Case(query: "Xihu, Hangzhou", expected: "adcode:330106"),
        Case(query: "Chaoyang, Liaoning", expected: "adcode:211300"),
        // A country filter.
        Case(query: "Paris", expected: "geonames:6942553", country: "CA"),
        Case(query: "London", expected: "geonames:6058560", country: "CA"),
    ]

    @Test(arguments: cases)
    func bestMatchComesFirst(_ c: Case) throws {
        let query = try GeocodeQuery(text: c.query, limit: 5, country: c.country)
        let results = BundledGazetteer.shared.geocode(query)
        #expect(results.first?.id == c.expected, "\(c.query): got \(results.prefix(3).map { "\($0.id) \($0.displayName)" })")
        #expect(zip(results, results.dropFirst()).allSatisfy { $0.score >= $1.score }, "scores not descending")
        if let country = c.country { #expect(results.allSatisfy { $0.country == country }) }
    }

    @Test func chineseStreetTextIsReportedUnresolved() throws {
        let results = BundledGazetteer.shared.geocode(try GeocodeQuery(text: "北京市海淀区中关村南大街5号"))
        let first = try #require(results.first)
        #expect(first.unresolved == "中关村南大街5号")
        #expect(first.type == "district")
        #expect(first.admin1 == "Beijing")
        // Converted from cpca's GCJ-02: the WGS-84 seat lies a few hundred metres from the GCJ-02 one.
        let gcj = ChinaDatum.wgs84ToGCJ02(latitude: first.latitude, longitude: first.longitude)
        let shift = GreatCircle.distance(latitude1: first.latitude, longitude1: first.longitude, latitude2: gcj.latitude, longitude2: gcj.longitude)
        #expect(shift > 100 && shift < 1_000)
    }

    /// A street address whose place is known answers the place, the street reported unresolved (as for Chinese
    /// addresses); qualifiers after the place still choose among namesakes.
    @Test(arguments: [
        ("1600 Amphitheatre Parkway, Mountain View", "geonames:5375480", "1600 Amphitheatre Parkway"),
        ("1600 Amphitheatre Parkway, Mountain View, CA", "geonames:5375480", "1600 Amphitheatre Parkway"),
        ("221B Baker Street, London, UK", "geonames:2643743", "221B Baker Street"),
        ("Flat 2, 10 Downing Street, London", "geonames:2643743", "Flat 2, 10 Downing Street"),
        ("Mannerheimintie 13, Helsinki", "geonames:658225", "Mannerheimintie 13"),
    ])
    func streetAddressesFallBackToTheirPlace(_ text: String, _ expected: String, _ street: String) throws {
        let results = BundledGazetteer.shared.geocode(try GeocodeQuery(text: text))
        let first = try #require(results.first, "\(text)")
        #expect(first.id == expected, "\(text): got \(results.prefix(3).map { "\($0.id) \($0.displayName)" })")
        #expect(first.unresolved == street)
    }

    @Test func placesNamedAsTypedAreNotStreets() throws {
        // "Springfield, IL": the first part is a place, so nothing is unresolved; an unknown text still finds nothing.
        let springfield = try #require(BundledGazetteer.shared.geocode(try GeocodeQuery(text: "Springfield, IL")).first)
        #expect(springfield.unresolved == nil && springfield.admin1 == "Illinois")
        #expect(BundledGazetteer.shared.geocode(try GeocodeQuery(text: "Foo Bar Street 3, Nowhereville Qqq")).isEmpty)
    }

    @Test func ambiguousChineseDistrictsAreAllOffered() throws {
        let results = BundledGazetteer.shared.geocode(try GeocodeQuery(text: "朝阳区", limit: 10))
        let ids = Set(results.prefix(2).map(\.id))
        #expect(ids == ["adcode:110105", "adcode:220104"])
    }

    @Test func chineseLanguageNames() throws {
        let results = BundledGazetteer.shared.geocode(try GeocodeQuery(text: "Haidian, Beijing", language: "zh"))
        #expect(results.first?.name == "海淀区")
        #expect(results.first?.displayName == "北京市海淀区")
        let helsinki = BundledGazetteer.shared.geocode(try GeocodeQuery(text: "Helsinki", language: "zh"))
        #expect(helsinki.first?.name == "赫尔辛基")
    }

    @Test func originBiasPrefersNearbyPlaces() throws {
        let portland = try Coordinate(latitude: 43.66, longitude: -70.26)  // Portland, Maine
        let results = BundledGazetteer.shared.geocode(try GeocodeQuery(text: "Portland", near: portland))
        #expect(results.first?.id == "geonames:4975802")
        #expect((results.first?.distance ?? .infinity) < 10_000)
    }

    @Test func limitIsHonoured() throws {
        #expect(BundledGazetteer.shared.geocode(try GeocodeQuery(text: "San", limit: 7)).count == 7)
        #expect(BundledGazetteer.shared.geocode(try GeocodeQuery(text: "Springfield", limit: 1)).count == 1)
    }

    @Test func nonsenseFindsNothing() throws {
        #expect(BundledGazetteer.shared.geocode(try GeocodeQuery(text: "qqqxxzzqqq")).isEmpty)
    }

    @Test func badInputGetsClearErrors() {
        #expect(throws: GazetteerError.emptyQuery) { try GeocodeQuery(text: "   ") }
        #expect(throws: GazetteerError.queryTooLong(10_000)) { try GeocodeQuery(text: String(repeating: "a", count: 10_000)) }
        #expect(throws: GazetteerError.controlCharacters) { try GeocodeQuery(text: "Hel\u{0}sinki") }
        #expect(throws: GazetteerError.invalidLimit(0)) { try GeocodeQuery(text: "x", limit: 0) }
        #expect(throws: GazetteerError.invalidLimit(101)) { try GeocodeQuery(text: "x", limit: 101) }
        #expect(throws: GazetteerError.unknownCountry("Finland")) { try GeocodeQuery(text: "x", country: "Finland") }
        #expect(throws: GazetteerError.unknownLanguage("fr")) { try GeocodeQuery(text: "x", language: "fr") }
        #expect(GazetteerError.queryTooLong(10_000).description == "q must be at most 500 characters (got 10000)")
    }
}
