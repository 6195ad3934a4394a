import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An identity provider's web server for tests: Python's HTTPS server on loopback, serving the files of a directory
/// (`jwks.json`, `.well-known/openid-configuration`) with the `Cache-Control` value of the file `cache-control` when
/// there is one, and logging every request's path, so that a test can count the fetches. The test changes the
/// files to rotate keys and stops the server to take the provider down.
public final class TestKeyServer: @unchecked Sendable {
    public let directory: String
    public private(set) var port = 0
    private let process = Process()
    private let log: String

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    static let script = #"""
        import http.server, os, ssl, sys
        directory, certificate, key, log = sys.argv[1:5]
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                with open(log, "a") as f:
                    f.write(self.path + "\n")
                path = os.path.join(directory, self.path.lstrip("/").split("?")[0])
                if not os.path.isfile(path):
                    self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
                body = open(path, "rb").read()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                control = os.path.join(directory, "cache-control")
                if os.path.isfile(control):
                    self.send_header("Cache-Control", open(control).read().strip())
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    /// Starts the server on `directory` with the certificate and key (PEM files); returns once it listens.
    public init(directory: String, certificate: String, key: String) throws {
        self.directory = directory
        log = directory + "/requests.log"
        _ = FileManager.default.createFile(atPath: log, contents: Data())
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, directory, certificate, key, log]
        let out = Pipe()
        let errors = Pipe()
        process.standardOutput = out
        process.standardError = errors
        try process.run()
        // The first line is the port, printed once the socket listens; the read waits for it (or for an exit).
        var line = Data()
        while true {
            let byte = out.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            process.waitUntilExit()
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw Failure(description: "the test key server did not print its port; stderr:\n\(message)")
        }
        self.port = port
    }

    public var base: String { "https://127.0.0.1:\(port)" }

    /// Writes `data` as the file `name` of the served directory (atomically: a fetch never sees half a file).
    public func publish(_ name: String, _ data: Data) throws {
        let path = directory + "/" + name
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// How many requests asked for `path`.
    public func requests(_ path: String) -> Int {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0 == path }.count
    }

    /// Takes the provider down: connections are refused from now on.
    public func stop() {
        guard process.isRunning else { return }
        // SIGKILL: the test process may hold SIGTERM blocked, and a child inherits the mask (Python would not stop).
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }
}
