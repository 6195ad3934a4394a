import Foundation
import TestSupport
import Testing

/// Two `poi serve --store postgresql://…` processes on real sockets sharing one PostgreSQL (the one `make test`
/// starts, in POI_TEST_POSTGRES): records imported with `poi import --store` are served by both; a write through one
/// is read through the other, by id and in the spatial index; a delete propagates; `/health` reports the replica.
extension LiveTests {
    @Suite(.enabled(if: ProcessInfo.processInfo.environment["POI_TEST_POSTGRES"] != nil, "needs POI_TEST_POSTGRES (make test starts a PostgreSQL)"))
    struct SharedStoreLiveTests {
        let server = ProcessInfo.processInfo.environment["POI_TEST_POSTGRES"] ?? ""

        /// curl with the HTTP status appended: (status, body).
        func curl(_ arguments: [String]) throws -> (status: Int, body: String) {
            let text = try poiTests.curl(["-s", "-w", "\n%{http_code}"] + arguments).stdout
            let split = text.range(of: "\n", options: .backwards)
            return (Int(text[(split?.upperBound ?? text.endIndex)...]) ?? 0, split.map { String(text[..<$0.lowerBound]) } ?? text)
        }

        /// A new database on the test server.
        func database() throws -> String {
            let name = "live_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased())"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
            process.arguments = [server, "-qc", "CREATE DATABASE \(name)"]
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "psql CREATE DATABASE on \(server)")
            return server.replacingOccurrences(of: #"/[^/]*$"#, with: "/\(name)", options: .regularExpression)
        }

        /// Polls `url` on `replica` until it answers `status`; the failure names what was awaited and shows the
        /// replica's stderr.
        func waitFor(_ replica: LiveServer, _ path: String, status: Int, what: String) throws {
            let started = Date()
            while try curl(["\(replica.base)\(path)"]).status != status {
                if Date().timeIntervalSince(started) > 120 {
                    Issue.record("\(what): \(path) did not answer \(status) within 120 s; the replica's stderr:\n\(replica.stderr)")
                    return
                }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }

        @Test func aWriteThroughOneReplicaIsReadThroughTheOther() throws {
            let url = try database()
            let data = Repository.path("data/Helsinki.osm.pbf")
            let imported = try CLI.run(["import", data, "--store", url])
            #expect(imported.status == 0, "poi import --store: \(imported.stderr)")
            let a = try LiveServer(arguments: ["--store", url, "--replica-name", "a"])
            defer { a.stop() }
            let b = try LiveServer(arguments: ["--store", url, "--replica-name", "b"])
            defer { b.stop() }
            let health = try curl(["\(a.base)/health"])
            let object = try JSONSerialization.jsonObject(with: Data(health.body.utf8)) as? [String: Any]
            let store = object?["store"] as? [String: Any]
            #expect(health.status == 200 && (object?["pois"] as? Int ?? 0) > 1_000 && store?["connected"] as? Bool == true, "\(health.body)")
            #expect(
                try curl(["\(b.base)/health"]).body.replacingOccurrences(
                    of: #""(lagSeconds|readSecondsAgo)":[0-9.]+"#,
                    with: "",
                    options: .regularExpression
                )
                    == health.body.replacingOccurrences(of: #""(lagSeconds|readSecondsAgo)":[0-9.]+"#, with: "", options: .regularExpression)
            )

            let created = try curl([
                "-X", "PUT", "\(a.base)/v1/pois/live-shared-1", "-H", "Content-Type: application/json",
                "-d", #"{"name":"Jaettu Kahvila","category":"food.cafe","city":"Helsinki","country":"FI","lat":60.1699,"lon":24.9384}"#,
            ])
            #expect(created.status == 201, "\(created.body)")
            try waitFor(b, "/v1/pois/live-shared-1", status: 200, what: "the write on replica a, read on replica b")
            let nearby = try curl(["\(b.base)/v1/nearby?lat=60.1699&lon=24.9384&radius=50&limit=50"])
            #expect(nearby.body.contains("\"id\":\"live-shared-1\""), "\(nearby.body.prefix(500))")
            let search = try curl(["\(b.base)/v1/search?q=jaettu"])
            #expect(search.body.contains("\"id\":\"live-shared-1\""), "\(search.body.prefix(500))")

            // Deleted through b (the replica that did not create it), gone from a.
            #expect(try curl(["-X", "DELETE", "\(b.base)/v1/pois/live-shared-1"]).status == 204)
            try waitFor(a, "/v1/pois/live-shared-1", status: 404, what: "the delete on replica b, read on replica a")
            #expect(try !curl(["\(a.base)/v1/nearby?lat=60.1699&lon=24.9384&radius=50&limit=50"]).body.contains("live-shared-1"))
            let metrics = try curl(["\(a.base)/metrics"]).body
            for gauge in ["poi_store_sequence ", "poi_store_connected 1", "poi_store_lag_seconds "] {
                #expect(metrics.contains("\n\(gauge)"), "\(gauge) in /metrics")
            }
        }
    }
}
