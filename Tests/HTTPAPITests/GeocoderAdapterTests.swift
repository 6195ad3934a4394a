import BundledData
import Foundation
import Gazetteer
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import SearchEngine
import TestSupport
import Testing

/// Nominatim and Photon wire formats (what geopy and other clients read), through the router; geopy itself runs
/// against a live server in scripts/compat/run.
@Suite struct GeocoderAdapterTests {
    func adapterApp() -> some ApplicationProtocol {
        buildApplication(configuration: ServerConfiguration(), engine: makeEngine(), gazetteer: BundledGazetteer.shared, metrics: testRegistry)
    }

    func array(_ response: TestResponse) throws -> [[String: Any]] {
        try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as! [[String: Any]]
    }

    @Test func nominatimSearchHasNominatimsFields() async throws {
        try await adapterApp().test(.router) { client in
            let places = try array(
                try await client.execute(uri: "/nominatim/search?q=Berlin&format=json&limit=1&addressdetails=1&extratags=True", method: .get)
            )
            let berlin = try #require(places.first)
            let expected = try #require(BundledGazetteer.shared.geocode(try GeocodeQuery(text: "Berlin", limit: 1)).first)
            #expect(berlin["lat"] as? String == String(format: "%.7f", expected.latitude))
            #expect(berlin["lon"] as? String == String(format: "%.7f", expected.longitude))
            #expect(berlin["display_name"] as? String == expected.displayName)
            #expect(berlin["class"] as? String == "place" && berlin["type"] as? String == "city")
            #expect(berlin["place_id"] as? Int == 2_950_159)
            #expect(berlin["osm_type"] == nil, "GeoNames places claim no OSM id")
            #expect((berlin["boundingbox"] as? [String])?.count == 4)
            let address = try #require(berlin["address"] as? [String: String])
            #expect(address["country_code"] == "de" && address["country"] == "Germany")
            #expect(berlin["extratags"] is [String: String], "extratags=True is a true flag")
            // jsonv2 renames class to category; the default format is jsonv2.
            let v2 = try array(try await client.execute(uri: "/nominatim/search?q=Berlin&limit=1", method: .get))
            #expect(v2.first?["category"] as? String == "place" && v2.first?["class"] == nil)
        }
    }

    @Test func nominatimFallsBackToPOIsAndFilters() async throws {
        try await adapterApp().test(.router) { client in
            let cafe = try array(try await client.execute(uri: "/nominatim/search?q=Cafe%2012&format=json&limit=1", method: .get))
            #expect(cafe.first?["name"] as? String == "Cafe 12")
            #expect(cafe.first?["class"] as? String == "amenity" && cafe.first?["type"] as? String == "cafe")
            let us = try array(try await client.execute(uri: "/nominatim/search?q=Springfield&format=json&limit=5&countrycodes=us", method: .get))
            #expect(us.count == 5)
            #expect(us.allSatisfy { ($0["display_name"] as? String ?? "").hasSuffix("United States") })
            let structured = try array(
                try await client.execute(uri: "/nominatim/search?city=Springfield&state=Illinois&format=json&limit=1", method: .get)
            )
            #expect((structured.first?["display_name"] as? String)?.contains("Illinois") == true, "\(structured)")
            let none = try await client.execute(uri: "/nominatim/search?q=Qqqzzx%20Xyzzyq&format=json", method: .get)
            #expect(none.status == .ok && String(buffer: none.body) == "[]")
        }
    }

    @Test func nominatimReverseAndErrors() async throws {
        try await adapterApp().test(.router) { client in
            let sea = try await client.execute(uri: "/nominatim/reverse?lat=0.0000000&lon=0.0000000&format=json", method: .get)
            #expect(sea.status == .ok)
            #expect(String(buffer: sea.body) == #"{"error":"Unable to geocode"}"#)
            let helsinki = try json(try await client.execute(uri: "/nominatim/reverse?lat=60.1699&lon=24.9384&format=json&zoom=10", method: .get))
            #expect(helsinki["name"] as? String == "Helsinki")
            #expect((helsinki["address"] as? [String: String])?["country_code"] == "fi", "addressdetails defaults to 1 on reverse")
            let missing = try await client.execute(uri: "/nominatim/reverse?lon=1&format=json", method: .get)
            #expect(missing.status == .badRequest)
            #expect((try json(missing)["error"] as? [String: Any])?["message"] as? String == "Parameter 'lat' missing.")
            let format = try await client.execute(uri: "/nominatim/search?q=x&format=xml", method: .get)
            #expect(format.status == .badRequest)
            #expect(((try json(format)["error"] as? [String: Any])?["code"] as? Int) == 400)
            let status = try await client.execute(uri: "/nominatim/status?format=json", method: .get)
            #expect(try json(status)["message"] as? String == "OK")
        }
    }

    @Test func nominatimGeoJSON() async throws {
        try await adapterApp().test(.router) { client in
            let collection = try json(try await client.execute(uri: "/nominatim/search?q=Berlin&format=geojson&limit=1", method: .get))
            #expect(collection["type"] as? String == "FeatureCollection")
            let feature = try #require((collection["features"] as? [[String: Any]])?.first)
            let coordinates = (feature["geometry"] as? [String: Any])?["coordinates"] as? [Double]
            #expect(coordinates?.count == 2 && abs((coordinates?[1] ?? 0) - 52.52437) < 1e-6)
            #expect((feature["properties"] as? [String: Any])?["name"] as? String == "Berlin")
        }
    }

    @Test func photonSearchReverseAndTags() async throws {
        try await adapterApp().test(.router) { client in
            let berlin = try json(try await client.execute(uri: "/photon/api?q=Berlin&limit=1", method: .get))
            let feature = try #require((berlin["features"] as? [[String: Any]])?.first)
            let properties = try #require(feature["properties"] as? [String: Any])
            #expect(properties["countrycode"] as? String == "DE" && properties["osm_key"] as? String == "place")
            #expect((properties["extent"] as? [Double])?.count == 4)
            let cafes = try json(try await client.execute(uri: "/photon/api?q=cafe&lat=60.17&lon=24.94&limit=3&osm_tag=amenity:cafe", method: .get))
            let names = (cafes["features"] as? [[String: Any]])?.compactMap { ($0["properties"] as? [String: Any])?["name"] as? String } ?? []
            #expect(names.count == 3 && names.allSatisfy { $0.hasPrefix("Cafe") }, "\(names)")
            let excluded = try json(try await client.execute(uri: "/photon/api?q=cafe&lat=60.17&lon=24.94&limit=3&osm_tag=!amenity", method: .get))
            #expect(
                ((excluded["features"] as? [[String: Any]]) ?? []).allSatisfy {
                    ($0["properties"] as? [String: Any])?["osm_key"] as? String != "amenity"
                }
            )
            let reverse = try json(try await client.execute(uri: "/photon/reverse?lat=60.17&lon=24.94", method: .get))
            #expect(((reverse["features"] as? [[String: Any]])?.first?["properties"] as? [String: Any])?["name"] as? String == "Cafe 0")
            let bad = try await client.execute(uri: "/photon/api?limit=1", method: .get)
            #expect(bad.status == .badRequest)
            #expect(try json(bad)["message"] as? String != nil)
        }
    }
}
