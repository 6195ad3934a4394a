import Foundation
import TestSupport
import Testing

/// `poi serve --preload` and `--lock-memory` on a real process: each says what it did, and a refused lock stops the
/// server with a message naming the limit to raise.
extension LiveTests {
    @Suite struct ResidentMemoryLiveTests {
        let scratch = ScratchDirectory("poi-resident-live")

        func database() throws -> String {
            let db = scratch.file("r.sqlite")
            let data = scratch.file("r.jsonl")
            try Data(
                (0..<500).map { #"{"id":"r\#($0)","name":"Kahvila \#($0)","category":"food.cafe","lat":\#(60.1 + Double($0) * 0.0001),"lon":24.9}"# }
                    .joined(separator: "\n").utf8
            ).write(to: URL(fileURLWithPath: data))
            #expect(try CLI.run(["import", data, "--db", db]).status == 0)
            return db
        }

        @Test func preloadAndLockSayWhatTheyDid() throws {
            let db = try database()
            for (flag, line) in [("--preload", "preloaded "), ("--lock-memory", "mapped files locked")] {
                let server = try LiveServer(arguments: ["--db", db, flag])
                defer { server.stop() }
                #expect(server.stderr.contains(line), "\(flag): \(server.stderr)")
                let nearby = try curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "\(server.base)/v1/nearby?lat=60.1&lon=24.9"]).stdout
                #expect(nearby == "200", "\(flag)")
                if flag == "--lock-memory" {
                    // The snapshot's pages (and the program's) are locked: VmLck holds at least the snapshot file.
                    let status = try String(contentsOfFile: "/proc/\(server.process.processIdentifier)/status", encoding: .utf8)
                    let locked = status.split(separator: "\n").first { $0.hasPrefix("VmLck:") }.flatMap { line in
                        Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
                    }
                    let snapshot = try FileManager.default.attributesOfItem(atPath: db + ".snapshot")[.size] as? Int ?? 0
                    #expect(snapshot > 0 && (locked ?? 0) * 1_024 >= snapshot, "VmLck \(locked ?? -1) kB, snapshot \(snapshot) bytes")
                }
            }
        }

        /// Without CAP_IPC_LOCK (dropped from the bounding set by setpriv) and with a 64 KiB memlock limit, mlock
        /// is refused: exit 1, naming ulimit -l and CAP_IPC_LOCK, before the server listens.
        @Test func aRefusedLockNamesTheLimit() throws {
            let db = try database()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = [
                "--bounding-set", "-ipc_lock", "/bin/sh", "-c", #"ulimit -l 64 && exec "$0" serve --port 0 --lock-memory --db "$1""#,
                CLI.executable.path, db,
            ]
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 1, "exit \(process.terminationStatus): \(text)")
            #expect(text.contains("--lock-memory: mlock of ") && text.contains("ulimit -l") && text.contains("CAP_IPC_LOCK"), "\(text)")
            #expect(!text.contains("] serving "), "the server must not listen: \(text)")
        }
    }
}
