import Foundation
import HTTPServer
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The request log's buffer: a request never waits for the log's disk or pipe; what does not fit is dropped and
/// counted, and every record is either written or counted as dropped.
@Suite struct AccessLogTests {
    static func entry(_ i: Int) -> AccessLog.Entry {
        AccessLog.Entry(
            time: 1_764_347_724_123_000_000,
            requestID: "r-\(i)",
            method: .get,
            route: "/v1/nearby",
            status: 200,
            bytes: i,
            durationNanoseconds: 93_400,
            caller: i % 2 == 0 ? .key("ops \"night\"") : .user("ålice"),
            client: "127.0.0.1"
        )
    }

    @Test func aStuckDestinationDropsAndCountsNeverBlocks() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        // Fill the pipe so that the writer's first write blocks.
        let flags = fcntl(ends[1], F_GETFL)
        _ = fcntl(ends[1], F_SETFL, flags | O_NONBLOCK)
        let filler = [UInt8](repeating: 0x20, count: 4_096)
        while filler.withUnsafeBytes({ write(ends[1], $0.baseAddress, $0.count) }) > 0 {}
        let log = try AccessLog(destination: "/proc/self/fd/\(ends[1])", capacity: 64)
        close(ends[1])
        let sent = 3 * log.capacity
        for i in 0..<sent { log.record(Self.entry(i)) }
        // The writer holds at most one batch and the buffer at most its capacity: the rest was dropped at once.
        #expect(log.droppedLines >= log.capacity, "dropped \(log.droppedLines) of \(sent)")
        // Drain the pipe so that the writer finishes, then every record is accounted for.
        let readEnd = ends[0]
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while buffer.withUnsafeMutableBytes({ read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
        }
        reader.start()
        log.close()
        #expect(log.droppedLines + log.writtenLines == sent, "dropped \(log.droppedLines), written \(log.writtenLines) of \(sent)")
    }

    @Test func linesAreJSONWithTheFieldsInOrder() throws {
        let scratch = ScratchDirectory("poi-access-log-unit")
        let path = scratch.file("a.log")
        let log = try AccessLog(destination: path)
        for i in 0..<3 { log.record(Self.entry(i)) }
        log.close()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(
            lines[0]
                == #"{"time":"2025-11-28T16:35:24.123Z","request_id":"r-0","method":"GET","route":"/v1/nearby","status":200,"bytes":0,"duration_ms":0.093,"key":"ops \"night\"","client":"127.0.0.1"}"#
        )
        let second = try #require(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(second["user"] as? String == "ålice" && second["key"] == nil)
        // Appends: a second log on the same file keeps the first's lines.
        let again = try AccessLog(destination: path)
        again.record(Self.entry(3))
        again.close()
        #expect(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").count == 4)
        #expect(throws: AccessLogError.self) { try AccessLog(destination: scratch.file("no/such/dir/a.log")) }
    }
}
