import Foundation
import GeoCore
import TestSupport
import Testing

@Suite struct CoordinateConverterTests {
    let converter = CoordinateConverter.shared

    @Test func parsesCRSNames() throws {
        #expect(try CRS(parsing: "WGS84") == .wgs84)
        #expect(try CRS(parsing: "WGS84") == .wgs84)
        #expect(throws: GeoError.self) { try CRS(parsing: "wgs-84") }
        #expect(throws: GeoError.self) { try CRS(parsing: "EPSG:+3857") }
        #expect(throws: GeoError.self) { try CRS(parsing: "EPSG:03857") }
        #expect(try CRS(parsing: "EPSG:4326") == .wgs84)
        #expect(try CRS(parsing: "gcj02") == .gcj02)
        #expect(try CRS(parsing: "BD09") == .bd09)
        #expect(try CRS(parsing: "epsg:3857") == .epsg(3857))
        #expect(throws: GeoError.unknownCRS("mars")) { try CRS(parsing: "mars") }
        #expect(throws: GeoError.unknownCRS("EPSG:")) { try CRS(parsing: "EPSG:") }
        #expect(throws: GeoError.unknownCRS("EPSG:-1")) { try CRS(parsing: "EPSG:-1") }
    }

    @Test(arguments: [(3857, ProjFixtures.epsg3857), (32650, ProjFixtures.epsg32650), (4490, ProjFixtures.epsg4490)])
    func agreesWithCs2cs(_ code: Int, _ rows: [(lon: Double, lat: Double, x: Double, y: Double)]) throws {
        var points = rows.map { XY(x: $0.lon, y: $0.lat) }
        try converter.convert(&points, from: .wgs84, to: .epsg(code))
        for (point, row) in zip(points, rows) {
            // cs2cs prints 12 decimals: agreement to 1e-6 m (or 1e-9° for geographic targets).
            let tolerance = code == 4490 ? 1e-9 : 1e-6
            #expect(abs(point.x - row.x) <= tolerance && abs(point.y - row.y) <= tolerance, "EPSG:\(code) \(row): got \(point)")
        }
        // And back again.
        try converter.convert(&points, from: .epsg(code), to: .wgs84)
        for (point, row) in zip(points, rows) {
            #expect(abs(point.x - row.lon) < 1e-8 && abs(point.y - row.lat) < 1e-8)
        }
    }

    @Test func chainsChinaDatumsThroughWGS84() throws {
        let wgs = XY(x: 116.404, y: 39.915)
        let gcj = try converter.convert(wgs, from: .wgs84, to: .gcj02)
        #expect(abs(gcj.x - 116.41024449916938) < 1e-12)
        let mercatorFromGCJ = try converter.convert(gcj, from: .gcj02, to: .epsg(3857))
        let mercator = try converter.convert(wgs, from: .wgs84, to: .epsg(3857))
        #expect(abs(mercatorFromGCJ.x - mercator.x) < 1e-4 && abs(mercatorFromGCJ.y - mercator.y) < 1e-4)
        let bd = try converter.convert(mercator, from: .epsg(3857), to: .bd09)
        let bdDirect = try converter.convert(wgs, from: .wgs84, to: .bd09)
        #expect(abs(bd.x - bdDirect.x) < 1e-9 && abs(bd.y - bdDirect.y) < 1e-9)
    }

