import API
import Foundation
import GeoCore
import TestSupport
import Testing

@testable import HTTPAPI
@testable import HTTPServer

/// The byte-level parsing of the read path: the query string's form decoding against Python's and Foundation's
/// percent-decoding, and the byte lane's request parser on whole, split and unusual requests.
/// Randomized cases print their seed; replay with SEED=<seed>.
@Suite struct WireParsingTests {
    /// Pairs from Python's `urllib.parse.unquote_plus(text, errors="replace")` (an independent implementation of the
    /// WHATWG form decoding): invalid escapes kept, bytes that are not UTF-8 replaced per maximal subpart.
    static let pythonVectors: [(String, String)] = [
        ("%2B%00%F0%9F%98%80", "+\u{0}\u{1f600}"),
        ("%", "%"),
        ("%2%zz%ED%A0%80+%e5%8c", "%2%zz\u{fffd}\u{fffd}\u{fffd} \u{fffd}"),
        ("+%", " %"),
        ("%0a%%A9%", "\u{a}%\u{fffd}%"),
        ("%0a+%ED%A0%80%2%A9", "\u{a} \u{fffd}\u{fffd}\u{fffd}%2\u{fffd}"),
        ("+%ED%A0%80%ED%A0%80%00+", " \u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{0} "),
        ("+%F0%9F%98", " \u{fffd}"),
        ("%E2%82%AC%0a", "\u{20ac}\u{a}"),
        ("%F0%9F%98%2", "\u{fffd}%2"),
        ("%E2%82%AC%F0%9F%98%20%2%ED%A0%80", "\u{20ac}\u{fffd} %2\u{fffd}\u{fffd}\u{fffd}"),
        ("%F0%9F%98%80%C3%zz%2%F0%9F%98", "\u{1f600}\u{fffd}%zz%2\u{fffd}"),
        ("%ED%A0%80", "\u{fffd}\u{fffd}\u{fffd}"),
        ("%C0%AF", "\u{fffd}\u{fffd}"),
        ("%E5%8C%97%F0%9F%98", "\u{5317}\u{fffd}"),
        ("%FF\u{e9}%ED%A0%80\u{e9}", "\u{fffd}\u{e9}\u{fffd}\u{fffd}\u{fffd}\u{e9}"),
        ("%E2%82%AC%A9%20", "\u{20ac}\u{fffd} "),
        ("%%ED%A0%80", "%\u{fffd}\u{fffd}\u{fffd}"),
        ("%e5%8c%E5%8C%97%FF", "\u{fffd}\u{5317}\u{fffd}"),
        ("%E2%82%AC%C0%AF%%2", "\u{20ac}\u{fffd}\u{fffd}%%2"),
        ("%0a%20%FF%2B%E5%8C%97", "\u{a} \u{fffd}+\u{5317}"),
        ("+%%F0%9F%98%ED%A0%80", " %\u{fffd}\u{fffd}\u{fffd}\u{fffd}"),
        ("%FF%zz%C0%AF", "\u{fffd}%zz\u{fffd}\u{fffd}"),
        ("%ED%A0%80\u{e9}%%", "\u{fffd}\u{fffd}\u{fffd}\u{e9}%%"),
        ("%E5%8C%97%+", "\u{5317}% "),
        ("%F0%9F%98%80%ED%A0%80\u{e9}", "\u{1f600}\u{fffd}\u{fffd}\u{fffd}\u{e9}"),
        ("%00%zza", "\u{0}%zza"),
        ("%zz%20%C0%AF%2", "%zz \u{fffd}\u{fffd}%2"),
        ("+%C3%E2%82%AC%2B", " \u{fffd}\u{20ac}+"),
        ("%00%00", "\u{0}\u{0}"),
        ("%%20\u{e9}%00", "% \u{e9}\u{0}"),
        ("%C3%A9%2B%0a%F0%9F%98%C3%A9", "\u{e9}+\u{a}\u{fffd}\u{e9}"),
        ("%zz%00%A9%2B", "%zz\u{0}\u{fffd}+"),
        ("%20", " "),
        ("%A9%A9", "\u{fffd}\u{fffd}"),
        ("%E5%8C%97", "\u{5317}"),
        ("%20%C3%A9%E2%82%ACa%2B", " \u{e9}\u{20ac}a+"),
        ("%F0%9F%98%zz%C0%AF%ED%A0%80", "\u{fffd}%zz\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}"),
        ("%2B%e5%8c%C0%AF", "+\u{fffd}\u{fffd}\u{fffd}"),
        ("\u{e9}", "\u{e9}"),
    ]

