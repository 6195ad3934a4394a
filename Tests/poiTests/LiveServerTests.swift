import Foundation
import TestSupport
import Testing

/// `poi serve` on a real socket: a server process, curl as the client.
extension LiveTests {
    @Suite struct LiveServerTests {
        let scratch = ScratchDirectory("poi-live")

        func startServer(db: String, _ extra: [String] = []) throws -> LiveServer {
            try LiveServer(arguments: ["--db", db] + extra)
        }

        func emptyDatabase() throws -> String { try CLI.emptyDatabase(at: scratch.file("live.sqlite")) }

        /// A pin acknowledged with 201 survives kill -9 of the server right after the response.
        @Test func acknowledgedPinSurvivesKill9() throws {
            let db = try emptyDatabase()
            let server = try startServer(db: db)
            let created = try curl([
                "-s", "-w", "\n%{http_code}", "-X", "POST", "\(server.base)/v1/pins", "-H", "Content-Type: application/json",
                "-d",
                #"{"uniqueKey":"u1","firstName":"Ada","lastName":"Lovelace","mapString":"Mountain View, CA","mediaURL":"https://example.org","lat":37.386,"lon":-122.083}"#,
            ])
            server.kill9()
            let lines = created.stdout.split(separator: "\n")
            #expect(lines.last == "201")
            let pin = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as! [String: Any]
            let id = try #require(pin["id"] as? String)
            let restarted = try startServer(db: db)
            defer { restarted.stop() }
            let fetched = try curl(["-s", "-w", "\n%{http_code}", "\(restarted.base)/v1/pins/\(id)"])
            #expect(fetched.stdout.hasSuffix("\n200"))
            #expect(fetched.stdout.contains("\"firstName\":\"Ada\""))
        }

        /// `--server URL` prints exactly what the local command prints.
        @Test func serverOptionPrintsTheSameAsLocal() throws {
            let db = scratch.file("same.sqlite")
            let data = scratch.file("same.jsonl")
            _ = FileManager.default.createFile(
                atPath: data,
                contents: Data(
                    (0..<40).map { i in
                        "{\"id\":\"s\(i)\",\"name\":\"Cafe \(i)\",\"category\":\"food.cafe\",\"lat\":\(60.17 + Double(i) * 0.001),\"lon\":24.94}\n"
                    }.joined().utf8
                )
            )
            #expect(try CLI.run(["import", data, "--db", db]).status == 0)
            let server = try startServer(db: db)
            defer { server.stop() }
            for arguments in [
                ["nearby", "--lat", "60.18", "--lon", "24.94", "--limit", "5", "--format", "json"],
                ["nearby", "--lat", "60.18", "--lon", "24.94", "--limit", "5"],
                ["search", "cafe 3", "--limit", "3", "--format", "json"],
                ["within", "--bbox", "24.9,60.17,25,60.19", "--limit", "4", "--format", "geojson"],
                ["clusters", "--bbox", "24,60,26,61", "--precision", "5", "--format", "json"],
                ["nearby", "--lat", "60.18", "--lon", "24.94", "--coordsys", "gcj02", "--limit", "2", "--format", "json"],
            ] {
                let local = try CLI.run(arguments + ["--db", db])
                let remote = try CLI.run(arguments + ["--server", server.base])
                #expect(local.status == 0 && remote.status == 0, "\(arguments): \(remote.stderr)")
                #expect(local.stdout == remote.stdout, "\(arguments)")
            }
            // The gazetteer's commands too (their --db names the database whose addresses and streets they search).
            for arguments in [
                ["geocode", "Helsinki", "--limit", "2", "--format", "json"],
                ["geocode", "1600 Amphitheatre Parkway, Mountain View", "--near", "37.4,-122.1", "--format", "json"],
                ["geocode", "Helsinki", "--limit", "2"],
                ["reverse", "--lat", "60.17", "--lon", "24.94", "--format", "json"],
            ] {
                let local = try CLI.run(arguments + ["--db", db])
                let remote = try CLI.run(arguments + ["--server", server.base])
                #expect(local.status == 0 && remote.status == 0, "\(arguments): \(local.stderr) \(remote.stderr)")
                #expect(local.stdout == remote.stdout, "\(arguments)")
            }
            let bad = try CLI.run(["nearby", "--lat", "95", "--lon", "0", "--server", server.base])
            #expect(bad.status == 2 && bad.stderr.contains("lat must be a number between -90 and 90"))
        }

