import API
import BundledData
import Catalog
import Datasets
import Foundation
import GeoCore
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import Records
import SearchEngine
import TestSupport
import Testing

/// The same question through every surface that geocodes gets the same place: v1 (`/v1/geocode`, which `poi geocode`
/// shares), Nominatim, Photon and AMap's `geocode/geo`, over the houses and streets of the bundled Helsinki extract
/// and the bundled places. Questions are drawn from the imported addresses (seeded; replay with SEED=).
@Suite struct OneGeocoderTests {
    static let imported: OSMImport = {
        do {
            return try OSMImporter.bundled(dataDirectory: Repository.data.path, gazetteer: BundledGazetteer.shared).read(
                Repository.path("data/Helsinki.osm.pbf")
            )
        } catch {
            fatalError("the bundled extract must import: \(error)")
        }
    }()

    static let engine: SearchEngine = {
        let taxonomy = (try? CategoryTaxonomy.load(directory: Repository.data.path)) ?? CategoryTaxonomy(labels: [:])
        return SearchEngine(pois: imported.pois, addresses: imported.addresses, taxonomy: taxonomy)
    }()

    static func encoded(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }

    func json(_ response: TestResponse) throws -> Any { try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) }

    @Test func everySurfaceAnswersTheSamePlace() async throws {
        var random = testRandom("OneGeocoderTests.everySurfaceAnswersTheSamePlace")
        let houses = Self.imported.addresses.addresses.filter { $0.street != nil }
        let streets = Array(Set(houses.compactMap(\.street))).sorted()
        try #require(houses.count > 1_000 && streets.count > 50, "\(houses.count) houses, \(streets.count) streets")
        var questions: [String] = []
        for _ in 0..<30 {
            let house = houses[Int(random.next() % UInt64(houses.count))]
            questions.append("\(house.street!) \(house.housenumber), Helsinki")
        }
        for _ in 0..<10 { questions.append(streets[Int(random.next() % UInt64(streets.count))] + ", Helsinki") }
        questions += ["Helsinki", "Espoo", "Berlin", "Paris, France", "Springfield, Illinois", "Tokyo", "北京市海淀区", "Sydney", "Toronto", "Nairobi"]
        let asked = questions
        let app = buildApplication(
            configuration: ServerConfiguration(),
            engine: Self.engine,
            gazetteer: BundledGazetteer.shared,
            metrics: testRegistry
        )
        try await app.test(.router) { client in
            for question in asked {
                let q = Self.encoded(question)
                let v1 = try decode(Answers.Places.self, try await client.execute(uri: "/v1/geocode?q=\(q)&limit=1", method: .get))
                let expected = try #require(v1.results.first, "v1 answers \(question)")
                var answers: [(surface: String, lat: Double?, lon: Double?)] = []
                let nominatim =
                    try json(try await client.execute(uri: "/nominatim/search?q=\(q)&format=json&limit=1", method: .get)) as? [[String: Any]]
                answers.append(
                    (
                        "Nominatim", (nominatim?.first?["lat"] as? String).flatMap(Double.init),
                        (nominatim?.first?["lon"] as? String).flatMap(Double.init)
                    )
                )
                let photon = try json(try await client.execute(uri: "/photon/api?q=\(q)&limit=1", method: .get)) as? [String: Any]
                let point = ((photon?["features"] as? [[String: Any]])?.first?["geometry"] as? [String: Any])?["coordinates"] as? [Double]
                answers.append(("Photon", point?[1], point?[0]))
                let amap = try json(try await client.execute(uri: "/v3/geocode/geo?address=\(q)&key=test", method: .get)) as? [String: Any]
                let location = ((amap?["geocodes"] as? [[String: Any]])?.first?["location"] as? String)?.split(separator: ",").compactMap {
                    Double($0)
                }
                // AMap answers in GCJ-02, which is WGS-84 outside China.
                var amapPoint = location.flatMap { $0.count == 2 ? Coordinate(uncheckedLatitude: $0[1], longitude: $0[0]) : nil }
                if let p = amapPoint, ChinaDatum.isInChina(latitude: p.latitude, longitude: p.longitude) {
                    amapPoint = CRS.Geographic.gcj02.toWGS84(p)
                }
                answers.append(("AMap", amapPoint?.latitude, amapPoint?.longitude))
                for answer in answers {
                    let same = answer.lat.map { abs($0 - expected.lat) < 2e-5 } == true && answer.lon.map { abs($0 - expected.lon) < 2e-5 } == true
                    #expect(
                        same,
                        "\(question): \(answer.surface) answers \(answer.lat.map { "\($0)" } ?? "nothing"), \(answer.lon.map { "\($0)" } ?? "") where v1 answers \(expected.name ?? "") at \(expected.lat), \(expected.lon)"
                    )
                }
            }
        }
    }
}