    @Test func formDecodingAgreesWithPython() {
        for (text, expected) in Self.pythonVectors {
            let ours = FormQuery.decoded(Substring(text))
            #expect(Array(ours.utf8) == Array(expected.utf8), "\(text.debugDescription): \(ours.debugDescription) vs \(expected.debugDescription)")
        }
    }

    /// On well-formed input (valid escapes of UTF-8) the decoding equals Foundation's `removingPercentEncoding` after
    /// `+` becomes a space.
    @Test func formDecodingAgreesWithFoundationOnWellFormedInput() {
        let seed = testSeed("formDecodingAgreesWithFoundationOnWellFormedInput")
        var random = SplitMix64(seed: seed)
        let pieces = [
            "a", "Z", "0", "+", "%2B", "%20", "%25", "%C3%A9", "%E2%82%AC", "%00", "%0a", "é", "€", "-", "~", "%E5%8C%97", "%F0%9F%98%80", "*",
        ]
        for _ in 0..<20_000 {
            var text = ""
            for _ in 0..<(random.next() % 8) { text += pieces[Int(random.next() % UInt64(pieces.count))] }
            let ours = FormQuery.decoded(Substring(text))
            let theirs = text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            #expect(String(ours) == theirs, "SEED=\(seed) \(text.debugDescription): \(ours.debugDescription) vs \(String(describing: theirs))")
        }
    }

    @Test func formQuerySplitsPairsAndTakesTheLastValue() {
        let query = FormQuery("q=New+York&&lat=1&lat=2&empty=&flag&eq=a=b&caf%C3%A9=%E2%82%AC&%26=%3D")
        #expect(query.lastValue(of: "q") == "New York")
        #expect(query.lastValue(of: "lat") == "2")
        #expect(query.lastValue(of: "empty") == "")
        #expect(query.lastValue(of: "flag") == "")
        #expect(query.lastValue(of: "eq") == "a=b")
        #expect(query.lastValue(of: "café") == "€")
        #expect(query.lastValue(of: "&") == "=")
        #expect(query.lastValue(of: "missing") == nil)
        #expect(Array(query).count == 8)
        #expect(Array(FormQuery(String?.none)).isEmpty && Array(FormQuery("")).isEmpty && Array(FormQuery("&&")).isEmpty)
    }

    @Test func numbersAreTrimmedByBytes() throws {
        let parameters = RequestParameters(FormQuery("lat=%2060.5%09&lon=caf%C3%A9%20&n=+7+&blank=%20%20&e=%091e3&bad=1%C3%A9"))
        #expect(try parameters.double("lat", rule: "x") == 60.5)
        #expect(try parameters.int("n", rule: "x") == 7)
        #expect(try parameters.double("e", rule: "x") == 1_000)
        for name in ["lon", "blank", "bad"] {
            #expect(throws: ParameterError(name, "rule")) { try parameters.double(name, rule: "rule") }
        }
        #expect(throws: ParameterError("bad", "rule")) { try parameters.int("bad", rule: "rule") }
    }

    static func parse(_ text: String, limit: Int = 64 * 1_024) -> FastRequest.Parsed {
        Array(text.utf8).withUnsafeBytes { FastRequest.parse($0, maximumHeadSize: limit) }
    }