        /// SIGTERM stops the server gracefully: requests already sent are answered, then it exits with status 0.
        @Test func sigtermShutsDownGracefully() throws {
            let db = try emptyDatabase()
            let server = try startServer(db: db)
            let port = server.port
            // Keep clients busy while the signal arrives.
            let group = DispatchGroup()
            nonisolated(unsafe) var statuses: [String] = []
            let lock = NSLock()
            for _ in 0..<4 {
                group.enter()
                DispatchQueue.global().async {
                    let r = try? curl([
                        "-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/v1/nearby?lat=60&lon=24&kind=all&limit=100",
                    ])
                    lock.lock()
                    statuses.append(r?.stdout ?? "")
                    lock.unlock()
                    group.leave()
                }
            }
            Thread.sleep(forTimeInterval: 0.05)
            kill(server.process.processIdentifier, SIGTERM)
            server.process.waitUntilExit()
            group.wait()
            #expect(server.process.terminationReason == .exit && server.process.terminationStatus == 0, "stderr:\n\(server.stderr)")
            // Requests either completed (200) or found the socket already closed (000); none got an error status.
            #expect(statuses.allSatisfy { $0 == "200" || $0 == "000" }, "\(statuses)")
        }

        /// SIGTERM during an import and a write: the server stops accepting and answers the write it took, the import
        /// stops between two batches (its task says how many rows are in), the process exits 0, and a restart has the
        /// write if it was acknowledged and whole batches of the import only.
        @Test func sigtermDuringAnImportAndAWriteDrainsBoth() throws {
            let db = try emptyDatabase()
            let server = try startServer(db: db)
            let rows = 300_000
            let file = scratch.file("many.jsonl")
            var text = ""
            text.reserveCapacity(rows * 100)
            for i in 0..<rows {
                text += "{\"id\":\"m\(i)\",\"name\":\"Kioski \(i)\",\"category\":\"shop.kiosk\",\"lat\":60.\(i % 1000),\"lon\":24.\(i / 1000)}\n"
            }
            try Data(text.utf8).write(to: URL(fileURLWithPath: file))
            let posted = try curl(["-s", "-X", "POST", "--data-binary", "@\(file)", "\(server.base)/v1/import?format=jsonl&name=many.jsonl"])
            let task = try #require(
                (try? JSONSerialization.jsonObject(with: Data(posted.stdout.utf8)) as? [String: Any])?["id"] as? String,
                "\(posted.stdout)\nserver:\n\(server.stderr)"
            )
            // Waits on the event — the first batches committed (the server's POI count) — not on a clock; the bound
            // only turns a hung import into a failure that says what was awaited.
            func pois(_ base: String) -> Int {
                let health = (try? curl(["-s", "\(base)/health"]).stdout) ?? ""
                return (try? JSONSerialization.jsonObject(with: Data(health.utf8)) as? [String: Any])?["pois"] as? Int ?? -1
            }
            let deadline = Date().addingTimeInterval(300)
            while pois(server.base) < 2_000 {
                try #require(Date() < deadline, "awaited: 2 000 POIs of task \(task) committed\nserver:\n\(server.stderr)")
                Thread.sleep(forTimeInterval: 0.05)
            }
            // A write on its way as the signal comes: acknowledged (and then durable) or refused, never lost after a 2xx.
            let write = DispatchGroup()
            nonisolated(unsafe) var written = ""
            write.enter()
            DispatchQueue.global().async {
                written =
                    (try? curl([
                        "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT", "\(server.base)/v1/pois/w1",
                        "-d", "{\"name\":\"Written\",\"category\":\"shop.kiosk\",\"lat\":60.5,\"lon\":24.5}",
                    ]).stdout) ?? ""
                write.leave()
            }
            server.send(SIGTERM)
            server.process.waitUntilExit()
            write.wait()
            #expect(server.process.terminationReason == .exit && server.process.terminationStatus == 0, "stderr:\n\(server.stderr)")
            #expect(["200", "201", "000"].contains(written), "the write: \(written)")
            #expect(server.stderr.contains("shutdown: imports stopped"), "\(server.stderr)")
            let interrupted = server.stderr.contains("\(task): interrupted: the server shut down after")
            #expect(interrupted, "the import was still running at the signal, and stopped between two batches:\n\(server.stderr)")

