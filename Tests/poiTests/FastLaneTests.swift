import Foundation
import GeoCore
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The fast lane answers exactly as the router does: two servers on copies of one database, one with the fast lane
/// (the default) and one with `--no-fast-lane`, asked the same seeded corpus of read requests — good and bad input,
/// GET and HEAD, JSON and GeoJSON, other coordinate systems, cursors, ids — must give byte-identical answers but for
/// the Date header. Replay a failure with SEED=<printed seed>.
extension LiveTests {
    @Suite struct FastLaneTests {
        static let root = Repository.root
        let scratch = ScratchDirectory("poi-lane")

        /// Two copies of a database of the bundled Helsinki POIs.
        func databases() throws -> (String, String) {
            let first = scratch.file("a.sqlite")
            let second = scratch.file("b.sqlite")
            let data = Self.root.appendingPathComponent("data/Helsinki.osm.pbf").path
            for db in [first, second] {
                let imported = try CLI.run(["import", data, "--db", db])
                try #require(imported.status == 0, "\(imported.stderr)")
            }
            return (first, second)
        }

        /// The answer without its Date header.
        func normalized(_ reply: RawHTTP.Reply) -> String {
            reply.text.split(separator: "\r\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("Date: ") }.joined(separator: "\r\n")
        }

        static func corpus(_ random: inout SplitMix64, count: Int) -> [String] {
            func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
            func number(_ range: ClosedRange<Double>) -> String {
                String(range.lowerBound + Double(random.next() % 1_000_000) / 1_000_000 * (range.upperBound - range.lowerBound))
            }
            var targets: [String] = []
            for _ in 0..<count {
                let lat = pick([number(60.1...60.3), number(-90...90), "95", "0x10", "", "nan"])
                let lon = pick([number(24.8...25.1), number(-180...180), "abc"])
                let common = pick([
                    "", "&format=geojson", "&coordsys=gcj02", "&coordsys=bd09&format=GeoJSON", "&format=xml", "&kind=all", "&kind=pin",
                ])
                let text = pick([
                    "", "&q=kahvila", "&q=bar", "&q=rautatie", "&q=%20", "&q=caf%C3%A9", "&q=New+York", "&category=food", "&category=food..x",
                ])
                let limit = pick(["", "&limit=1", "&limit=5", "&limit=0", "&limit=101", "&limit=2.5"])
                let target: String
                switch random.next() % 11 {
                case 0: target = "/v1/nearby?lat=\(lat)&lon=\(lon)\(pick(["", "&radius=500", "&radius=-1", "&radius=2e6"]))\(text)\(limit)\(common)"
                case 1:
                    target =
                        "/v1/search?q=\(pick(["kahvila", "museo", "hotelli+helsinki", "ravintola", "xyzzy", "%21%21"]))\(pick(["", "&lat=60.17&lon=24.94"]))\(pick(["", "&offset=3", "&offset=-1"]))\(limit)\(common)"
                case 2:
                    target =
                        "/v1/within?\(pick(["bbox=24.9,60.15,25.0,60.2", "bbox=25,60,24,61", "polygon=24.9,60.15;25.0,60.15;24.95,60.2", "bbox=1,2,3", ""]))\(text)\(limit)\(common)"
                case 3: target = "/v1/clusters?bbox=24.8,60.1,25.1,60.3&precision=\(pick(["3", "5", "7", "13", ""]))\(text)\(common)"
                case 4:
                    target =
                        "/v1/geocode?q=\(pick(["Helsinki", "Helsinky", "New+York", "%E5%8C%97%E4%BA%AC", "1600+Amphitheatre+Parkway%2C+Mountain+View", "%20"]))\(pick(["", "&limit=3", "&country=FI", "&lang=zh", "&lat=60&lon=25"]))\(pick(["", "&coordsys=gcj02"]))"
                case 5: target = "/v1/reverse?lat=\(lat)&lon=\(lon)\(pick(["", "&coordsys=gcj02"]))"
                case 6:
                    target =
                        "/v1/convert?from=\(pick(["wgs84", "gcj02", "EPSG:3857", "mars"]))&to=\(pick(["wgs84", "bd09", "EPSG:3067", "EPSG:99999"]))&lat=\(lat)&lon=\(lon)"
                case 7:
                    target = "/v1/pois/\(pick(["osm-n2225393043", "nope", "caf%C3%A9-1", "%FF"]))\(pick(["", "?format=geojson", "?coordsys=gcj02"]))"
                case 8: target = "/v1/pins/\(pick(["nope", "x%2Fy"]))"
                case 9: target = "/health"
                default: target = "/v1/nearby?lat=60.17&lon=24.94&cursor=\(pick(["bogus", "bjI6YjVhMmQ3Y2E1NGNhYThhZTozZDgzMjk2OGUxNGIwOTUwOjU1OA"]))"
                }
                targets.append(target)
            }
            return targets
        }

        @Test func fastLaneAnswersAsTheRouterDoes() throws {
            let seed = testSeed("fastLaneAnswersAsTheRouterDoes")
            var random = SplitMix64(seed: seed)
            let (first, second) = try databases()
            let fast = try LiveServer(arguments: ["--db", first])
            defer { fast.stop() }
            let routed = try LiveServer(arguments: ["--db", second, "--no-fast-lane"])
            defer { routed.stop() }
            let targets = Self.corpus(&random, count: 300)
            for (index, target) in targets.enumerated() {
                let method = index % 7 == 0 ? "HEAD" : "GET"
                // The byte lane takes plain requests; a body header or HTTP/1.0 sends the connection through the
                // parser to the router: the answers must be the same.
                let request =
                    switch index % 3 {
                    case 0: "\(method) \(target) HTTP/1.1\r\nHost: x\r\nX-Request-Id: corpus-\(index)\r\nConnection: close\r\n\r\n"
                    case 1:
                        "\(method) \(target) HTTP/1.1\r\nHost: x\r\nX-Request-Id: corpus-\(index)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    default: "\(method) \(target) HTTP/1.0\r\nX-Request-Id: corpus-\(index)\r\n\r\n"
                    }
                let a = try RawHTTP.exchange(port: fast.port, request)
                let b = try RawHTTP.exchange(port: routed.port, request)
                #expect(a.status != nil && a.status! < 500, "\(method) \(target): \(a.text.prefix(300))\nstderr:\n\(fast.stderr)")
                #expect(
                    normalized(a) == normalized(b),
                    "SEED=\(seed) \(method) \(target)\nfast lane:\n\(a.text.prefix(600))\nrouter:\n\(b.text.prefix(600))"
                )
            }
            // All of them pipelined on one keep-alive connection (the byte lane answers a read's requests together).
            var pipeline = ""
            for (index, target) in targets.enumerated() {
                pipeline += "\(index % 7 == 0 ? "HEAD" : "GET") \(target) HTTP/1.1\r\nHost: x\r\nX-Request-Id: pipelined-\(index)\r\n\r\n"
            }
            pipeline += "GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: last\r\nConnection: close\r\n\r\n"
            let a = try RawHTTP.exchange(port: fast.port, pipeline)
            let b = try RawHTTP.exchange(port: routed.port, pipeline)
            #expect(a.closed && b.closed)
            #expect(normalized(a) == normalized(b), "SEED=\(seed) pipelined\nfast lane:\n\(a.text.prefix(2000))\nrouter:\n\(b.text.prefix(2000))")
            // The request metrics count the fast lane's answers under the same route labels.
            let metrics = try RawHTTP.exchange(port: fast.port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(
                metrics.text.contains("poi_http_requests_total{route=\"/v1/nearby\",method=\"GET\",status=\"200\"}"),
                "\(metrics.text.prefix(2000))"
            )
        }

        /// Vector tiles on the byte lane answer as the router does, byte for byte but for the Date header — every
        /// layer, zooms 0–18 around Helsinki and outside the pyramid, filters, gzip or not, and revalidation with the
        /// tile's own ETag (304), another tag, `*` and a weak one — and a deep tile is answered on the loop, a shallow
        /// one on the read workers, both in order on one connection.
        @Test func tilesAnswerAsTheRouterDoes() throws {
            let seed = testSeed("tilesAnswerAsTheRouterDoes")
            var random = SplitMix64(seed: seed)
            func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
            let (first, second) = try databases()
            let fast = try LiveServer(arguments: ["--db", first])
            defer { fast.stop() }
            let routed = try LiveServer(arguments: ["--db", second, "--no-fast-lane"])
            defer { routed.stop() }
            func tile(_ z: Int) -> (x: Int, y: Int) {
                let n = Double(1 << z)
                let (lat, lon) = (60.17 + Double(random.next() % 1000) / 20_000, 24.94 + Double(random.next() % 1000) / 10_000)
                let phi = lat * .pi / 180
                return (Int((lon + 180) / 360 * n), Int((1 - log(tan(phi) + 1 / cos(phi)) / .pi) / 2 * n))
            }
            func headers(_ reply: RawHTTP.Reply) -> String {
                normalized(reply).components(separatedBy: "\r\n\r\n").first ?? ""
            }
            func body(_ reply: RawHTTP.Reply) -> [UInt8] {
                guard let end = reply.bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return [] }
                return Array(reply.bytes[end.upperBound...])
            }
            var pipeline = ""
            for index in 0..<240 {
                let layer = pick(["pois", "pois", "pins", "base", "nope"])
                let z = pick(Array(0...18) + [30, -1])
                let (x, y) = z >= 0 && z <= 18 ? tile(z) : (0, 0)
                let filter = pick(["", "?q=kahvila", "?category=food", "?cluster=0", "?cluster=1", "?kind=all", "?q=%20", "?limit=x"])
                let path = pick([
                    "/tiles/\(layer)/\(z)/\(x)/\(y).mvt", "/tiles/\(layer)/\(z)/\(x)/\(y).mvt", "/tiles/\(layer)/\(z)/\(x)/\(y).mvt",
                    "/tiles/\(layer)/\(z)/\(x)/.mvt", "/tiles/\(layer)/\(z)/\(x)/\(y).png", "/tiles/\(layer)/\(z)/x/\(y).mvt",
                ])
                let target = path + filter
                let gzip = pick(["", "Accept-Encoding: gzip\r\n", "Accept-Encoding: br;q=1, gzip;q=0\r\n", "Accept-Encoding: *\r\n"])
                // The tile's own tag, as the fast server gives it.
                let first = try RawHTTP.exchange(port: fast.port, "GET \(target) HTTP/1.1\r\nHost: x\r\n\(gzip)Connection: close\r\n\r\n")
                let tag = headers(first).split(separator: "\r\n").first { $0.hasPrefix("ETag: ") }.map { String($0.dropFirst(6)) }
                let condition = pick([
                    "", "", "If-None-Match: \(tag ?? "\"x\"")\r\n", "If-None-Match: W/\(tag ?? "\"x\""), \"y\"\r\n", "If-None-Match: *\r\n",
                    "If-None-Match: \"other\"\r\n",
                ])
                let method = index % 9 == 0 ? "HEAD" : "GET"
                let request = "\(method) \(target) HTTP/1.1\r\nHost: x\r\nX-Request-Id: tile-\(index)\r\n\(gzip)\(condition)Connection: close\r\n\r\n"
                let a = try RawHTTP.exchange(port: fast.port, request)
                let b = try RawHTTP.exchange(port: routed.port, request)
                #expect(a.status != nil && a.status! < 500, "\(request)\n\(a.text.prefix(300))\nstderr:\n\(fast.stderr)")
                #expect(
                    headers(a) == headers(b) && body(a) == body(b),
                    "SEED=\(seed) \(request)\nfast lane:\n\(headers(a))\nrouter:\n\(headers(b))\nbodies \(body(a).count) and \(body(b).count) bytes"
                )
                pipeline += "GET \(target) HTTP/1.1\r\nHost: x\r\nX-Request-Id: p\(index)\r\n\(gzip)\(condition)\r\n"
            }
            pipeline += "GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: last\r\nConnection: close\r\n\r\n"
            let a = try RawHTTP.exchange(port: fast.port, pipeline)
            let b = try RawHTTP.exchange(port: routed.port, pipeline)
            #expect(a.closed && b.closed)
            let strip = { (reply: RawHTTP.Reply) in
                reply.bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).filter { !$0.starts(with: Array("Date: ".utf8)) }
            }
            #expect(strip(a) == strip(b), "SEED=\(seed) pipelined tiles: \(a.bytes.count) and \(b.bytes.count) bytes")
            let ids = a.text.split(separator: "\r\n").filter { $0.hasPrefix("X-Request-Id: ") }.map { String($0.dropFirst(14)) }
            #expect(ids == (0..<240).map { "p\($0)" } + ["last"], "SEED=\(seed) the pipelined answers' order")
        }

        /// Pipelined requests on one keep-alive connection are answered in order, whichever path answers each: a
        /// write (the router) between fast reads, and a read that arrives while the write is still being answered.
        @Test func pipelinedAnswersKeepTheirOrder() throws {
            let (first, _) = try databases()
            let server = try LiveServer(arguments: ["--db", first])
            defer { server.stop() }
            let body = #"{"from":"wgs84","to":"gcj02","points":[[116.4,39.9]]}"#
            var pipeline = ""
            for i in 0..<5 {
                // A heavy read (answered on the read workers) right before the write, every other time.
                pipeline +=
                    i % 2 == 0
                    ? "GET /v1/search?q=kahvila HTTP/1.1\r\nHost: x\r\nX-Request-Id: h\(i)\r\n\r\n"
                    : "GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: h\(i)\r\n\r\n"
                pipeline +=
                    "POST /v1/convert HTTP/1.1\r\nHost: x\r\nX-Request-Id: c\(i)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                pipeline += "GET /v1/nearby?lat=60.17&lon=24.94&limit=1 HTTP/1.1\r\nHost: x\r\nX-Request-Id: n\(i)\r\n\r\n"
            }
            pipeline += "GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: last\r\nConnection: close\r\n\r\n"
            let reply = try RawHTTP.exchange(port: server.port, pipeline)
            let ids = reply.text.split(separator: "\r\n").filter { $0.hasPrefix("X-Request-Id: ") }.map { $0.dropFirst(14) }
            let expected = (0..<5).flatMap { ["h\($0)", "c\($0)", "n\($0)"] } + ["last"]
            #expect(ids.map(String.init) == expected, "\(reply.text.prefix(3000))\nstderr:\n\(server.stderr)")
            #expect(reply.closed)
        }

        /// Heavy reads (keyword search, geocoding, a keyword filter, clusters) are answered on the read workers while
        /// light ones are answered on the event loop: pipelined on one connection, in one write, in pieces that split
        /// requests while a heavy answer is being made, and with the client's side closed after the last request,
        /// every answer still comes, in order.
        @Test func heavyReadsOnTheWorkersKeepPipelinedOrder() throws {
            let (first, _) = try databases()
            let server = try LiveServer(arguments: ["--db", first])
            defer { server.stop() }
            let requests = [
                ("s", "/v1/search?q=kahvila&limit=50"),
                ("n", "/v1/nearby?lat=60.17&lon=24.94&limit=1"),
                ("g", "/v1/geocode?q=Helsinki"),
                ("h", "/health"),
                ("k", "/v1/nearby?lat=60.17&lon=24.94&q=bar&limit=3"),
                ("c", "/v1/clusters?bbox=24.8,60.1,25.1,60.3&precision=5"),
                ("w", "/v1/within?bbox=24.9,60.15,25.0,60.2&limit=2"),
                ("r", "/v1/reverse?lat=60.17&lon=24.94"),
            ]
            var pipeline = ""
            var expected: [String] = []
            for round in 0..<4 {
                for (tag, target) in requests {
                    pipeline += "GET \(target) HTTP/1.1\r\nHost: x\r\nX-Request-Id: \(tag)\(round)\r\n\r\n"
                    expected.append("\(tag)\(round)")
                }
            }
            func ids(_ reply: RawHTTP.Reply) -> [String] {
                reply.text.split(separator: "\r\n").filter { $0.hasPrefix("X-Request-Id: ") }.map { String($0.dropFirst(14)) }
            }
            func statuses(_ reply: RawHTTP.Reply) -> [Substring] {
                reply.text.split(separator: "\r\n").filter { $0.hasPrefix("HTTP/1.1 ") }.map { $0.dropFirst(9).prefix(3) }
            }
            // In one write, the last request asking to close.
            let closing = pipeline + "GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: last\r\nConnection: close\r\n\r\n"
            let whole = try RawHTTP.exchange(port: server.port, closing)
            #expect(ids(whole) == expected + ["last"], "\(whole.text.prefix(3000))\nstderr:\n\(server.stderr)")
            #expect(statuses(whole).allSatisfy { $0 == "200" }, "\(whole.text.prefix(3000))")
            #expect(whole.closed)
            // The client's side closed after the last request: the answers made on the workers are not cut off.
            let halfClosed = try RawHTTP.exchange(port: server.port, pipeline, halfClose: true)
            #expect(ids(halfClosed) == expected, "\(halfClosed.text.prefix(3000))\nstderr:\n\(server.stderr)")
            // In pieces of 7 bytes, so that requests arrive split while a heavy answer is being made.
            let fd = try RawHTTP.connect(port: server.port)
            defer { close(fd) }
            let bytes = Array(closing.utf8)
            for start in stride(from: 0, to: bytes.count, by: 7) {
                RawHTTP.send(fd, Array(bytes[start..<min(start + 7, bytes.count)]))
            }
            let pieces = RawHTTP.read(fd)
            #expect(ids(pieces) == expected + ["last"], "\(pieces.text.prefix(3000))\nstderr:\n\(server.stderr)")
            #expect(pieces.closed)
            // More than the lane holds behind a heavy read (it stops reading, then goes on): every answer, in order.
            var flood = "GET /v1/search?q=kahvila HTTP/1.1\r\nHost: x\r\nX-Request-Id: first\r\n\r\n"
            for i in 0..<3_000 { flood += "GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: f\(i)\r\n\r\n" }
            flood += "GET /v1/geocode?q=Helsinki HTTP/1.1\r\nHost: x\r\nX-Request-Id: last\r\nConnection: close\r\n\r\n"
            #expect(flood.utf8.count > 128 * 1_024)
            let flooded = try RawHTTP.exchange(port: server.port, flood)
            #expect(ids(flooded) == ["first"] + (0..<3_000).map { "f\($0)" } + ["last"], "\(flooded.text.suffix(2000))\nstderr:\n\(server.stderr)")
            #expect(flooded.closed)
        }

        /// The event loop that hands heavy reads to the read workers runs under Linux's batch policy, so that its
        /// wake-ups do not preempt a worker in the middle of a search; the workers keep the normal policy (a thread
        /// inherits its starter's, and the loop starts them). Read from the kernel: `/proc/PID/task/TID/stat`.
        @Test func theLoopYieldsToTheReadWorkers() throws {
            #if os(Linux)
            let (first, _) = try databases()
            let server = try LiveServer(arguments: ["--db", first])
            defer { server.stop() }
            let reply = try RawHTTP.exchange(port: server.port, "GET /v1/search?q=kahvila HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(reply.text.hasPrefix("HTTP/1.1 200"), "\(reply.text.prefix(500))")
            let tasks = "/proc/\(server.process.processIdentifier)/task"
            var policies: [(name: String, policy: Int)] = []
            for tid in try FileManager.default.contentsOfDirectory(atPath: tasks) {
                // The fields after the name (in parentheses, which may hold spaces): policy is the stat's 41st.
                guard let stat = try? String(contentsOfFile: "\(tasks)/\(tid)/stat", encoding: .utf8),
                    let close = stat.lastIndex(of: ")"), let open = stat.firstIndex(of: "(")
                else { continue }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                policies.append((String(stat[stat.index(after: open)..<close]), Int(fields[38]) ?? -1))
            }
            // NIO's event loops (the singleton group's threads; a loop that has served no connection yet has not
            // switched, and with more cores there are loops this one connection did not use) and the read workers.
            let loops = policies.filter { $0.name.hasPrefix("NIO-SGLTN-") }
            let workers = policies.filter { $0.name.hasPrefix("TP-#") }
            let batch = 3  // SCHED_BATCH
            #expect(loops.contains { $0.policy == batch }, "threads: \(policies)\nstderr:\n\(server.stderr)")
            #expect(!workers.isEmpty && workers.allSatisfy { $0.policy == 0 }, "threads: \(policies)\nstderr:\n\(server.stderr)")
            #endif
        }

        /// Reads answered one at a time by the byte lane (each read of the connection complete without reaching the
        /// handlers behind it), then a write and a read on the same connection: the router behind still answers,
        /// and the connection goes on.
        @Test func routerAnswersAfterReadsThatNeverReachedIt() throws {
            let (first, _) = try databases()
            let server = try LiveServer(arguments: ["--db", first])
            defer { server.stop() }
            let fd = try RawHTTP.connect(port: server.port)
            defer { close(fd) }
            func ask(_ request: String, id: String) {
                RawHTTP.send(fd, Array(request.utf8))
                let reply = RawHTTP.readResponse(fd)
                #expect(
                    reply.status == 200 && reply.text.contains("X-Request-Id: \(id)\r\n"),
                    "awaited the answer to \(id): \(reply.text.prefix(1000))\nstderr:\n\(server.stderr)"
                )
            }
            for i in 0..<20 {
                ask("GET /v1/nearby?lat=60.17&lon=24.94&limit=2 HTTP/1.1\r\nHost: x\r\nX-Request-Id: n\(i)\r\n\r\n", id: "n\(i)")
            }
            let body = #"{"from":"wgs84","to":"gcj02","points":[[116.4,39.9]]}"#
            ask(
                "POST /v1/convert HTTP/1.1\r\nHost: x\r\nX-Request-Id: c\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)",
                id: "c"
            )
            ask("GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: h\r\n\r\n", id: "h")
        }
    }
}