    @Test func byteLaneTakesPlainReads() {
        let request = "GET /v1/nearby?lat=60.17&lon=24.94 HTTP/1.1\r\nHost: x\r\nx-request-ID:  abc \r\nConnection: Keep-Alive\r\n\r\n"
        #expect(
            Self.parse(request)
                == .request(
                    FastRequest(method: .get, target: "/v1/nearby?lat=60.17&lon=24.94", requestID: "abc", close: false),
                    length: request.utf8.count
                )
        )
        // The two fields a read may answer by (a tile's coding and revalidation), as they came but trimmed.
        let tile = "GET /tiles/pois/14/1/2.mvt HTTP/1.1\r\nAccept-Encoding:  gzip, br \r\nif-none-match: W/\"1\", \"2\"\r\n\r\n"
        #expect(
            Self.parse(tile)
                == .request(
                    FastRequest(
                        method: .get,
                        target: "/tiles/pois/14/1/2.mvt",
                        requestID: nil,
                        close: false,
                        acceptEncoding: "gzip, br",
                        ifNoneMatch: #"W/"1", "2""#
                    ),
                    length: tile.utf8.count
                )
        )
        let head = "HEAD /health HTTP/1.1\r\nConnection: close\r\n\r\nGET /next"
        #expect(Self.parse(head) == .request(FastRequest(method: .head, target: "/health", requestID: nil, close: true), length: head.utf8.count - 9))
    }

    @Test func byteLaneLeavesEverythingElseToTheParser() {
        let others = [
            "POST /v1/pois HTTP/1.1\r\n\r\n", "get /health HTTP/1.1\r\n\r\n", "GET /health HTTP/1.0\r\n\r\n", "GET /health HTTP/1.1\n\n",
            "GET http://x/health HTTP/1.1\r\n\r\n", "GET  /health HTTP/1.1\r\n\r\n", "GET /health#x HTTP/1.1\r\n\r\n",
            "GET /h\u{e9} HTTP/1.1\r\n\r\n", "GET /health HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
            "GET /health HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "GET /health HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
            "GET /health HTTP/1.1\r\nUpgrade: websocket\r\n\r\n", "GET /health HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\n\r\n",
            "GET /health HTTP/1.1\r\nConnection: close\r\nConnection: close\r\n\r\n",
            "GET /health HTTP/1.1\r\nX-Request-Id: a\r\nX-Request-Id: b\r\n\r\n", "GET /health HTTP/1.1\r\nX-Request-Id: caf\u{e9}\r\n\r\n",
            "GET /health HTTP/1.1\r\nAccept-Encoding: gzip\r\naccept-encoding: br\r\n\r\n",
            "GET /health HTTP/1.1\r\nIf-None-Match: \"a\"\r\nIf-None-Match: \"b\"\r\n\r\n",
            "GET /health HTTP/1.1\r\nBad Name: x\r\n\r\n", "GET /health HTTP/1.1\r\n: x\r\n\r\n", "GET /health HTTP/1.1\r\nA: x\r\n folded\r\n\r\n",
            "GET /health HTTP/1.1\r\nA: x\0y\r\n\r\n", "GET /health HTTP/1.1\r\nA: x\ry\r\n\r\n", "GET /health HTTP/1.1\r\n\rx",
            "GET ?x HTTP/1.1\r\n\r\n", "GET /health?pad=\(String(repeating: "x", count: 40_000)) HTTP/1.1\r\n\r\n",
            "GET /health HTTP/1.1\r\n" + String(repeating: "A: b\r\n", count: 65) + "\r\n", "\r\nGET /health HTTP/1.1\r\n\r\n",
        ]
        for text in others {
            #expect(Self.parse(text) == .other, "\(text.prefix(120).debugDescription)")
        }
        // An incomplete head already past the byte lane's share of the head limit goes to the parser (which answers 431).
        #expect(Self.parse("GET /health?pad=\(String(repeating: "x", count: 40_000))") == .other)
        #expect(Self.parse("GET /health HTTP/1.1\r\nA: \(String(repeating: "x", count: 40_000))") == .other)
    }

    /// Writes are parsed only for the write screen: whole, body included, with their Authorization; a body without a
    /// plain length, or larger than the lane waits for, is the parser's.
    @Test func byteLaneReadsScreenedWritesWhole() {
        func parse(_ text: String) -> FastRequest.Parsed {
            Array(text.utf8).withUnsafeBytes { FastRequest.parse($0, maximumHeadSize: 64 * 1_024, writes: true, maximumBodySize: 1 << 20) }
        }
        let post = "POST /v1/pins HTTP/1.1\r\nAuthorization:  Bearer abc \r\nContent-Length: 5\r\n\r\nhello"
        #expect(
            parse(post + "GET /next")
                == .request(
                    FastRequest(method: .post, target: "/v1/pins", requestID: nil, close: false, authorization: "Bearer abc"),
                    length: post.utf8.count
                )
        )
        #expect(Self.parse(post) == .other, "without a screen, writes are the parser's")
        for cut in 1..<post.utf8.count {
            #expect(parse(String(post.utf8.prefix(cut))!) == .incomplete, "cut at \(cut)")
        }
        let delete = "DELETE /v1/pins/x HTTP/1.1\r\nConnection: close\r\n\r\n"
        #expect(parse(delete) == .request(FastRequest(method: .delete, target: "/v1/pins/x", requestID: nil, close: true), length: delete.utf8.count))
        for text in [
            "POST /v1/pins HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
            "POST /v1/pins HTTP/1.1\r\nContent-Length: +5\r\n\r\nhello",
            "POST /v1/pins HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\nhello", "POST /v1/pins HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST /v1/pins HTTP/1.1\r\nContent-Length: 16385\r\n\r\n", "POST /v1/pins HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n",
            "POST /v1/pins HTTP/1.1\r\nAuthorization: a\r\nAuthorization: b\r\n\r\n", "PATCH /v1/pins/x HTTP/1.1\r\n\r\n",
            "POST /v1/pins HTTP/1.0\r\nContent-Length: 0\r\n\r\n",
        ] {
            #expect(parse(text) == .other, "\(text.debugDescription)")
        }
    }

    /// Every proper prefix of a request the lane takes is incomplete; the whole is the request; what follows is not read.
    @Test func byteLaneWaitsForWholeRequests() {
        let seed = testSeed("byteLaneWaitsForWholeRequests")
        var random = SplitMix64(seed: seed)
        for _ in 0..<200 {
            let method = random.next() % 2 == 0 ? "GET" : "HEAD"
            let target = "/v1/nearby?lat=\(random.next() % 90)&lon=\(random.next() % 180)&q=caf%C3%A9+bar"
            var request = "\(method) \(target) HTTP/1.1\r\n"
            var id: String?
            var close = false
            for _ in 0..<(random.next() % 5) {
                switch random.next() % 4 {
                case 0 where id == nil:
                    id = "id-\(random.next() % 1000)"
                    request += "X-Request-Id: \(id!)\r\n"
                case 1: request += "Accept: */*\r\n"
                case 2: request += "User-Agent:\tcurl/8 (x; y)\t\r\n"
                default: request += "Host: example.org:8080\r\n"
                }
            }
            if random.next() % 3 == 0 {
                close = true
                request += "connection: CLOSE\r\n"
            }
            request += "\r\n"
            let bytes = Array(request.utf8)
            let expected = FastRequest.Parsed.request(
                FastRequest(method: method == "HEAD" ? .head : .get, target: target, requestID: id, close: close),
                length: bytes.count
            )
            for cut in 1..<bytes.count {
                let parsed = bytes[..<cut].withUnsafeBytes { FastRequest.parse($0, maximumHeadSize: 64 * 1_024) }
                #expect(parsed == .incomplete, "SEED=\(seed) \(request.debugDescription) cut at \(cut): \(parsed)")
            }
            let followed = (bytes + Array("GET /health HTTP/1.1\r\n\r\n".utf8)).withUnsafeBytes { FastRequest.parse($0, maximumHeadSize: 64 * 1_024) }
            #expect(followed == expected, "SEED=\(seed) \(request.debugDescription)")
        }
    }

    /// A read is sent to the workers when its query may hold the parameter that makes it heavy: never light when the
    /// form decoding finds the parameter (checked on random queries), and light for plain spatial queries.
    @Test func heavyWhenTheQueryHasTheParameter() {
        let cost = ReadCost.heavyWith(parameter: "q")
        for target in [
            "/v1/nearby?q=x", "/v1/nearby?lat=1&q=", "/v1/nearby?lat=1&q", "/v1/nearby?q&lat=1", "/v1/nearby?%71=x", "/v1/nearby?a+b=1&lat=2",
        ] {
            #expect(cost.isHeavy(target: target), "\(target)")
        }
        for target in [
            "/v1/nearby", "/v1/nearby?", "/v1/nearby?lat=1&lon=2&radius=1000&limit=10", "/v1/nearby?aq=1", "/v1/nearby?x=q&y=%71",
            "/v1/nearby?qq=1&&",
        ] {
            #expect(!cost.isHeavy(target: target), "\(target)")
        }
        #expect(!ReadCost.light.isHeavy(target: "/v1/nearby?q=x") && ReadCost.heavy.isHeavy(target: "/health"))
        let seed = testSeed("heavyWhenTheQueryHasTheParameter")
        var random = SplitMix64(seed: seed)
        let pieces = ["q", "Q", "%71", "q+", "lat", "=", "&", "x", "%", "+", "1", "=q", "&&"]
        for _ in 0..<2_000 {
            let query = (0..<(random.next() % 8)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
            if FormQuery(query).lastValue(of: "q") != nil {
                #expect(cost.isHeavy(target: "/v1/nearby?" + query), "SEED=\(seed) \(query)")
            }
        }
    }

    /// The routes' costs: what can take milliseconds goes to the read workers, what takes microseconds stays on the loop.
    @Test func heavyReadsAreTheOnesThatCanTakeMilliseconds() throws {
        let reads = makeRouter(configuration: ServerConfiguration(), engine: makeEngine(), gazetteer: nil, metrics: nil, endpointMetrics: nil).reads
        func heavy(_ target: String) throws -> Bool {
            try #require(reads.match(ReadRequest.split(target: target[...]).path), "no read route for \(target)").entry.cost.isHeavy(target: target)
        }
        for target in [
            "/v1/search?q=cafe", "/v1/geocode?q=Helsinki", "/v1/reverse?lat=60&lon=25", "/v1/clusters?bbox=24,60,25,61",
            "/v1/nearby?lat=60&lon=25&q=cafe", "/v1/within?bbox=24,60,25,61&q=cafe",
        ] {
            #expect(try heavy(target), "\(target)")
        }
        for target in [
            "/v1/nearby?lat=60&lon=25&radius=1000&limit=10", "/v1/within?bbox=24,60,25,61", "/v1/convert?from=wgs84&to=gcj02&lat=39.9&lon=116.4",
            "/v1/pois/osm-1", "/health", "/tiles/pois/14/9326/4741.mvt", "/tiles/pins/16/37305/18966.mvt?kind=all",
        ] {
            #expect(try !heavy(target), "\(target)")
        }
        // A shallow or base tile can gather thousands of records or lines.
        for target in [
            "/tiles/pois/10/582/296.mvt", "/tiles/pois/13/4663/2370.mvt?cluster=0", "/tiles/base/16/37305/18966.mvt", "/tiles/pois/x/1/2.mvt",
            "/tiles/pins/99999/1/2.mvt", "/tiles/pins/1a/1/2.mvt",
        ] {
            #expect(try heavy(target), "\(target)")
        }
        // A pin's answer depends on who reads it (`owned`), so it goes through the router, which reads credentials.
        #expect(reads.match(ReadRequest.split(target: "/v1/pins/p-1").path) == nil)
    }

    /// Lane routes by path as the router matches them: literal, a whole-segment parameter, or a parameter with a
    /// suffix whose stem is not empty; anything else is the router's.
    @Test func pathTableMatchesSegmentsAndSuffixes() {
        var table = PathTable<String>()
        table.add(path: "/health", "health")
        table.add(path: "/v1/pois/{id}", "poi")
        table.add(path: "/tiles/{layer}/{z}/{x}/{y}.mvt", "tile")
        #expect(table.match("/health")?.entry == "health")
        #expect(table.match("/v1/pois/osm-n1").map { [$0.entry] + $0.parameters.map(String.init) } == ["poi", "osm-n1"])
        #expect(
            table.match("/tiles/pois/14/9326/4741.mvt").map { [$0.entry] + $0.parameters.map(String.init) } == ["tile", "pois", "14", "9326", "4741"]
        )
        for path in [
            "/v1/pois/", "/v1/pois/a/b", "/tiles/pois/14/9326/.mvt", "/tiles/pois/14/9326/4741.png", "/tiles/pois/14/9326/4741.mvt/",
            "/tiles/pois/14//4741.mvt", "/tiles/pois/14/4741.mvt", "/tile/pois/14/9326/4741.mvt", "health", "",
        ] {
            #expect(table.match(path[...]) == nil, "\(path)")
        }
        #expect(PathTable<String>.accepts("/tiles/{layer}.json") && !PathTable<String>.accepts("/a/{b") && !PathTable<String>.accepts("/a/x{b}"))
    }

    /// gzip with a window sized to the input: every size around the window steps, compressible or not, is a gzip
    /// member that `gzip -d` takes back to the same bytes, and the window is never shorter than the input (up to 32 KB).
    @Test func gzipWithAWindowSizedToTheTile() throws {
        let seed = testSeed("gzipWithAWindowSizedToTheTile")
        var random = SplitMix64(seed: seed)
        for count in [0, 1, 2, 255, 256, 257, 511, 512, 513, 4_095, 4_096, 4_097, 32_767, 32_768, 32_769, 100_000] {
            let (bits, level) = GzipEncoding.window(for: count)
            #expect((9...15).contains(bits) && (2...8).contains(level) && (1 << bits >= min(count, 32_768)), "\(count): \(bits), \(level)")
            // Half the bytes drawn from a few words (matches to find), half noise.
            let words: [[UInt8]] = [Array("Kahvila ".utf8), Array("food.cafe".utf8), [0x1a, 0x08, 0x00], Array("osm-n2225393043".utf8)]
            var input: [UInt8] = []
            while input.count < count {
                if random.next() % 2 == 0 { input += words[Int(random.next() % 4)] } else { input.append(UInt8(truncatingIfNeeded: random.next())) }
            }
            input = Array(input.prefix(count))
            let compressed = try #require(GzipEncoding.compress(input), "SEED=\(seed) \(count)")
            #expect(compressed.starts(with: [0x1f, 0x8b]))
            #expect(try TileRouteTests.gunzip(compressed) == input, "SEED=\(seed) \(count) bytes")
        }
    }

    /// A tile's ETag: its CRC-32 and Adler-32 as 8 hex digits each, its length in hex, its coding — the same text as
    /// zlib's sums formatted by `String(_:radix:)`, for drawn tiles of every length class.
    @Test func aTileETagNamesItsSumsLengthAndCoding() {
        let seed = testSeed("aTileETagNamesItsSumsLengthAndCoding")
        var random = SplitMix64(seed: seed)
        for count in [0, 1, 15, 16, 255, 256, 4_095, 65_536] + (0..<20).map({ _ in Int(random.next() % 100_000) }) {
            let tile = (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            // The sums written here from their definitions (RFC 1952 §8, RFC 1950 §9), not asked of zlib.
            var crc: UInt32 = 0xFFFF_FFFF
            var (a, b): (UInt32, UInt32) = (1, 0)
            for byte in tile {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
                a = (a + UInt32(byte)) % 65_521
                b = (b + a) % 65_521
            }
            let (crcValue, adler) = (UInt(crc ^ 0xFFFF_FFFF), UInt(b << 16 | a))
            func padded(_ v: UInt) -> String {
                let text = String(v, radix: 16)
                return String(repeating: "0", count: 8 - text.count) + text
            }
            let crcText = padded(crcValue)
            for gzip in [false, true] {
                let expected = "\"\(crcText)\(padded(adler))-\(String(count, radix: 16))\(gzip ? "-gzip" : "")\""
                #expect(TileController.etag(of: tile, gzip: gzip) == expected, "SEED=\(seed) \(count) bytes")
            }
        }
    }
}