            let again = try startServer(db: db)
            defer { again.stop() }
            let hasWrite = try curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "\(again.base)/v1/pois/w1"]).stdout == "200"
            #expect(hasWrite == (written == "200" || written == "201"), "acknowledged \(written), after the restart: \(hasWrite)")
            let imported = pois(again.base) - (hasWrite ? 1 : 0)
            #expect(imported > 0 && imported % 1_000 == 0 && imported < rows, "whole batches of 1 000 only: \(imported)")
        }

        /// Clients read while pins are written; every answer is well-formed and the final count is exact.
        @Test func concurrentReadersWhileWriting() async throws {
            let db = try emptyDatabase()
            let server = try startServer(db: db)
            let port = server.port
            defer { server.stop() }
            let writes = 30
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    for i in 0..<writes {
                        let r = try curl([
                            "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "http://127.0.0.1:\(port)/v1/pins",
                            "-d", "{\"firstName\":\"P\(i)\",\"lat\":60.17,\"lon\":24.94}",
                        ])
                        if r.stdout != "201" { return false }
                    }
                    return true
                }
                for _ in 0..<3 {
                    group.addTask {
                        for _ in 0..<20 {
                            let r = try curl([
                                "-s", "-w", "\n%{http_code}", "http://127.0.0.1:\(port)/v1/nearby?lat=60.17&lon=24.94&kind=pin&limit=100",
                            ])
                            guard r.stdout.hasSuffix("\n200"), let body = r.stdout.split(separator: "\n").first,
                                (try? JSONSerialization.jsonObject(with: Data(body.utf8))) != nil
                            else { return false }
                        }
                        return true
                    }
                }
                for try await ok in group { #expect(ok) }
            }
            let list = try curl(["-s", "http://127.0.0.1:\(port)/v1/pins?limit=100"])
            #expect(list.stdout.contains("\"total\":\(writes)"))
        }

        /// `poi import --server`: a file over the 1 MiB JSON cap reaches the running server, which answers queries
        /// on it without a restart; a chunked upload is refused with 411.
        @Test func importThroughTheServerWithoutARestart() throws {
            let db = try emptyDatabase()
            let server = try startServer(db: db)
            defer { server.stop() }
            let file = scratch.url.appendingPathComponent("generated.jsonl")
            let generated = try CLI.run(["generate", "--count", "8000", "--seed", "7"])
            try #require(generated.status == 0, "\(generated.stderr)")
            try Data(generated.stdout.utf8).write(to: file)
            #expect(generated.stdout.utf8.count > 1 << 20, "the body is larger than the 1 MiB JSON body cap")
            let imported = try CLI.run(["import", file.path, "--server", server.base])
            #expect(imported.status == 0, "\(imported.stderr)\nserver:\n\(server.stderr)")
            #expect(imported.stdout.contains("imported 8000, skipped 0"), "\(imported.stdout)")
            let health = try curl(["-s", "\(server.base)/health"])
            #expect(health.stdout.contains("\"pois\":8000"), "\(health.stdout)")
            let firstID = try #require(
                generated.stdout.split(separator: "\n").first.flatMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }?["id"] as? String
            )
            let one = try curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "\(server.base)/v1/pois/\(firstID)"])
            #expect(one.stdout == "200")
            let chunked = try curl([
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Transfer-Encoding: chunked", "--data-binary", "@\(file.path)",
                "\(server.base)/v1/import?format=jsonl",
            ])
            #expect(chunked.stdout == "411")
        }
    }
}