    @Test func rejectsUnknownCRSAndBadPoints() {
        #expect(throws: GeoError.unknownCRS("EPSG:99999")) {
            try converter.convert(XY(x: 0, y: 0), from: .wgs84, to: .epsg(99999))
        }
        #expect(throws: GeoError.invalidPoint(index: 0, reason: "latitude (y) must be between -90 and 90 in wgs84 (got 91.0)")) {
            try converter.convert(XY(x: 0, y: 91), from: .wgs84, to: .gcj02)
        }
        #expect(throws: GeoError.invalidPoint(index: 1, reason: "x and y must be finite numbers")) {
            var points = [XY(x: 0, y: 0), XY(x: .nan, y: 0)]
            try converter.convert(&points, from: .wgs84, to: .epsg(3857))
        }
        // A geographic EPSG source is validated as degrees too.
        #expect(throws: GeoError.invalidPoint(index: 0, reason: "longitude (x) must be between -180 and 180 in EPSG:4490 (got 200.0)")) {
            try converter.convert(XY(x: 200, y: 0), from: .epsg(4490), to: .wgs84)
        }
    }

    /// PROJ contexts are per transformation and transformations are checked out one thread at a time: many
    /// threads converting at once get exactly the single-threaded answers.
    @Test func concurrentConversionsAgree() async throws {
        var random = testRandom("concurrentConversions")
        let input = (0..<2_000).map { _ in XY(x: random.uniform(100...130), y: random.uniform(0...60)) }
        var expected = input
        try converter.convert(&expected, from: .wgs84, to: .epsg(3857))
        let reference = expected
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for task in 0..<16 {
                group.addTask {
                    var ok = true
                    for round in 0..<20 {
                        var points = input
                        let target: CRS = (task + round) % 2 == 0 ? .epsg(3857) : .epsg(32650)
                        try CoordinateConverter.shared.convert(&points, from: .wgs84, to: target)
                        if target == .epsg(3857) { ok = ok && points == reference }
                    }
                    return ok
                }
            }
            for try await ok in group { #expect(ok) }
        }
    }
}

/// Strict decimal numbers, and projected input outside a CRS's domain.
@Suite struct StrictNumberTests {
    @Test(arguments: ["0", "-122.08", "+1", ".5", "5.", "1e5", "-1.5E-3", "00012"])
    func decimalsParse(_ text: String) {
        #expect(DecimalNumber.parse(text) == Double(text))
    }

    @Test(arguments: ["0x10", "0X1p3", "inf", "-infinity", "nan", "NaN", "1e", "e5", ".", "-", "", " 1", "1 ", "1,5", "1e400", "١٢"])
    func nonDecimalsAreRefused(_ text: String) {
        #expect(DecimalNumber.parse(text) == nil)
    }

    /// Plain decimals (read without strtod when short) against `Double(_:)`, the oracle, bit for bit: random digit
    /// strings of 1 to 19 digits with and without a sign and a point, so both sides of the 15-digit fast path.
    @Test func randomDecimalsParseAsDoubleDoes() {
        var random = testRandom("randomDecimalsParseAsDoubleDoes")
        for _ in 0..<100_000 {
            let count = Int(random.next() % 19) + 1
            var text = String((0..<count).map { _ in Character(String(random.next() % 10)) })
            if random.next() % 4 != 0 { text.insert(".", at: text.index(text.startIndex, offsetBy: Int(random.next() % UInt64(count + 1)))) }
            switch random.next() % 3 {
            case 0: text = "-" + text
            case 1: text = "+" + text
            default: break
            }
            let expected = Double(text)
            let parsed = DecimalNumber.parse(text[...])
            #expect(parsed?.bitPattern == expected?.bitPattern, "\(text): \(String(describing: parsed)) against \(String(describing: expected))")
        }
    }

    @Test func integers() {
        #expect(DecimalNumber.parseInteger("-12") == -12)
        #expect(DecimalNumber.parseInteger("0x10") == nil)
        #expect(DecimalNumber.parseInteger("1e3") == nil)
        #expect(DecimalNumber.parseInteger("99999999999999999999") == nil)
    }

    /// PROJ clamps EPSG:3857 input of 1e300 to the pole; the converter refuses it.
    @Test func projectedInputOutsideTheDomainIsRefused() throws {
        #expect(throws: GeoError.self) {
            try CoordinateConverter.shared.convert(XY(x: 1e300, y: 1e300), from: .epsg(3857), to: .wgs84)
        }
        #expect(throws: GeoError.self) {
            try CoordinateConverter.shared.convert(XY(x: -1e30, y: 0), from: .epsg(3857), to: .wgs84)
        }
        // The edge of the Web Mercator square is still inside.
        let edge = try CoordinateConverter.shared.convert(XY(x: 20_037_508.34, y: 0), from: .epsg(3857), to: .wgs84)
        #expect(abs(edge.x - 180) < 1e-6)
        let helsinki = try CoordinateConverter.shared.convert(XY(x: 2_776_362.0, y: 8_437_737.0), from: .epsg(3857), to: .wgs84)
        #expect(abs(helsinki.x - 24.94) < 0.01 && abs(helsinki.y - 60.17) < 0.01)
    }
}
