import Access
import Foundation
import GeoCore
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `poi serve --access-log FILE` on a real socket: a drawn mix of requests through both lanes (light and heavy
/// reads on the byte lane, writes and misses through the router), then the log's lines parsed and matched to what
/// was sent, one for one.
extension LiveTests {
    @Suite struct AccessLogLiveTests {
        let scratch = ScratchDirectory("poi-access-log")

        /// One request of the drawn mix and what its log line must say.
        struct Sent {
            let requestID: String
            let method: String
            let route: String
            let status: Int
            let key: String?
            let bytes: Int
        }

        @Test func everyRequestIsOneLineWithItsRouteNotItsQuery() throws {
            let db = scratch.file("log.sqlite")
            let data = scratch.file("log.jsonl")
            try Data(
                (0..<30).map { #"{"id":"c\#($0)","name":"Cafe \#($0)","category":"food.cafe","lat":\#(60.17 + Double($0) * 0.001),"lon":24.94}"# }
                    .joined(separator: "\n").utf8
            ).write(to: URL(fileURLWithPath: data))
            #expect(try CLI.run(["import", data, "--db", db]).status == 0)
            let keysFile = scratch.file("keys.json")
            try Data(#"{"keys":[{"name":"field-app","sha256":"\#(KeyRing.hash("log-key-0001"))","scopes":["admin"]}]}"#.utf8)
                .write(to: URL(fileURLWithPath: keysFile))
            let log = scratch.file("access.log")
            let server = try LiveServer(arguments: ["--db", db, "--keys-file", keysFile, "--access-log", log])
            let seed = testSeed("everyRequestIsOneLineWithItsRouteNotItsQuery")
            var random = SplitMix64(seed: seed)
            var sent: [Sent] = []
            for i in 0..<60 {
                let requestID = "log-\(seed % 10_000)-\(i)"
                let secret = "secretword\(random.next() % 1_000)"
                // (method, path and query, body, credentials, route, expected status)
                let request: (String, String, String?, String?, String, Int)
                switch random.next() % 8 {
                case 0: request = ("GET", "/v1/nearby?lat=60.18&lon=24.94&limit=3", nil, nil, "/v1/nearby", 200)
                case 1: request = ("GET", "/v1/search?q=\(secret)", nil, nil, "/v1/search", 200)
                case 2: request = ("HEAD", "/v1/nearby?lat=60.18&lon=24.94", nil, nil, "/v1/nearby", 200)
                case 3: request = ("GET", "/v1/pois/c\(random.next() % 40)", nil, nil, "/v1/pois/:id", -1)
                case 4:
                    request = (
                        "POST", "/v1/pins",
                        #"{"uniqueKey":"\#(secret)","firstName":"A","lastName":"B","mapString":"x","mediaURL":"","lat":60.1,"lon":24.9}"#,
                        "log-key-0001", "/v1/pins", 201
                    )
                case 5: request = ("POST", "/v1/pins", "{}", "not-a-key", "/v1/pins", 401)
                case 6: request = ("GET", "/v1/nearby?lat=95&lon=\(secret)", nil, nil, "/v1/nearby", 400)
                default: request = ("GET", "/no/such/\(secret)", nil, nil, "NotFound", 404)
                }
                let (method, target, body, credentials, route, expected) = request
                var arguments = [
                    "-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download}", "-X", method, "-H", "X-Request-Id: \(requestID)",
                ]
                if method == "HEAD" { arguments = ["-I"] + arguments.filter { $0 != "-X" && $0 != "HEAD" } }
                if let body { arguments += ["-H", "Content-Type: application/json", "-d", body] }
                if let credentials { arguments += ["-H", "Authorization: Bearer \(credentials)"] }
                let reply = try curl(arguments + [server.base + target]).stdout.split(separator: " ")
                let status = Int(reply.first ?? "") ?? 0
                if expected >= 0 { #expect(status == expected, "SEED=\(seed) \(method) \(target): \(status)\n\(server.stderr)") }
                sent.append(
                    Sent(
                        requestID: requestID,
                        method: method,
                        route: route,
                        status: status,
                        key: credentials == "log-key-0001" ? "field-app" : nil,
                        bytes: method == "HEAD" ? 0 : Int(reply.last ?? "") ?? -1
                    )
                )
            }
            // A graceful stop writes what the log still holds.
            server.send(SIGTERM)
            server.process.waitUntilExit()
            let text = try String(contentsOfFile: log, encoding: .utf8)
            let lines = text.split(separator: "\n")
            #expect(lines.count == sent.count, "SEED=\(seed): \(lines.count) lines for \(sent.count) requests\n\(text)")
            var byID: [String: [String: Any]] = [:]
            for line in lines {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
                byID[object["request_id"] as? String ?? ""] = object
                #expect(!line.contains("secretword") && !line.contains("lat="), "a query reached the log: \(line)")
                #expect(
                    (object["time"] as? String)?.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil,
                    "\(line)"
                )
                #expect((object["duration_ms"] as? Double ?? -1) >= 0, "\(line)")
                #expect(object["client"] as? String == "127.0.0.1", "\(line)")
            }
            for request in sent {
                let line = try #require(byID[request.requestID], "SEED=\(seed) no line for \(request.requestID) (\(request.method) \(request.route))")
                #expect(line["method"] as? String == request.method, "\(line)")
                #expect(line["route"] as? String == request.route, "\(line)")
                #expect(line["status"] as? Int == request.status, "\(line)")
                #expect(line["bytes"] as? Int == request.bytes, "\(request.method) \(request.route): \(line)")
                #expect(line["key"] as? String == request.key, "\(line)")
                #expect(line["user"] == nil, "\(line)")
            }
        }
    }
}
