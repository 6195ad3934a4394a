import Foundation
import GeoCore
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The byte lane's write screen answers as the router does: two servers with the same credentials and write limits,
/// one with the fast lane (the default) and one with `--no-fast-lane`, sent the same seeded sequence of writes —
/// without credentials, with bad ones, with a user's token until its rate limit refuses it, with the operator's key,
/// on every screened route and on routes it leaves alone, one connection per request and all on one keep-alive
/// connection — give the same statuses, and the refusals (401, 429) the same bytes but for the Date header and the
/// seconds to wait. Replay a failure with SEED=<printed seed>.
extension LiveTests {
    @Suite struct WriteScreenTests {
        let scratch = ScratchDirectory("poi-screen")

        func servers(_ provider: TestIdentityProvider) throws -> (fast: LiveServer, routed: LiveServer) {
            var databases: [String] = []
            for name in ["a", "b"] {
                databases.append(try CLI.emptyDatabase(at: scratch.file("\(name).sqlite")))
            }
            // One write in ~55 minutes after a burst of two: every refusal's wait has four digits for the whole test.
            let access = [
                "--api-key", "operator-key-123", "--auth-hs256-secret-file", provider.secretFile, "--write-rate", "0.0003", "--write-burst", "2",
            ]
            let fast = try LiveServer(arguments: ["--db", databases[0]] + access)
            let routed = try LiveServer(arguments: ["--db", databases[1], "--no-fast-lane"] + access)
            return (fast, routed)
        }

        /// The answer without its Date header and with the wait of a 429 blanked out.
        static func normalized(_ text: String) -> String {
            var lines: [String] = text.components(separatedBy: "\r\n").filter { !$0.hasPrefix("Date: ") }
            for (index, line) in lines.enumerated() {
                if line.hasPrefix("Retry-After: ") { lines[index] = "Retry-After: N" }
                if let range = line.range(of: #"retry in \d+ s"#, options: .regularExpression) {
                    lines[index].replaceSubrange(range, with: "retry in N s")
                }
            }
            return lines.joined(separator: "\r\n")
        }

        static func status(_ text: some StringProtocol) -> Int? {
            text.hasPrefix("HTTP/1.1 ") ? Int(text.dropFirst(9).prefix(3)) : nil
        }

