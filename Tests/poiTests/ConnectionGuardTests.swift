import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP layer against hostile and broken connections, on a real socket: each answer is a 4xx problem+json (or a
/// clean close), never a 500, and the server goes on answering. Timeouts are short here (1–2 s) so that the tests
/// wait on the server's own deadlines; nothing asserts how long anything took.
extension LiveTests {
    @Suite struct ConnectionGuardTests {
        static let scratch = ScratchDirectory("poi-guard")
        static let database: String = {
            let db = scratch.file("guard.sqlite")
            _ = try? CLI.emptyDatabase(at: db)  // a failure shows as the server's own error when it starts on it
            return db
        }()

        func expectProblem(
            _ reply: RawHTTP.Reply,
            status: Int,
            _ fragment: String,
            server: LiveServer,
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            #expect(
                reply.status == status,
                "expected \(status), got: \(reply.text.prefix(300))\nserver stderr:\n\(server.stderr)",
                sourceLocation: sourceLocation
            )
            #expect(
                reply.text.lowercased().contains("content-type: application/problem+json"),
                "\(reply.text.prefix(300))",
                sourceLocation: sourceLocation
            )
            #expect(reply.text.contains(fragment), "\(reply.text.prefix(400))", sourceLocation: sourceLocation)
            #expect(reply.closed, "the connection is closed after an error answer", sourceLocation: sourceLocation)
        }

        /// The server still answers and logged no unexpected error.
        func expectHealthy(_ server: LiveServer, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let health = try RawHTTP.exchange(port: server.port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(health.status == 200, "\(health.text)\nserver stderr:\n\(server.stderr)", sourceLocation: sourceLocation)
            #expect(!server.stderr.contains("error"), "server stderr:\n\(server.stderr)", sourceLocation: sourceLocation)
        }

        @Test func malformedRequestsAreProblemsNotServerErrors() throws {
            let server = try LiveServer(arguments: ["--db", Self.database])
            defer { server.stop() }
            for path in ["/v1/pins", "/v1/convert"] {
                let chunked = try RawHTTP.exchange(
                    port: server.port,
                    "POST \(path) HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzzz\r\n"
                )
                expectProblem(chunked, status: 400, "invalid chunk size", server: server)
            }
            let bigHead = try RawHTTP.exchange(
                port: server.port,
                "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 100_000))\r\n\r\n"
            )
            expectProblem(bigHead, status: 431, "request line or headers are longer than", server: server)
            // A long request line: 60 KB (a polygon of some 2 500 vertices) is served; 100 KB is a 431.
            let longLine = try RawHTTP.exchange(
                port: server.port,
                "GET /health?pad=\(String(repeating: "x", count: 60_000)) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            #expect(longLine.status == 200, "\(longLine.text.prefix(300))")
            let tooLong = try RawHTTP.exchange(
                port: server.port,
                "GET /health?pad=\(String(repeating: "x", count: 100_000)) HTTP/1.1\r\nHost: x\r\n\r\n"
            )
            expectProblem(tooLong, status: 431, "request line or headers are longer than 64 KiB", server: server)
            let tooLarge = try RawHTTP.exchange(port: server.port, "POST /v1/pins HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n")
            expectProblem(tooLarge, status: 413, "larger than", server: server)
            let cut = try RawHTTP.exchange(
                port: server.port,
                "POST /v1/pins HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n{\"lat\":",
                halfClose: true
            )
            expectProblem(cut, status: 400, "closed before the request was complete", server: server)
            let garbage = try RawHTTP.exchange(port: server.port, [0, 1, 2, 32, 103, 13, 10, 13, 10])
            expectProblem(garbage, status: 400, "malformed request", server: server)
            let badLength = try RawHTTP.exchange(port: server.port, "POST /v1/pins HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n")
            #expect(badLength.status == 400, "\(badLength.text)")
            try expectHealthy(server)
        }

        @Test func slowAndIdleConnectionsTimeOut() throws {
            let server = try LiveServer(arguments: ["--db", Self.database, "--request-timeout", "1", "--idle-timeout", "2"])
            defer { server.stop() }
            // A body that never arrives, a head cut in the middle, a head sent a line at a time: 408.
            let neverBody = try RawHTTP.exchange(port: server.port, "POST /v1/pins HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n{")
            expectProblem(neverBody, status: 408, "did not arrive in full within 1 s", server: server)
            let halfHead = try RawHTTP.exchange(port: server.port, "GET /health HTTP/1.1\r\nHost: x\r\n")
            expectProblem(halfHead, status: 408, "did not arrive in full", server: server)
            let slow = try RawHTTP.connect(port: server.port)
            defer { close(slow) }
            for line in ["GET /health HTTP/1.1\r\n", "Host: x\r\n", "X-A: 1\r\n", "X-B: 2\r\n"] {
                RawHTTP.send(slow, Array(line.utf8))
                usleep(400_000)
            }
            let slowReply = RawHTTP.read(slow)
            expectProblem(slowReply, status: 408, "did not arrive in full", server: server)
            // A connection that never sends a byte is closed without an answer.
            let silent = try RawHTTP.connect(port: server.port)
            defer { close(silent) }
            let silentReply = RawHTTP.read(silent)
            #expect(silentReply.closed && silentReply.bytes.isEmpty)
            // A keep-alive connection is answered, then closed once idle.
            let idle = try RawHTTP.exchange(port: server.port, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(idle.status == 200 && idle.closed, "\(idle.text)")
            // A connection in use stays open past the idle timeout, whichever path answers it: requests every 0.4 s
            // for 3 s on the byte lane, and on a connection handed to the parser by its first request's header.
            for first in ["", "Content-Length: 0\r\n"] {
                let busy = try RawHTTP.connect(port: server.port)
                defer { close(busy) }
                for i in 0..<8 {
                    RawHTTP.send(busy, Array("GET /health HTTP/1.1\r\nHost: x\r\n\(i == 0 ? first : "")\r\n".utf8))
                    let reply = RawHTTP.readResponse(busy)
                    #expect(
                        reply.status == 200 && !reply.closed,
                        "request \(i) (\(first.debugDescription)): \(reply.text)\nstderr:\n\(server.stderr)"
                    )
                    usleep(400_000)
                }
                let last = RawHTTP.read(busy)
                #expect(last.closed && last.bytes.isEmpty, "then idle: \(last.text)")
            }
            try expectHealthy(server)
        }

        @Test func http10IsClosedAfterItsAnswer() throws {
            let server = try LiveServer(arguments: ["--db", Self.database])
            defer { server.stop() }
            // The server's idle timeout is 60 s and the read waits up to 60 s: a close comes from the HTTP/1.0 rule.
            let reply = try RawHTTP.exchange(port: server.port, "GET /health HTTP/1.0\r\n\r\n")
            #expect(reply.status == 200 && reply.closed, "\(reply.text)")
            #expect(reply.text.lowercased().contains("connection: close"))
            let keepAlive = try RawHTTP.connect(port: server.port)
            defer { close(keepAlive) }
            RawHTTP.send(keepAlive, Array("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n".utf8))
            let first = RawHTTP.read(keepAlive, timeout: 2)
            #expect(first.status == 200 && !first.closed, "HTTP/1.0 with keep-alive stays open: \(first.text)")
        }

        @Test func connectionsOverTheCapAreRefusedWith503() throws {
            let server = try LiveServer(arguments: ["--db", Self.database, "--max-connections", "4", "--request-timeout", "60"])
            defer { server.stop() }
            let held = try (0..<4).map { _ in try RawHTTP.connect(port: server.port) }
            // The held connections are counted once the server has accepted them: wait until one more is refused.
            var refused: RawHTTP.Reply?
            for _ in 0..<600 {
                let reply = try RawHTTP.exchange(port: server.port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if reply.status == 503 {
                    refused = reply
                    break
                }
                usleep(50_000)
            }
            let reply = try #require(refused, "a fifth connection was never refused; stderr:\n\(server.stderr)")
            expectProblem(reply, status: 503, "limit of 4 open connections", server: server)
            #expect(reply.text.contains("Retry-After: 1"))
            for fd in held { close(fd) }
            // Once they are closed, the server answers again.
            var answered = false
            for _ in 0..<600 where !answered {
                answered = try RawHTTP.exchange(port: server.port, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status == 200
                if !answered { usleep(50_000) }
            }
            #expect(answered, "the server answers again after the held connections close; stderr:\n\(server.stderr)")
        }
    }
}
