import BundledData
import Catalog
import Datasets
import Foundation
import Gazetteer
import GeoCore
import Testing

@testable import SearchEngine

/// The bundled OpenStreetMap extract as users meet it: every POI the importer made (nodes, building outlines and
/// multipolygons alike) is found by its name, and by each of its other names, from where it is.
@Suite struct OSMExtractSearchTests {
    static let dataDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../data").standardized.path
    static let imported: OSMImport = {
        let importer = try! OSMImporter.bundled(dataDirectory: dataDirectory)
        return try! importer.read(dataDirectory + "/Helsinki.osm.pbf")
    }()
    static let engine = SearchEngine(pois: imported.pois, taxonomy: try! CategoryTaxonomy.load(directory: dataDirectory))

    static func found(_ text: String, near poi: POIRecord) throws -> Bool {
        let origin = Coordinate(uncheckedLatitude: poi.lat, longitude: poi.lon)
        return try engine.search(SearchQuery(text: text, origin: origin, limit: 20)).results.contains {
            if case .poi(let hit) = $0.record { return hit.id == poi.id }
            return false
        }
    }

    @Test func everyPOIIsFoundByItsNameNearItsPlace() throws {
        var missed: [String] = []
        for poi in Self.imported.pois where try !Self.found(poi.name, near: poi) { missed.append("\(poi.id) \(poi.name)") }
        #expect(missed.isEmpty, "not found by name near their place: \(missed.prefix(10))")
        #expect(Self.imported.pois.filter { !$0.id.hasPrefix("osm-n") }.count > 50, "ways and relations are POIs too")
    }

    @Test func everyNameVariantFindsItsPOI() throws {
        var tried = 0
        var missed: [String] = []
        for poi in Self.imported.pois {
            for key in ["name:fi", "name:sv", "name:en", "alt_name", "old_name", "official_name", "short_name"] {
                guard let variant = poi.tags[key], variant != poi.name else { continue }
                tried += 1
                if try !Self.found(variant, near: poi) { missed.append("\(poi.id) \(key)=\(variant)") }
            }
        }
        #expect(tried > 30)
        #expect(missed.isEmpty, "variants that do not find their POI: \(missed.prefix(10))")
    }

    /// The objects issue 34 named as missing from the node-only conversion: mapped as building outlines.
    @Test func buildingsMappedAsOutlinesAreFound() throws {
        for name in ["Suomen Pankki", "Kauppakeskus Kluuvi"] {
            let hits = try Self.engine.search(SearchQuery(text: name, limit: 3)).results.compactMap { hit -> POIRecord? in
                if case .poi(let poi) = hit.record { return poi }
                return nil
            }
            #expect(hits.first?.name == name, "\(name): \(hits.map(\.name))")
            #expect(hits.first.map { $0.id.hasPrefix("osm-w") || $0.id.hasPrefix("osm-r") } == true, "\(name) is an outline: \(hits.map(\.id))")
        }
    }
}
