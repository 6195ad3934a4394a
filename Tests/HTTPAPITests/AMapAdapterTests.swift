import BundledData
import Foundation
import GeoCore
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import SearchEngine
import TestSupport
import Testing

/// The AMap Web API wire format through the router: the string envelope, GCJ-02 in and out, JSONP, business errors,
/// v3 and v5 counts; the real clients run against a live server in scripts/compat/run.
@Suite struct AMapAdapterTests {
    func amapApp() -> some ApplicationProtocol {
        buildApplication(configuration: ServerConfiguration(), engine: makeEngine(), gazetteer: BundledGazetteer.shared, metrics: testRegistry)
    }

    /// The Beijing test POI (WGS-84 39.9836, 116.3164) as AMap writes it.
    static let beijingGCJ: String = {
        let gcj = ChinaDatum.wgs84ToGCJ02(latitude: 39.9836, longitude: 116.3164)
        return String(format: "%.6f,%.6f", gcj.longitude, gcj.latitude)
    }()

    @Test func envelopeIsStringTypedAndCountsDifferByVersion() async throws {
        try await amapApp().test(.router) { client in
            let v3 = try json(try await client.execute(uri: "/v3/place/text?keywords=cafe&offset=2&page=1&key=k", method: .get))
            #expect(v3["status"] as? String == "1" && v3["info"] as? String == "OK" && v3["infocode"] as? String == "10000")
            let total = try json(try await client.execute(uri: "/v1/search?q=cafe&limit=1", method: .get))["total"] as? Int
            #expect(v3["count"] as? String == total.map(String.init), "v3 count is the total")
            #expect((v3["pois"] as? [Any])?.count == 2)
            let v5 = try json(try await client.execute(uri: "/v5/place/text?keywords=cafe&page_size=2&output=json", method: .get))
            #expect(v5["count"] as? String == "2", "v5 count is this page")
        }
    }

    @Test func locationsAreGCJ02InAndOut() async throws {
        try await amapApp().test(.router) { client in
            let around = try json(try await client.execute(uri: "/v5/place/around?location=\(Self.beijingGCJ)&radius=500", method: .get))
            let poi = try #require((around["pois"] as? [[String: Any]])?.first)
            #expect(poi["id"] as? String == "cn1")
            #expect(poi["location"] as? String == Self.beijingGCJ, "the point comes back where it was asked")
            #expect(poi["distance"] as? String == "0")
            #expect(poi["pname"] as? String == "北京市" && poi["adname"] as? String == "海淀区" && poi["cityname"] as? String == "北京市")
            #expect(poi["typecode"] as? String == "050500" && poi["type"] as? String == "餐饮服务;咖啡厅;咖啡厅")
        }
    }

    @Test func polygonsTakeBothSeparatorsAndRectangles() async throws {
        try await amapApp().test(.router) { client in
            for polygon in [
                "116.30,39.97|116.34,39.97|116.34,40.0|116.30,40.0|116.30,39.97", "116.30,39.97;116.34,39.97;116.34,40.0;116.30,40.0",
                "116.30,40.0|116.34,39.97",
            ] {
                let encoded = polygon.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let answer = try json(try await client.execute(uri: "/v3/place/polygon?polygon=\(encoded)", method: .get))
                #expect((answer["pois"] as? [[String: Any]])?.map { $0["id"] as? String } == ["cn1"], "\(polygon): \(answer)")
            }
        }
    }

    @Test func jsonpOutputAndTypes() async throws {
        try await amapApp().test(.router) { client in
            let jsonp = try await client.execute(uri: "/v3/place/text?keywords=cafe&offset=1&callback=jsonp_991766_&output=JSON", method: .get)
            let text = String(buffer: jsonp.body)
            #expect(text.hasPrefix("jsonp_991766_({\"status\":\"1\"") && text.hasSuffix("})"))
            #expect(jsonp.headers[.contentType] == "application/javascript;charset=utf-8")
            let bus = try json(try await client.execute(uri: "/v3/place/text?types=150700&offset=50", method: .get))
            let buses = (bus["pois"] as? [[String: Any]]) ?? []
            #expect(!buses.isEmpty && buses.allSatisfy { $0["typecode"] as? String == "150700" })
            let byName = try json(try await client.execute(uri: "/v3/place/text?types=%E5%92%96%E5%95%A1&offset=50", method: .get))  // 咖啡
            #expect(((byName["pois"] as? [[String: Any]]) ?? []).allSatisfy { $0["typecode"] as? String == "050500" })
        }
    }

    @Test(arguments: [
        ("/v3/place/around?keywords=x", "20001"),
        ("/v3/place/around?location=200,39", "20000"),
        ("/v3/place/text", "20001"),
        ("/v3/place/text?keywords=x&output=XML", "20000"),
        ("/v3/place/text?keywords=x&callback=alert(1)", "20000"),
        ("/v5/place/text?keywords=x&page_size=26", "20000"),
        ("/v3/assistant/coordinate/convert?locations=1,2&coordsys=mapbar", "20000"),
        ("/v3/place/text?types=999999", "20000"),
    ])
    func businessErrorsAreStatusZero(_ uri: String, _ infocode: String) async throws {
        try await amapApp().test(.router) { client in
            let response = try await client.execute(uri: uri, method: .get)
            #expect(response.status == .ok, "business errors travel with HTTP 200")
            let body = try json(response)
            #expect(body["status"] as? String == "0" && body["infocode"] as? String == infocode, "\(uri): \(body)")
        }
    }

    @Test func convertAndGeocode() async throws {
        try await amapApp().test(.router) { client in
            let converted = try json(
                try await client.execute(uri: "/v3/assistant/coordinate/convert?locations=116.3164,39.9836%7C24.94,60.17&coordsys=gps", method: .get)
            )
            #expect(converted["info"] as? String == "ok")
            let pairs = (converted["locations"] as? String ?? "").split(separator: ";")
            #expect(pairs.count == 2)
            let gcj = ChinaDatum.wgs84ToGCJ02(latitude: 39.9836, longitude: 116.3164)
            #expect(pairs.first == Substring(String(format: "%.12f,%.12f", gcj.longitude, gcj.latitude)))
            #expect(pairs.last == "24.940000000000,60.170000000000", "outside China GCJ-02 is WGS-84")
            let geo = try json(
                try await client.execute(uri: "/v3/geocode/geo?address=%E5%8C%97%E4%BA%AC%E5%B8%82%E6%B5%B7%E6%B7%80%E5%8C%BA", method: .get)
            )
            let first = try #require((geo["geocodes"] as? [[String: Any]])?.first)
            #expect(first["district"] as? String == "海淀区" && first["level"] as? String == "区县")
            // No address match: a POI of the catalog by that name, at the 兴趣点 level.
            let poi = try json(try await client.execute(uri: "/v3/geocode/geo?address=Stop%2042", method: .get))
            #expect((poi["geocodes"] as? [[String: Any]])?.first?["level"] as? String == "兴趣点")
        }
    }
}
