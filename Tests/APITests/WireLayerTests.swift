import API
import Foundation
import GeoCore
import Records
import SearchEngine
import SpatialIndex
import Testing

/// The wire layer on its own: parameter rules, cursors, the route table and the document made from it.
@Suite struct ParameterTests {
    private func nearby(_ items: QueryItems) throws(ParameterError) -> NearbyRequest { try NearbyRequest(RequestParameters(items)) }

    @Test func aRepeatedParameterTakesItsLastValue() throws {
        let request = try nearby([("lat", "1"), ("lon", "2"), ("lat", "60.17"), ("limit", "5"), ("unknown", "x")])
        #expect(request.query.origin.latitude == 60.17)
        #expect(request.query.limit == 5)
        #expect(request.query.kind == .poi)
    }

    @Test(
        arguments: [
            ([("lat", "0x10"), ("lon", "1")], ParameterError("lat", "must be a number between -90 and 90")),
            ([("lat", "91"), ("lon", "1")], ParameterError("lat", "must be a number between -90 and 90")),
            ([("lat", "1")], ParameterError("lon", "is required when lat is given")),
            ([("lon", "1")], ParameterError("lat", "is required when lon is given")),
            ([], ParameterError("lat", "is required (with lon)")),
            (
                [("lat", "1"), ("lon", "1"), ("radius", "0")],
                ParameterError("radius", "must be a number of metres greater than 0 and at most 1000000")
            ),
            (
                [("lat", "1"), ("lon", "1"), ("radius", "nan")],
                ParameterError("radius", "must be a number of metres greater than 0 and at most 1000000")
            ),
            ([("lat", "1"), ("lon", "1"), ("limit", "0")], ParameterError("limit", "must be an integer between 1 and 100")),
            ([("lat", "1"), ("lon", "1"), ("limit", "1.5")], ParameterError("limit", "must be an integer between 1 and 100")),
            ([("lat", "1"), ("lon", "1"), ("q", "  ")], ParameterError("q", "must not be empty")),
            ([("lat", "1"), ("lon", "1"), ("q", "a\u{7}b")], ParameterError("q", "must not contain control characters")),
            (
                [("lat", "1"), ("lon", "1"), ("category", "food..cafe")],
                ParameterError("category", "must be a category path such as food or food.cafe")
            ),
            ([("lat", "1"), ("lon", "1"), ("kind", "POI")], ParameterError("kind", "must be poi, pin or all")),
            ([("lat", "1"), ("lon", "1"), ("coordsys", "epsg:4326")], ParameterError("coordsys", "must be wgs84, gcj02 or bd09")),
            ([("lat", "1"), ("lon", "1"), ("format", "xml")], ParameterError("format", "must be json or geojson")),
            (
                [("lat", "1"), ("lon", "1"), ("cursor", "x")],
                ParameterError("cursor", "is malformed: pass the next value of a previous page unchanged")
            ),
        ] as [([(String, String?)], ParameterError)]
    )
    func nearbyRefuses(_ items: [(String, String?)], _ expected: ParameterError) {
        #expect(throws: expected) { try nearby(QueryItems(items)) }
    }

    @Test func eachOperationHasItsOwnRules() {
        func search(_ items: QueryItems) throws(ParameterError) { _ = try SearchRequest(RequestParameters(items)) }
        func within(_ items: QueryItems) throws(ParameterError) { _ = try WithinRequest(RequestParameters(items)) }
        func clusters(_ items: QueryItems) throws(ParameterError) { _ = try ClustersRequest(RequestParameters(items)) }
        #expect(throws: ParameterError("q", "is required")) { try search([]) }
        #expect(throws: ParameterError("q", "must be at most 500 characters")) { try search([("q", String(repeating: "a", count: 501))]) }
        #expect(throws: ParameterError("offset", "must be an integer between 0 and 10000")) { try search([("q", "x"), ("offset", "10001")]) }
        #expect(throws: ParameterError("bbox", "south must not be greater than north")) { try search([("q", "x"), ("bbox", "0,1,1,0")]) }
        #expect(throws: ParameterError("bbox", "or polygon is required")) { try within([]) }
        #expect(throws: ParameterError("bbox", "and polygon must not both be given")) {
            try within([("bbox", "0,0,1,1"), ("polygon", "0,0;1,0;1,1")])
        }
        #expect(throws: ParameterError("bbox", "is required")) { try clusters([("precision", "3")]) }
        #expect(throws: ParameterError("precision", "is required (an integer between 1 and 12)")) { try clusters([("bbox", "0,0,1,1")]) }
        #expect(throws: ParameterError("precision", "must be an integer between 1 and 12")) {
            try clusters([("bbox", "0,0,1,1"), ("precision", "13")])
        }
    }

    @Test func positionsAreGivenInTheRequestsCoordinateSystem() throws {
        let gcj = ChinaDatum.wgs84ToGCJ02(latitude: 39.9, longitude: 116.4)
        let request = try nearby([("lat", String(gcj.latitude)), ("lon", String(gcj.longitude)), ("coordsys", "GCJ02")])
        #expect(abs(request.query.origin.latitude - 39.9) < 1e-5 && abs(request.query.origin.longitude - 116.4) < 1e-5)
        #expect(request.encoder.coordsys == .gcj02)
    }
}

