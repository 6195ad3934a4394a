import Foundation
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
