import BundledData
import Foundation
import GeoCore
import SpatialIndex
import TextIndex

/// The bundled gazetteer: GeoNames populated places of the world and Chinese administrative divisions, with
/// forward geocoding (names, alternate names, transliterations, prefixes, typos, qualifiers such as
/// "Springfield, IL", Chinese addresses) and reverse geocoding through R-trees.
///
/// Immutable after `load`, so it is shared freely between threads.
public final class Gazetteer: Sendable {
    public let places: PlaceTable
    public let divisions: [Division]
    let countries: [String: Country]
    /// Normalized country names and codes → ISO code.
    let countryCodes: [String: String]
    /// (country, normalized admin1 name) → normalized short codes ("il" for Illinois).
    let admin1Codes: [String: Set<String>]
    let names: NameIndex
    let placeTree: RTree
    let districtTree: RTree
    /// Each division's areas as `district(at:)` answers them (nil for placeholders), made once: their strings cost
    /// more than the search.
    let divisionAreas: [ReverseResult.DivisionMatch?]
    let divisionIndexByAdcode: [Int: Int]
    /// Chinese full and short division names → division indices, for address parsing.
    let chineseNames: [String: [Int]]
    let longestChineseName: Int
    let capitals: Set<Int>
    /// Country outlines for reverse geocoding away from places; nil when the file is not there.
    let outlines: CountryOutlines?

    /// Entities are numbered places first, then divisions.
    func isDivision(_ entity: Int32) -> Bool { Int(entity) >= places.count }
    func division(_ entity: Int32) -> Division { divisions[Int(entity) - places.count] }

    /// Loads the bundled files from `directory` (data/ by default).
    /// - Throws: `DataFileError` or `PlaceFileError` when a file is missing or malformed.
    public static func load(directory: String = DataDirectory.resolve()) throws -> Gazetteer {
        let places = try PlaceFile.loadPlaces(directory: directory)
        let side = try SideFiles(directory: directory)
        return Gazetteer(
            places: PlaceTable(places),
            divisions: side.divisions,
            countries: side.countries,
            admin1: side.admin1,
            outlines: side.outlines
        )
    }

    /// The places, divisions, countries and R-trees without the name index: enough for reverse geocoding (what an
    /// import asks to place records in cities and countries), in half the time of `load`. Forward geocoding on it
    /// finds nothing.
    public static func loadForReverse(directory: String = DataDirectory.resolve()) throws -> Gazetteer {
        let places = PlaceTable(try PlaceFile.loadPlaces(directory: directory))
        let side = try SideFiles(directory: directory)
        var names = NameIndex()
        names.finish { _ in 0 }
        let trees = Gazetteer.trees(places: places, divisions: side.divisions)
        return Gazetteer(
            places: places,
            divisions: side.divisions,
            countries: side.countries,
            admin1: side.admin1,
            outlines: side.outlines,
            built: Built(names: names, placeTree: trees.places, districtTree: trees.districts)
        )
    }

    /// The name index and the two R-trees: what building takes time for, and what a snapshot holds.
    struct Built {
        var names: NameIndex
        var placeTree: RTree
        var districtTree: RTree
    }

    init(
        places: PlaceTable,
        divisions: [Division],
        countries: [Country],
        admin1: [(country: String, name: String, code: String)],
        outlines: CountryOutlines? = nil,
        built: Built? = nil,
        capitals known: Set<Int>? = nil
    ) {
        self.places = places
        self.outlines = outlines
        self.divisions = divisions
        var countryTable: [String: Country] = [:]
        var countryCodes: [String: String] = [:]
        for country in countries {
            countryTable[country.code] = country
            countryCodes[TextNormalizer.normalize(country.name)] = country.code
            countryCodes[country.code.lowercased()] = country.code
        }
        // Common names users type that differ from GeoNames' country names.
        for (alias, code) in [
            ("usa", "US"), ("united states of america", "US"), ("uk", "GB"), ("great britain", "GB"),
            ("england", "GB"), ("中国", "CN"), ("china", "CN"), ("russia", "RU"), ("south korea", "KR"),
        ] {
            countryCodes[alias] = code
        }
        self.countries = countryTable
        self.countryCodes = countryCodes
        var codes: [String: Set<String>] = [:]
        for row in admin1 where row.code.count <= 3 && row.code.rangeOfCharacter(from: .letters) != nil {
            codes[row.country + "|" + TextNormalizer.normalize(row.name), default: []].insert(row.code.lowercased())
        }
        self.admin1Codes = codes
        // Places that are their country's capital (a snapshot stores them, sparing a pass over every place).
        var capitals = Set<Int>()
        if let known {
            capitals = known
        } else {
            for index in places.indices {
                if let capital = countryTable[places.country(index)]?.capital, places.names.equals(index, capital) { capitals.insert(index) }
            }
        }
        self.capitals = capitals

        var byAdcode: [Int: Int] = [:]
        var chinese: [String: [Int]] = [:]
        for (j, division) in divisions.enumerated() {
            byAdcode[division.adcode] = j
            guard !division.isPlaceholder else { continue }
            chinese[division.name, default: []].append(j)
            if division.shortName != division.name { chinese[division.shortName, default: []].append(j) }
        }
        self.divisionIndexByAdcode = byAdcode
        self.divisionAreas = divisions.map { division in
            guard !division.isPlaceholder else { return nil }
            var chain = [division]
            while let code = chain[0].parent, let j = byAdcode[code] { chain.insert(divisions[j], at: 0) }
            return ReverseResult.DivisionMatch(chain: chain)
        }
        self.chineseNames = chinese
        self.longestChineseName = chinese.keys.map(\.count).max() ?? 0
        let built = built ?? Gazetteer.build(places: places, divisions: divisions, capitals: capitals)
        names = built.names
        placeTree = built.placeTree
        districtTree = built.districtTree
    }

