import BundledData
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

/// The ranking rules on small judged sets: the bundled Helsinki POIs (real OpenStreetMap data) and generated
/// records, checked by what a person would expect on top, not by exact orders.
@Suite struct JudgedRelevanceTests {
    static let dataDirectory = Repository.data.path

    static let scratch = ScratchDirectory("poi-judged")
    static let helsinki: SearchEngine = {
        let directory = scratch.path
        try! BundledDatabase.create(at: directory + "/poi.sqlite", dataDirectory: dataDirectory)
        return try! SearchEngine(store: CatalogStore(path: directory + "/poi.sqlite"), taxonomy: CategoryTaxonomy.load(directory: dataDirectory))
    }()

    static let generated: SearchEngine = {
        var generator = SyntheticPOIGenerator(places: try! PlaceFile.loadPlaces(directory: dataDirectory), seed: 42)
        return SearchEngine(pois: (0..<50_000).map { _ in generator.next() }, taxonomy: try! CategoryTaxonomy.load(directory: dataDirectory))
    }()

    static func top(_ engine: SearchEngine, _ text: String, origin: Coordinate? = nil, limit: Int = 10) throws -> [POIRecord] {
        try engine.search(SearchQuery(text: text, origin: origin, limit: limit)).results.compactMap {
            if case .poi(let poi) = $0.record { return poi }
            return nil
        }
    }

    static func words(_ text: String) -> [String] { TextNormalizer.normalize(text).split(separator: " ").map(String.init) }

    @Test(arguments: [("bar", "food.bar"), ("kahvila", "food.cafe"), ("cafe", "food.cafe"), ("ravintola", "food.restaurant")])
    func aCommonWordFindsItsKindBeforeRarerCompletions(_ word: String, _ category: String) throws {
        let results = try Self.top(Self.helsinki, word)
        #expect(results.count == 10)
        for poi in results {
            // The word as typed (in the name) or the category it names — never "Barcelona" for "bar".
            #expect(Self.words(poi.name).contains(word) || poi.category == category, "\(word): \(poi.name) (\(poi.category))")
        }
    }

    @Test(arguments: [("kirjasto", "education.library"), ("museo", "tourism.museum"), ("hotelli", "lodging.hotel")])
    func finnishCategoryWordsFindTheCategory(_ word: String, _ category: String) throws {
        let results = try Self.top(Self.helsinki, word, limit: 20)
        #expect(results.count >= 5, "\(word)")
        #expect(results.prefix(5).allSatisfy { $0.category == category }, "\(word): \(results.prefix(5).map(\.name))")
    }

    @Test func theStationBeforeWhatIsMerelyAtTheStation() throws {
        let results = try Self.top(Self.helsinki, "rautatieasema")
        let station = results.firstIndex { $0.category == "transport.train_station" }
        let elsewhere = results.firstIndex { !Self.words($0.name).contains("rautatieasema") && !$0.category.hasPrefix("transport.") }
        #expect(station != nil && station! < 3, "\(results.map(\.name))")
        if let station, let elsewhere { #expect(station < elsewhere) }
    }

    @Test func anOriginKeepsResultsNear() throws {
        let centre = try Coordinate(latitude: 60.1699, longitude: 24.9384)
        let results = try Self.helsinki.search(SearchQuery(text: "cafe", origin: centre, limit: 10)).results
        #expect(results.count == 10)
        #expect(results.allSatisfy { ($0.distance ?? .infinity) < 3_000 })
        // Generated data spans the world (and has few records in Helsinki): "cafe" from Helsinki answers the
        // nearest cafes first, not cafeterias on other continents.
        let world = try Self.generated.search(SearchQuery(text: "cafe", origin: centre, limit: 10)).results
        #expect((world.first?.distance ?? .infinity) < 50_000, "\(world.map { $0.distance ?? -1 })")
        #expect(world.allSatisfy { ($0.distance ?? .infinity) < 1_500_000 }, "\(world.map { $0.distance ?? -1 })")
    }

    @Test func theWordAsTypedOutranksRarerCompletionsAtScale() throws {
        for word in ["cafe", "bar", "park", "hotel"] {
            let results = try Self.top(Self.generated, word, limit: 20)
            #expect(results.count == 20, "\(word)")
            for poi in results {
                let named = Self.words(poi.name).contains(word) || Self.words(poi.name).contains(word + "s")
                #expect(named || poi.category.hasSuffix(word) || Self.words(poi.name).first == word, "\(word): \(poi.name) (\(poi.category))")
                #expect(
                    !Self.words(poi.name).contains { $0 != word && $0.hasPrefix(word) && !Self.words(poi.name).contains(word) },
                    "\(word): \(poi.name)"
                )
            }
        }
    }

    @Test func allWordsBeforeSome() throws {
        let both = try Self.top(Self.helsinki, "cafe java", limit: 10)
        #expect(both.first?.name == "Cafe Java")
        // Every record with both words comes before every record with one of them only.
        func words(_ poi: POIRecord) -> Set<String> {
            Set(Tokenizer.tokens([poi.name, poi.address ?? "", poi.city ?? ""].joined(separator: " ")).map(\.text))
        }
        let hasBoth = both.map { words($0).contains("java") && (words($0).contains("cafe") || $0.category == "food.cafe") }
        #expect(hasBoth.contains(true) && hasBoth.contains(false), "the page should hold both kinds: \(both.map(\.name))")
        if let firstPartial = hasBoth.firstIndex(of: false) {
            #expect(!hasBoth[firstPartial...].contains(true), "a record with both words after one with one: \(both.map(\.name))")
        }
        // No record has both words: the first word alone still answers, and every answer has it (as a word, a
        // completion of it, or its category's label).
        let results = try Self.top(Self.helsinki, "cafe zzyzx", limit: 5)
        #expect(results.count == 5)
        for poi in results {
            #expect(
                words(poi).contains { $0.hasPrefix("cafe") } || poi.category.hasPrefix("food.cafe"),
                "\(poi.name) (\(poi.category)) does not match cafe"
            )
        }
    }
}
