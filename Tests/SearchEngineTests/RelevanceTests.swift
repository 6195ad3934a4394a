import Catalog
import GeoCore
import Records
import Testing

@testable import SearchEngine

@Suite struct RelevanceTests {
    static let engine = SearchEngine(
        pois: [
            poi("1", "Cafe Java", "food.cafe", 60.1700, 24.9380),
            poi("2", "Java Coffee House Java Edition", "food.cafe", 60.1710, 24.9390),
            poi("3", "Kahvila Kuu", "food.cafe", 60.1720, 24.9400),
            poi("4", "Manner", "food.cafe", 31.2304, 121.4737),
            poi("5", "星巴克咖啡(中关村店)", "food.cafe", 39.9836, 116.3164),
            poi("6", "北京理工大学", "education.university", 39.9590, 116.3100),
            poi("7", "Café Ekberg", "food.bakery", 60.1647, 24.9378),
            poi("8", "Sushibar Helsinki", "food.restaurant", 60.1650, 24.9400),
            poi("9", "Harbour Market", "shop.supermarket", 60.1670, 24.9530),
            poi("10", "Javanese Grill", "food.restaurant", 60.2000, 24.9000),
            poi("11", "Java", "food.cafe", 35.0, 139.0),
        ],
        taxonomy: testTaxonomy
    )

    func ids(_ text: String, origin: Coordinate? = nil, limit: Int = 10) throws -> [String] {
        try Self.engine.search(SearchQuery(text: text, origin: origin, limit: limit)).results.map(\.id)
    }

    @Test func exactNameBeatsPartial() throws {
        #expect(try ids("cafe java").first == "1")
        #expect(try ids("java").first == "11")
    }

    @Test func chineseSubstrings() throws {
        #expect(try ids("咖啡").contains("5"))
        #expect(try ids("中关村").contains("5"))
        #expect(try ids("星巴克").first == "5")
        #expect(try ids("理工大学").first == "6")
    }

    @Test func categoryLabelsInBothLanguages() throws {
        // "咖啡" finds the cafe named "Manner"; "cafe" finds "Kahvila Kuu".
        #expect(try ids("咖啡").contains("4"))
        #expect(try ids("cafe").contains("3"))
        #expect(try ids("university").contains("6"))
        #expect(try ids("大学").contains("6"))
    }

    @Test func typosAndPrefixes() throws {
        #expect(try ids("kahvla").first == "3")  // one typo in a 6-letter word
        #expect(try ids("sushibra").first == "8")
        #expect(try ids("kahv").first == "3")  // prefix of the last word
        #expect(try ids("harbour mark").first == "9")
        #expect(try ids("javan").first == "10")
    }

    @Test func diacriticsFold() throws {
        #expect(try ids("cafe ekberg").first == "7")
        #expect(try ids("CAFÉ EKBERG").first == "7")
    }

    @Test func originFavoursNearerMatches() throws {
        let helsinki = try Coordinate(latitude: 60.17, longitude: 24.94)
        let tokyo = try Coordinate(latitude: 35.0, longitude: 139.0)
        let nearHelsinki = try Self.engine.search(SearchQuery(text: "java", origin: helsinki)).results
        #expect(nearHelsinki.allSatisfy { $0.distance != nil })
        let nearTokyo = try ids("java", origin: tokyo)
        #expect(nearTokyo.first == "11")
    }

    @Test func totalsAndPaging() throws {
        let all = try Self.engine.search(SearchQuery(text: "cafe", limit: 100))
        let first = try Self.engine.search(SearchQuery(text: "cafe", limit: 2))
        let second = try Self.engine.search(SearchQuery(text: "cafe", limit: 2, offset: 2))
        #expect(first.total == all.total)
        #expect(first.results.map(\.id) + second.results.map(\.id) == Array(all.results.map(\.id).prefix(4)))
        #expect(first.next == .offset(2))
    }

    @Test func aTextWithoutLettersOrDigitsIsRefused() {
        // (The other rules of q, limit, category and radius are the wire layer's: APITests.)
        #expect(throws: SearchError.invalid(parameter: "q", rule: "must contain at least one letter or digit")) {
            try Self.engine.search(SearchQuery(text: "!!!"))
        }
    }
}
