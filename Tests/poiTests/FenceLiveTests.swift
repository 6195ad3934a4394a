import Foundation
import Glibc
import TestSupport
import Testing

/// Live areas through a real server on a real socket: the events a server stored before it was killed (SIGKILL, no
/// shutdown) are all streamed after it starts again, under their numbers, and the events made after the restart
/// follow them in the one sequence; the retention's options are checked by name.
extension LiveTests {
    @Suite struct FenceLiveTests {
        let scratch = ScratchDirectory("poi-fence-live")

        /// The SSE events of a body: (id, event).
        static func events(_ body: String) -> [(id: Int, event: String)] {
            body.components(separatedBy: "\n\n").compactMap { block in
                var id: Int?
                var event = ""
                for line in block.split(separator: "\n") {
                    if line.hasPrefix("id: ") { id = Int(line.dropFirst(4)) }
                    if line.hasPrefix("event: ") { event = String(line.dropFirst(7)) }
                }
                return id.map { ($0, event) }
            }
        }

        static func movePin(_ base: String, id: String?, lat: Double) throws -> String {
            let body = #"{"uniqueKey":"u","firstName":"A","lastName":"B","mapString":"","mediaURL":"","lat":\#(lat),"lon":24.94}"#
            let reply = try curl(
                [
                    "-s", "-f", "-X", id == nil ? "POST" : "PUT", "\(base)/v1/pins\(id.map { "/\($0)" } ?? "")", "-H",
                    "Content-Type: application/json", "-d", body,
                ]
            )
            let object = try JSONSerialization.jsonObject(with: Data(reply.stdout.utf8)) as? [String: Any]
            return try #require(object?["id"] as? String, "\(reply.stdout) \(reply.stderr)")
        }

        @Test func eventsStoredBeforeAKillAreStreamedAfterTheRestart() throws {
            let db = scratch.file("fences.sqlite")
            try CLI.emptyDatabase(at: db)
            var server = try LiveServer(arguments: ["--db", db])
            let made = try curl([
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "\(server.base)/v1/fences", "-H", "Content-Type: application/json", "-d",
                #"{"id":"zone","area":{"type":"bbox","bbox":[24.9,60.1,25.0,60.2]},"detect":["enter","exit"]}"#,
            ])
            #expect(made.stdout == "201", "\(server.stderr)")
            // In, out, in again: three events, then the process is killed without a shutdown.
            let pin = try Self.movePin(server.base, id: nil, lat: 60.15)
            _ = try Self.movePin(server.base, id: pin, lat: 60.5)
            _ = try Self.movePin(server.base, id: pin, lat: 60.16)
            server.kill9()
            server = try LiveServer(arguments: ["--db", db])
            defer { server.stop() }
            _ = try Self.movePin(server.base, id: pin, lat: 60.6)
            let all = try curl(["-s", "-N", "\(server.base)/v1/fences/zone/events?limit=4&timeout=30"])
            let events = Self.events(all.stdout)
            #expect(events.map(\.event) == ["enter", "exit", "enter", "exit"], "\(all.stdout)\n\(server.stderr)")
            #expect(events.map(\.id) == [1, 2, 3, 4])
            // A client that had seen the first two resumes with the header EventSource sends.
            let resumed = try curl(["-s", "-N", "-H", "Last-Event-ID: 2", "\(server.base)/v1/fences/zone/events?limit=2&timeout=30"])
            #expect(Self.events(resumed.stdout).map(\.id) == [3, 4])
            #expect(!resumed.stdout.contains("event: gap"))
        }

        /// A webhook whose receiver refused every event until the server was killed gets every one after the restart,
        /// in order, with those made after it; none is given up.
        @Test func aWebhookDeliversAfterTheRestartWhatTheKillInterrupted() throws {
            let db = scratch.file("hooks.sqlite")
            try CLI.emptyDatabase(at: db)
            // The receiver: 503 while the file `refuse` exists, else 200; each accepted event's id appended to `got`.
            let refuse = scratch.file("refuse")
            let got = scratch.file("got")
            FileManager.default.createFile(atPath: refuse, contents: Data())
            FileManager.default.createFile(atPath: got, contents: Data())
            let receiver = Process()
            receiver.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            receiver.arguments = [
                "python3", "-c",
                """
                import http.server, os, sys
                class H(http.server.BaseHTTPRequestHandler):
                    def do_POST(self):
                        self.rfile.read(int(self.headers.get("Content-Length", 0)))
                        if os.path.exists(sys.argv[1]):
                            self.send_response(503); self.end_headers(); return
                        with open(sys.argv[2], "a") as f: f.write(self.headers["X-Poi-Event-Id"] + "\\n")
                        self.send_response(200); self.end_headers()
                    def log_message(self, *a): pass
                s = http.server.HTTPServer(("127.0.0.1", 0), H)
                print(s.server_address[1], flush=True)
                s.serve_forever()
                """,
                refuse, got,
            ]
            let output = Pipe()
            receiver.standardOutput = output
            try receiver.run()
            defer { receiver.terminate() }
            let port = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            try #require(Int(port) != nil, "the receiver printed no port: \"\(port)\"")
            var server = try LiveServer(arguments: ["--db", db])
            let made = try curl([
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "\(server.base)/v1/fences", "-H", "Content-Type: application/json", "-d",
                #"{"id":"hooked","area":{"type":"bbox","bbox":[24.9,60.1,25.0,60.2]},"webhook":"http://127.0.0.1:\#(port)/hook"}"#,
            ])
            #expect(made.stdout == "201", "\(server.stderr)")
            let pin = try Self.movePin(server.base, id: nil, lat: 60.15)
            _ = try Self.movePin(server.base, id: pin, lat: 60.5)
            _ = try Self.movePin(server.base, id: pin, lat: 60.16)
            server.kill9()
            unlink(refuse)
            server = try LiveServer(arguments: ["--db", db])
            defer { server.stop() }
            _ = try Self.movePin(server.base, id: pin, lat: 60.6)
            // Delivery is at least once: a repeated id (a POST answered after the sender's timeout) counts once.
            func delivered() -> [Int] {
                let ids = ((try? String(contentsOfFile: got, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int($0) }
                return ids.enumerated().filter { $0.offset == 0 || ids[$0.offset - 1] != $0.element }.map(\.element)
            }
            let started = Date()
            while delivered().count < 4, Date().timeIntervalSince(started) < 300 { Thread.sleep(forTimeInterval: 0.05) }
            #expect(delivered() == [1, 2, 3, 4], "awaited 4 deliveries for 300 s; stderr:\n\(server.stderr)")
            let state = try curl(["-s", "\(server.base)/v1/fences/hooked"]).stdout
            #expect(state.contains(#""webhookDeadLetters":0"#), "\(state)")
        }

        @Test(arguments: [
            (["--fence-events-hours=-1"], "--fence-events-hours"), (["--fence-events-hours", "nan"], "--fence-events-hours"),
            (["--fence-events-mb=-5"], "--fence-events-mb"), (["--fence-events-mb", "lots"], "--fence-events-mb"),
        ])
        func badRetentionOptionsAreRefusedByName(_ options: [String], _ name: String) throws {
            let db = scratch.file("bad-\(UUID().uuidString).sqlite")
            try CLI.emptyDatabase(at: db)
            let result = try CLI.run(["serve", "--db", db, "--port", "0"] + options)
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains(name), "\(result.stderr)")
        }
    }
}