@Suite struct CursorTests {
    @Test func aCursorContinuesOnlyItsOwnQuery() throws {
        let first = try NearbyRequest(RequestParameters(QueryItems([("lat", "60.17"), ("lon", "24.94"), ("q", "cafe")])))
        let cursor = PageCursor.nearby(NearestCursor(key: 0.25, id: 7), query: first.query)
        let again = try NearbyRequest(
            RequestParameters(QueryItems([("lat", "60.17"), ("lon", "24.94"), ("q", "cafe"), ("limit", "50"), ("cursor", cursor)]))
        )
        #expect(again.query.after == NearestCursor(key: 0.25, id: 7))
        #expect(
            throws: ParameterError(
                "cursor",
                "belongs to another query: send it with the same lat, lon, radius, q, category and kind as the page that gave it"
            )
        ) {
            _ = try NearbyRequest(RequestParameters(QueryItems([("lat", "60.18"), ("lon", "24.94"), ("q", "cafe"), ("cursor", cursor)])))
        }
        // A nearby cursor is not a within cursor.
        #expect(throws: ParameterError("cursor", "is malformed: pass the next value of a previous page unchanged")) {
            _ = try WithinRequest(RequestParameters(QueryItems([("bbox", "0,0,1,1"), ("cursor", cursor)])))
        }
    }

    /// Cursors of every length (all three base64 remainders) decode to the position they were made from.
    @Test func cursorsRoundTrip() throws {
        let query = try NearbyRequest(RequestParameters(QueryItems([("lat", "60.17"), ("lon", "24.94")]))).query
        var random = SplitMix64(seed: 7)
        for id in [0, 9, 10, 99, 100, 999, 4_294_967_295] as [UInt32] {
            for _ in 0..<20 {
                let position = NearestCursor(key: Double(random.next() % 1_000_000) / 1_000_000, id: id)
                let text = PageCursor.nearby(position, query: query)
                #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
                #expect(try PageCursor.nearby(text, query: query) == position)
            }
        }
    }

    @Test func malformedCursorsAreRefused() {
        for bad in ["x", "bjE6", "dzE6MQ", String(repeating: "A", count: 300)] {
            #expect(throws: ParameterError("cursor", "is malformed: pass the next value of a previous page unchanged")) {
                _ = try NearbyRequest(RequestParameters(QueryItems([("lat", "0"), ("lon", "0"), ("cursor", bad)])))
            }
        }
    }
}

@Suite struct RouteTableTests {
    @Test func operationIdsAreUniqueAndNoTwoRoutesAnswerTheSameRequest() {
        let ids = RouteTable.routes.map(\.operationId)
        #expect(Set(ids).count == ids.count)
        let shapes = RouteTable.routes.map { route in
            "\(route.method.rawValue) " + route.segments.map { $0.hasPrefix("{") ? "*" : String($0) }.joined(separator: "/")
        }
        #expect(Set(shapes).count == shapes.count, "\(shapes)")
    }

    @Test func methodsComeFromTheTable() {
        #expect(RouteTable.methods(for: "/v1/pois/caf%C3%A9-1") == [.get, .put, .delete])
        #expect(RouteTable.methods(for: "/v1/pins") == [.get, .post])
        #expect(RouteTable.methods(for: "/static/leaflet/images/marker.png") == [.get])
        #expect(RouteTable.methods(for: "/") == [.get])
        #expect(RouteTable.methods(for: "/v1/nowhere") == nil)
        #expect(RouteTable.methods(for: "/v1/pois") == nil)
    }

    /// The document lists exactly the table's API operations, in its order, and each has what a client needs.
    @Test func theDocumentIsMadeFromTheTable() throws {
        let document = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.json)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: [String: Any]]])
        var documented: [String: String] = [:]
        for (path, operations) in paths {
            for (method, operation) in operations { documented["\(method.uppercased()) \(path)"] = operation["operationId"] as? String }
        }
        let api = RouteTable.routes.filter { $0.group == .api }
        #expect(documented == Dictionary(uniqueKeysWithValues: api.map { ("\($0.method.rawValue) \($0.path)", $0.operationId) }))
        // Paths in the table's order (the document is written in that order).
        let text = String(decoding: OpenAPIDocument.json, as: UTF8.self)
        let offsets = api.map(\.path).map { path in text.range(of: "\"\(path)\":{")!.lowerBound }
        #expect(offsets == offsets.sorted())
        for (key, _) in documented {
            let parts = key.split(separator: " ")
            let operation = paths[String(parts[1])]![parts[0].lowercased()]!
            #expect(operation["summary"] is String, "\(key) has a summary")
            #expect(operation["description"] is String, "\(key) has a description")
            let responses = try #require(operation["responses"] as? [String: Any], "\(key) has responses")
            #expect(!responses.isEmpty)
        }
    }
}
