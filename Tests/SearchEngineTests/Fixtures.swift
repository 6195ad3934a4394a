import Catalog
import Foundation
import GeoCore
import Records

@testable import SearchEngine

let testTaxonomy = CategoryTaxonomy(labels: [
    "food.cafe": ["cafe", "coffee", "kahvila", "咖啡", "咖啡厅"],
    "food.restaurant": ["restaurant", "餐厅"],
    "transport.bus_stop": ["bus stop", "公交站"],
    "education.university": ["university", "大学"],
    "shop.supermarket": ["supermarket", "超市"],
])

func poi(_ id: String, _ name: String, _ category: String, _ lat: Double, _ lon: Double, address: String? = nil) -> POIRecord {
    POIRecord(id: id, name: name, category: category, address: address, city: nil, country: nil, lat: lat, lon: lon, tags: [:])
}

/// Random POIs around a few centres with names drawn from a small vocabulary, so keywords have every selectivity.
func randomPOIs(_ count: Int, _ random: inout SplitMix64) -> [POIRecord] {
    let words = ["cafe", "java", "kahvila", "sushi", "pizza", "bar", "north", "harbour", "market", "green", "咖啡", "星巴克", "中关村"]
    let categories = ["food.cafe", "food.restaurant", "transport.bus_stop", "education.university", "shop.supermarket", "office"]
    let centres = [(60.17, 24.94), (39.98, 116.31), (0.0, 179.99), (-33.87, 151.2)]
    return (0..<count).map { i in
        let c = centres[Int(random.next() % UInt64(centres.count))]
        let p = GreatCircle.destination(
            from: Coordinate(uncheckedLatitude: c.0, longitude: c.1),
            distance: random.uniform(0...20_000),
            bearing: random.uniform(0...360)
        )
        let name = (0..<(1 + Int(random.next() % 3))).map { _ in words[Int(random.next() % UInt64(words.count))] }.joined(separator: " ")
        return poi("t\(i)", name, categories[Int(random.next() % UInt64(categories.count))], p.latitude, p.longitude)
    }
}

/// POIs in the order a bulk load numbers them — record order: along the Hilbert curve of their positions, ties in
/// the order given (the rule of `EngineState.Loader`, stated independently here).
func inRecordOrder(_ pois: [POIRecord]) -> [POIRecord] {
    let keys = pois.map { HilbertCurve.index(latitude: $0.lat, longitude: $0.lon) }
    return pois.indices.sorted { (keys[$0], $0) < (keys[$1], $1) }.map { pois[$0] }
}