    /// Builds the name index and the trees from the places and divisions.
    static func build(places: PlaceTable, divisions: [Division], capitals: Set<Int>) -> Built {
        // Normalizing ~800 000 names is most of the build: do it on every core, then index in order.
        let keysPerPlace = Gazetteer.normalizedNames(places)
        var index = NameIndex()
        for (i, keys) in keysPerPlace.enumerated() {
            for (key, kind) in keys { index.add(key, target: Int32(i), kind: kind) }
        }
        for (j, division) in divisions.enumerated() where !division.isPlaceholder {
            let entity = Int32(places.count + j)
            index.add(TextNormalizer.normalize(division.name), target: entity, kind: .primary)
            if division.shortName != division.name {
                index.add(TextNormalizer.normalize(division.shortName), target: entity, kind: .alternate)
            }
            index.add(TextNormalizer.normalize(division.pinyin), target: entity, kind: .transliteration)
        }
        let placeCount = places.count
        let divisionImportance = divisions.map { Gazetteer.importance(of: $0) }
        let placeImportance = places.indices.map { Gazetteer.importance(population: places.population($0), capital: capitals.contains($0)) }
        index.finish { entity in
            Int(entity) < placeCount ? placeImportance[Int(entity)] : divisionImportance[Int(entity) - placeCount]
        }
        let trees = Gazetteer.trees(places: places, divisions: divisions)
        return Built(names: index, placeTree: trees.places, districtTree: trees.districts)
    }

    /// The R-trees of places and of district seats.
    static func trees(places: PlaceTable, divisions: [Division]) -> (places: RTree, districts: RTree) {
        let placeTree = RTree(
            bulkLoading: places.indices.map { IndexedPoint(id: UInt32($0), latitude: places.latitude($0), longitude: places.longitude($0)) }
        )
        let districtTree = RTree(
            bulkLoading: divisions.enumerated().filter { $0.element.level == .district && !$0.element.isPlaceholder }.map {
                IndexedPoint(id: UInt32($0.offset), latitude: $0.element.latitude, longitude: $0.element.longitude)
            }
        )
        return (placeTree, districtTree)
    }

    /// Each place's distinct normalized names with their kind, computed in parallel.
    static func normalizedNames(_ places: PlaceTable) -> [[(String, NameIndex.Kind)]] {
        var result = [[(String, NameIndex.Kind)]](repeating: [], count: places.count)
        let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)
        result.withUnsafeMutableBufferPointer { buffer in
            // SAFETY: each worker writes only the elements whose index is congruent to its number, so no element is
            // written by two threads, and the buffer outlives concurrentPerform, which returns when all are done.
            nonisolated(unsafe) let output = buffer
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                for i in stride(from: worker, to: places.count, by: workers) {
                    let place = places[i]
                    var seen = Set<String>()
                    var keys: [(String, NameIndex.Kind)] = []
                    func add(_ text: String, _ kind: NameIndex.Kind) {
                        let key = TextNormalizer.normalize(text)
                        if !key.isEmpty && seen.insert(key).inserted { keys.append((key, kind)) }
                    }
                    add(place.name, .primary)
                    add(place.asciiName, .transliteration)
                    for alternate in place.alternateNames { add(alternate, .alternate) }
                    output[i] = keys
                }
            }
        }
        return result
    }

    /// How prominent a place is, on a log-population scale (0 to about 8).
    static func importance(population: Int, capital: Bool) -> Double {
        log10(Double(max(1, population))) + (capital ? 1 : 0)
    }

    static func importance(of division: Division) -> Double {
        switch division.level {
        case .province: return 7.2
        case .city: return 6.3
        case .district: return 5.3
        }
    }

    func importance(_ entity: Int32) -> Double {
        if isDivision(entity) { return Gazetteer.importance(of: division(entity)) }
        return Gazetteer.importance(population: places.population(Int(entity)), capital: capitals.contains(Int(entity)))
    }

    /// Number of places and divisions.
    public var count: Int { places.count + divisions.count }

    public func countryName(_ code: String) -> String? { countries[code]?.name }
}
