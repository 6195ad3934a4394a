import BundledData
import Foundation
import Gazetteer
import GeoCore
import Records

/// Deterministic synthetic POIs for scale tests and benchmarks.
///
/// Each record picks a gazetteer place with probability proportional to its population, is scattered around it
/// (Rayleigh-distributed distance with a scale growing with the square root of the population, uniform bearing),
/// takes a category from a realistic mix, and a name and address in the style of its country: brand + branch
/// names in Chinese in China ("星巴克(中关村店)"), local and English names elsewhere. Only `SplitMix64` drives
/// the choices and numbers are printed in Swift's shortest round-trip form, so a seed gives the same bytes on
/// every machine.
public struct SyntheticPOIGenerator {
    private let places: [Place]
    private let cumulative: [Double]
    private var random: SplitMix64
    private var counter = 0
    /// With a share: the places of China and the others apart, each with its cumulative populations.
    private let split: (share: Double, china: [Int], chinaCumulative: [Double], rest: [Int], restCumulative: [Double])?

    /// `chinaShare`: the share of records placed in China (with Chinese brand and branch names), each half still
    /// weighted by population; nil: every place by its population alone (China's share of the world's, about 1 in 5).
    public init(places: [Place], seed: UInt64, chinaShare: Double? = nil) {
        precondition(!places.isEmpty, "the generator needs at least one place")
        self.places = places
        var total = 0.0
        cumulative = places.map {
            total += Double(max(1, $0.population))
            return total
        }
        random = SplitMix64(seed: seed)
        if let chinaShare {
            let china = places.indices.filter { Self.chineseCountries.contains(places[$0].country) }
            let rest = places.indices.filter { !Self.chineseCountries.contains(places[$0].country) }
            func sums(_ indices: [Int]) -> [Double] {
                var total = 0.0
                return indices.map {
                    total += Double(max(1, places[$0].population))
                    return total
                }
            }
            precondition(!china.isEmpty && !rest.isEmpty, "a China share needs places in China and elsewhere")
            split = (chinaShare, china, sums(china), rest, sums(rest))
        } else {
            split = nil
        }
    }

    static let chineseCountries: Set<String> = ["CN", "TW", "HK", "MO"]

    public mutating func next() -> POIRecord {
        counter += 1
        let place = pickPlace()
        let scale = min(15_000, max(400, 1_500 * (Double(place.population) / 100_000).squareRoot()))
        let distance = min(4 * scale, scale * (-2 * log(max(1e-300, random.nextUnit()))).squareRoot())
        let center = Coordinate(uncheckedLatitude: place.latitude, longitude: place.longitude)
        let position = GreatCircle.destination(from: center, distance: distance, bearing: random.uniform(0...360))
        let category = pick(SyntheticVocabulary.categories)
        let isChina = Self.chineseCountries.contains(place.country)
        let name: String
        let address: String
        if isChina {
            name = chineseName(category: category, place: place)
            address = pick(SyntheticVocabulary.chineseRoads) + String(1 + Int(random.next() % 300)) + "号"
        } else {
            name = latinName(category: category, place: place)
            address = latinAddress(country: place.country)
        }
        var tags: [String: String] = [:]
        if random.nextUnit() < 0.4 { tags["opening_hours"] = pick(SyntheticVocabulary.openingHours) }
        if random.nextUnit() < 0.15 { tags["wheelchair"] = random.nextUnit() < 0.7 ? "yes" : "limited" }
        return POIRecord(
            id: "gen-\(counter)",
            name: name,
            category: category,
            address: address,
            city: isChina ? (place.chineseName ?? place.name) : place.name,
            country: place.country,
            lat: (position.latitude * 1e6).rounded() / 1e6,
            lon: (position.longitude * 1e6).rounded() / 1e6,
            tags: tags
        )
    }

    private mutating func pickPlace() -> Place {
        if let split {
            let inChina = random.nextUnit() < split.share
            let (indices, sums) = inChina ? (split.china, split.chinaCumulative) : (split.rest, split.restCumulative)
            return places[indices[pick(sums)]]
        }
        return places[pick(cumulative)]
    }

    /// An index drawn in proportion to the steps of a cumulative sum.
    private mutating func pick(_ cumulative: [Double]) -> Int {
        let target = random.nextUnit() * cumulative[cumulative.count - 1]
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let mid = (low + high) / 2
            if cumulative[mid] <= target { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private mutating func pick<T>(_ weighted: [(T, Int)]) -> T {
        let total = weighted.reduce(0) { $0 + $1.1 }
        var r = Int(random.next() % UInt64(total))
        for (value, weight) in weighted {
            if r < weight { return value }
            r -= weight
        }
        return weighted[weighted.count - 1].0
    }

    private mutating func pick(_ values: [String]) -> String { values[Int(random.next() % UInt64(values.count))] }

    private mutating func chineseName(category: String, place: Place) -> String {
        let brands = SyntheticVocabulary.chineseBrands[category] ?? SyntheticVocabulary.chineseBrands["other"]!
        let brand = pick(brands)
        let area = pick(SyntheticVocabulary.chineseAreas)
        if category.hasPrefix("transport.") {
            return area + brand
        }
        let city = place.chineseName.map { String($0.prefix(while: { $0 != "市" })) } ?? ""
        return random.nextUnit() < 0.3 && !city.isEmpty ? "\(brand)(\(city)\(area)店)" : "\(brand)(\(area)店)"
    }

    private mutating func latinName(category: String, place: Place) -> String {
        let brands = SyntheticVocabulary.latinBrands[category] ?? SyntheticVocabulary.latinBrands["other"]!
        let brand = pick(brands)
        if brand.contains("{place}") { return brand.replacingOccurrences(of: "{place}", with: place.name) }
        if brand.contains("{surname}") { return brand.replacingOccurrences(of: "{surname}", with: pick(SyntheticVocabulary.surnames)) }
        return brand
    }

    private mutating func latinAddress(country: String) -> String {
        let street = pick(SyntheticVocabulary.streetStems)
        let number = 1 + Int(random.next() % 250)
        switch country {
        case "FI": return "\(street)katu \(number)"
        case "DE", "AT", "CH": return "\(street)straße \(number)"
        case "FR", "BE": return "\(number) rue \(street)"
        case "ES", "MX", "AR", "CO", "CL", "PE": return "Calle \(street) \(number)"
        case "IT": return "Via \(street) \(number)"
        case "SE": return "\(street)gatan \(number)"
        case "NL": return "\(street)straat \(number)"
        default: return "\(number) \(street) \(pick(["Street", "Road", "Avenue", "Lane", "Boulevard"]))"
        }
    }
}
