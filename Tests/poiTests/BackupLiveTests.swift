import Foundation
import Synchronization
import TestSupport
import Testing

/// `poi backup` beside a server that is writing, and `poi restore`: the copy restores to a server that answers every
/// write acknowledged before the backup began; a copy with one byte flipped is refused by name.
extension LiveTests {
    @Suite struct BackupLiveTests {
        let scratch = ScratchDirectory("poi-backup")

        @Test func aBackupUnderLoadRestoresEveryAcknowledgedWrite() throws {
            let db = scratch.file("live.sqlite")
            let data = scratch.file("seed.jsonl")
            try Data(
                (0..<200).map { #"{"id":"p\#($0)","name":"Kahvila \#($0)","category":"food.cafe","lat":\#(60.1 + Double($0) * 0.001),"lon":24.9}"# }
                    .joined(separator: "\n").utf8
            ).write(to: URL(fileURLWithPath: data))
            #expect(try CLI.run(["import", data, "--db", db]).status == 0)
            let server = try LiveServer(arguments: ["--db", db, "--snapshot-every", "50"])
            // A writer: pins one after another, each id kept with the moment its 201 arrived.
            let acknowledged = Mutex([(id: String, at: Date)]())
            let stop = Atomic(false)
            let writer = Thread {
                var n = 0
                while !stop.load(ordering: .relaxed) {
                    n += 1
                    let reply = try? curl([
                        "-s", "-w", "\n%{http_code}", "-X", "POST", "\(server.base)/v1/pins", "-H", "Content-Type: application/json", "-d",
                        #"{"uniqueKey":"w\#(n)","firstName":"W","lastName":"\#(n)","mapString":"x","mediaURL":"","lat":60.2,"lon":24.9}"#,
                    ]).stdout
                    guard let reply, reply.hasSuffix("\n201"),
                        let object = try? JSONSerialization.jsonObject(with: Data(reply.dropLast(4).utf8)) as? [String: Any],
                        let id = object["id"] as? String
                    else { continue }
                    acknowledged.withLock { $0.append((id, Date())) }
                }
            }
            writer.start()
            // Wait until writes are flowing, then back up in the middle of them.
            let patience = Date()
            while acknowledged.withLock({ $0.count }) < 20 {
                #expect(Date().timeIntervalSince(patience) < 300, "waited 300 s for 20 acknowledged pins; stderr:\n\(server.stderr)")
                if Date().timeIntervalSince(patience) >= 300 { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            let began = Date()
            let backup = scratch.file("backup-1")
            let made = try CLI.run(["backup", db, backup])
            #expect(made.status == 0, "\(made.stderr)")
            // Writes go on a little after the backup, then stop.
            let after = acknowledged.withLock { $0.count }
            while acknowledged.withLock({ $0.count }) < after + 10 { Thread.sleep(forTimeInterval: 0.05) }
            stop.store(true, ordering: .relaxed)
            while writer.isExecuting { Thread.sleep(forTimeInterval: 0.01) }
            server.stop()
            let before = acknowledged.withLock { $0.filter { $0.at < began }.map(\.id) }
            let all = Set(acknowledged.withLock { $0.map(\.id) })

            let restored = scratch.file("restored.sqlite")
            let restore = try CLI.run(["restore", backup, restored])
            #expect(restore.status == 0, "\(restore.stderr)")
            let second = try LiveServer(arguments: ["--db", restored])
            defer { second.stop() }
            var ids = Set<String>()
            while true {
                let text = try curl(["-s", "\(second.base)/v1/pins?limit=100&skip=\(ids.count)"]).stdout
                let page = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
                let results = try #require(page?["results"] as? [[String: Any]], "\(text)")
                ids.formUnion(results.compactMap { $0["id"] as? String })
                if results.count < 100 { break }
            }
            let lost = before.filter { !ids.contains($0) }
            #expect(lost.isEmpty, "\(lost.count) of \(before.count) pins acknowledged before the backup are missing: \(lost.prefix(5))")
            #expect(ids.isSubset(of: all), "pins nobody acknowledged: \(ids.subtracting(all).prefix(5))")
            let pois = try curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "\(second.base)/v1/pois/p199"]).stdout
            #expect(pois == "200")

            // One byte flipped in the copy: refused, by file, and the target is not made.
            let damaged = scratch.file("backup-damaged")
            try FileManager.default.copyItem(atPath: backup, toPath: damaged)
            let file = try FileHandle(forUpdating: URL(fileURLWithPath: damaged + "/poi.sqlite"))
            try file.seek(toOffset: 4_200)
            let byte = try file.read(upToCount: 1)![0]
            try file.seek(toOffset: 4_200)
            try file.write(contentsOf: [byte ^ 0x10])
            try file.close()
            let refused = try CLI.run(["restore", damaged, scratch.file("never.sqlite")])
            #expect(refused.status == 1 && refused.stderr.contains("poi.sqlite: its SHA-256 does not match the manifest"), "\(refused.stderr)")
            #expect(!FileManager.default.fileExists(atPath: scratch.file("never.sqlite")))
            // An existing database is replaced only with --force.
            let existing = try CLI.run(["restore", backup, restored])
            #expect(existing.status == 1 && existing.stderr.contains("--force"))
        }
    }
}