        /// A seeded sequence of writes and reads, each a whole HTTP/1.1 request with its own X-Request-Id.
        /// `handOver`: also writes the screen leaves alone (another route, a trailing slash), which hand the rest of a
        /// keep-alive connection to the router.
        static func corpus(_ random: inout SplitMix64, tokens: [String], count: Int, handOver: Bool) -> [String] {
            func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
            let pin = Self.pin
            let poi = #"{"name":"Kahvila","lat":60.17,"lon":24.94,"category":"food.cafe"}"#
            let fence = #"{"circle":{"lat":60.17,"lon":24.94,"radius":100}}"#
            var requests: [String] = []
            for index in 0..<count {
                let authorization = pick(
                    [nil, "Basic b3BlcmF0b3I6eA==", "Bearer", "Bearer wrong-key-123", "bearer  operator-key-123", "Bearer operator-key-123"]
                        + tokens.map { "Bearer " + $0 } + tokens.map { "Bearer " + $0 }
                )
                let screened: [(String, String, String?)] = [
                    ("POST", "/v1/pins", pin), ("POST", "/v1/pins?coordsys=gcj02", pin), ("POST", "/v1/pins", "{bad json"),
                    ("PUT", "/v1/pins/nope", pin), ("DELETE", "/v1/pins/nope", nil), ("DELETE", "/v1/pins/caf%C3%A9", ""),
                    ("PUT", "/v1/pois/screen-1", poi), ("DELETE", "/v1/pois/screen-1", nil), ("POST", "/v1/fences", fence),
                    ("DELETE", "/v1/fences/nope", nil), ("GET", "/v1/nearby?lat=60.17&lon=24.94&kind=all&limit=1", nil), ("GET", "/health", nil),
                ]
                let others: [(String, String, String?)] = [
                    ("POST", "/v1/convert", #"{"from":"wgs84","to":"gcj02","points":[[116.4,39.9]]}"#), ("POST", "/v1/pins/", pin),
                ]
                let (method, target, body) = pick(handOver ? screened + others : screened)
                let request = Self.request(id: "w-\(index)", method, target, authorization: authorization, body: body)
                requests.append(request)
            }
            return requests
        }

        static let pin = #"{"uniqueKey":"u","firstName":"Ada","lastName":"L","mapString":"x","mediaURL":"","lat":60.17,"lon":24.94}"#

        /// A whole HTTP/1.1 request.
        static func request(id: String, _ method: String, _ target: String, authorization: String?, body: String?) -> String {
            var request = "\(method) \(target) HTTP/1.1\r\nHost: x\r\nX-Request-Id: \(id)\r\n"
            if let authorization { request += "Authorization: \(authorization)\r\n" }
            if let body {
                request += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            } else {
                request += "\r\n"
            }
            return request
        }

        /// Splits a stream of answers, each with a Content-Length, into the answers.
        static func answers(_ text: String) -> [Substring] {
            var answers: [Substring] = []
            var rest = text[...]
            while let end = rest.range(of: "\r\n\r\n") {
                let head = rest[..<end.lowerBound].lowercased()
                let length =
                    head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }.flatMap {
                        Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces))
                    } ?? 0
                let stop = rest.utf8.index(end.upperBound, offsetBy: length, limitedBy: rest.utf8.endIndex) ?? rest.endIndex
                answers.append(rest[..<stop])
                rest = rest[stop...]
            }
            return answers
        }

        @Test func writeScreenAnswersAsTheRouterDoes() async throws {
            let seed = testSeed("writeScreenAnswersAsTheRouterDoes")
            var random = SplitMix64(seed: seed)
            let provider = try TestIdentityProvider(directory: scratch.path)
            let tokens = [
                try await provider.token("ada", signer: .hmac), try await provider.token("bob", signer: .hmac),
                try await provider.token("old", signer: .hmac, expiresIn: -600), try await provider.forgedToken("eve"),
            ]
            let (fast, routed) = try servers(provider)
            defer {
                fast.stop()
                routed.stop()
            }
            // One connection per request (Connection: close): first one of each kind of answer, then drawn ones.
            let cy = "Bearer " + (try await provider.token("cy", signer: .hmac))
            let kinds = [
                ("POST", "/v1/pins", "Bearer operator-key-123"), ("GET", "/health", nil), ("POST", "/v1/pins", nil), ("POST", "/v1/pins", cy),
                ("POST", "/v1/pins", cy), ("POST", "/v1/pins", cy),
            ]
            let first = kinds.enumerated().map { index, kind in
                Self.request(id: "k-\(index)", kind.0, kind.1, authorization: kind.2, body: kind.0 == "POST" ? Self.pin : nil)
            }
            let single = first + Self.corpus(&random, tokens: tokens, count: 120, handOver: true)
            var statuses: [Int: Int] = [:]
            for request in single {
                let closing = request.replacingOccurrences(of: "Host: x\r\n", with: "Host: x\r\nConnection: close\r\n")
                let a = try RawHTTP.exchange(port: fast.port, closing)
                let b = try RawHTTP.exchange(port: routed.port, closing)
                let line = request.prefix(while: { $0 != "\r" })
                #expect(a.closed && b.closed, "SEED=\(seed) \(line): the connection stays open")
                statuses[Self.status(a.text) ?? 0, default: 0] += 1
                try compare(a.text, b.text, "SEED=\(seed) \(line)", fast)
            }
            // Every kind of answer came: refusals of both kinds, writes let through, reads.
            for status in [200, 201, 401, 429] { #expect(statuses[status, default: 0] > 0, "SEED=\(seed) no \(status) among \(statuses)") }
            // The same kind of sequence on one keep-alive connection each, sent one request at a time and then
            // pipelined: writes the screen lets through go to the router, and the lane takes the connection back.
            for pipelined in [false, true] {
                let requests = Self.corpus(&random, tokens: tokens, count: 80, handOver: false)
                var replies: [String] = []
                for server in [fast, routed] {
                    let fd = try RawHTTP.connect(port: server.port)
                    defer { close(fd) }
                    if pipelined {
                        RawHTTP.send(fd, Array((requests.joined() + "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").utf8))
                        replies.append(RawHTTP.read(fd).text)
                    } else {
                        var text = ""
                        for request in requests {
                            RawHTTP.send(fd, Array(request.utf8))
                            text += RawHTTP.readResponse(fd).text
                        }
                        replies.append(text)
                    }
                }
                let (a, b) = (Self.answers(replies[0]), Self.answers(replies[1]))
                let ids = a.map { answer in answer.split(separator: "\r\n").first { $0.hasPrefix("X-Request-Id: ") }.map { String($0.dropFirst(14)) }
                }
                let expected = (0..<requests.count).map { "w-\($0)" } + (pipelined ? [nil] : [])
                #expect(
                    ids.prefix(requests.count).map { $0 } == expected.prefix(requests.count).map { $0 },
                    "SEED=\(seed) answers out of order or missing"
                )
                #expect(a.count == b.count, "SEED=\(seed) pipelined=\(pipelined): \(a.count) answers against \(b.count)\n\(fast.stderr)")
                for (index, (x, y)) in zip(a, b).enumerated() {
                    let line = index < requests.count ? String(requests[index].prefix(while: { $0 != "\r" })) : "last"
                    try compare(String(x), String(y), "SEED=\(seed) pipelined=\(pipelined) #\(index) \(line)", fast)
                }
            }
            // The refusals are counted under their routes, as the router counts them.
            let metrics = try RawHTTP.exchange(port: fast.port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").text
            let routedMetrics = try RawHTTP.exchange(port: routed.port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").text
            for series in [#"route="/v1/pins",method="POST",status="401""#, #"route="/v1/pins",method="POST",status="429""#] {
                let count = { (text: String) in
                    text.split(separator: "\n").first { $0.hasPrefix("poi_http_requests_total{\(series)}") }.map {
                        $0.split(separator: " ").last.map(String.init) ?? ""
                    }
                }
                #expect(
                    count(metrics) != nil && count(metrics) == count(routedMetrics),
                    "SEED=\(seed) \(series): \(count(metrics) ?? "none") against \(count(routedMetrics) ?? "none")"
                )
            }
        }

        /// After a refused write the connection is not read for `--refused-write-pause`, whether the byte lane or the
        /// router refused it (`--no-fast-lane`): the next request, sent once the refusal is answered, is answered after
        /// the pause. On the lane, what was pipelined behind the refusal — reads, another refused write, the end of the
        /// client's input — is answered after the pause too, in order and whole. With a pause of 0, the same answers.
        @Test(arguments: [(0, true), (700, true), (700, false)])
        func aRefusedWritersConnectionPausesAndLosesNothing(pause: Int, fastLane: Bool) throws {
            let db = try CLI.emptyDatabase(at: scratch.file("pause-\(pause)-\(fastLane).sqlite"))
            let lane = fastLane ? [] : ["--no-fast-lane"]
            let server = try LiveServer(arguments: ["--db", db, "--api-key", "operator-key-123", "--refused-write-pause", "\(pause)"] + lane)
            defer { server.stop() }
            let what = "pause \(pause), fast lane \(fastLane)"
            func ids(_ text: String) -> [String] {
                Self.answers(text).map { answer in
                    answer.split(separator: "\r\n").first { $0.hasPrefix("X-Request-Id: ") }.map { String($0.dropFirst(14)) } ?? "none"
                }
            }
            // One request at a time: the read sent after the refusal's answer is answered after the pause, which
            // began before the refused write's answer was written (a lower bound only).
            let fd = try RawHTTP.connect(port: server.port)
            defer { close(fd) }
            let started = ContinuousClock.now
            RawHTTP.send(fd, Array(Self.request(id: "s-0", "POST", "/v1/pins", authorization: nil, body: Self.pin).utf8))
            let refused = RawHTTP.readResponse(fd)
            RawHTTP.send(fd, Array(Self.request(id: "s-1", "GET", "/health", authorization: nil, body: nil).utf8))
            let read = RawHTTP.readResponse(fd)
            let elapsed = ContinuousClock.now - started
            #expect(refused.status == 401 && read.status == 200, "\(what): \(refused.text.prefix(300))\n\(read.text.prefix(300))")
            #expect(ids(refused.text + read.text) == ["s-0", "s-1"], "\(what)\n\(server.stderr.suffix(2_000))")
            #expect(elapsed >= .milliseconds(pause), "\(what): the read after the refusal answered after \(elapsed)")
            guard fastLane else { return }
            // Pipelined on the lane, then the client's side closed: the end of input waits for the answers too.
            let requests = [
                Self.request(id: "p-0", "POST", "/v1/pins", authorization: nil, body: Self.pin),
                Self.request(id: "p-1", "GET", "/health", authorization: nil, body: nil),
                Self.request(id: "p-2", "POST", "/v1/pins", authorization: "Bearer wrong-key-456", body: Self.pin),
                Self.request(id: "p-3", "GET", "/v1/nearby?lat=60.17&lon=24.94", authorization: nil, body: nil),
            ]
            let pipelined = ContinuousClock.now
            let reply = try RawHTTP.exchange(port: server.port, requests.joined(), halfClose: true)
            let all = ContinuousClock.now - pipelined
            #expect(
                ids(reply.text) == ["p-0", "p-1", "p-2", "p-3"],
                "\(what): answers \(ids(reply.text))\n\(reply.text.prefix(1_500))\n\(server.stderr.suffix(2_000))"
            )
            #expect(Self.answers(reply.text).map { Self.status($0) ?? 0 } == [401, 200, 401, 200], "\(what)\n\(reply.text.prefix(1_500))")
            #expect(reply.closed, "\(what): the connection stays open after the client's input ended")
            // Two refusals, each followed by a pause before the next request is read: a lower bound only.
            #expect(all >= .milliseconds(2 * pause), "\(what): all answered after \(all)")
        }

        /// Refusals must be byte-identical (but for Date and the wait); other answers carry ids and times of their own
        /// server, so only their statuses are compared.
        func compare(_ a: String, _ b: String, _ what: String, _ server: LiveServer) throws {
            let (x, y) = (Self.status(a), Self.status(b))
            #expect(
                x != nil && x == y,
                "\(what): \(x.map(String.init) ?? "no answer") against \(y.map(String.init) ?? "no answer")\nfast lane:\n\(a.prefix(600))\nrouter:\n\(b.prefix(600))\nstderr:\n\(server.stderr.suffix(2000))"
            )
            if x == 401 || x == 429 {
                #expect(Self.normalized(a) == Self.normalized(b), "\(what)\nfast lane:\n\(a.prefix(800))\nrouter:\n\(b.prefix(800))")
            }
        }
    }
}
