import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every suite that starts servers, run one test at a time (nested suites inherit `.serialized`): on 2 shared cores
/// a live test then competes with the unit suites only, never with another server's start-up. `make test` runs
/// them in a process of their own beside the rest (`scripts/test/swift-tests`), so that the chain does not wait for
/// the unit suites and then run alone on one core.
@Suite(.serialized) enum LiveTests {}

/// A `poi serve` process on a real socket for live tests.
///
/// It listens on port 0 (the kernel picks a free port, so parallel tests cannot collide) and is ready when it prints
/// its readiness line, `serving … on http://ADDRESS` — the test waits on that line, not on a fixed delay, however
/// loaded the machine is. If the process exits first, or the line has not come after `patience` (a guard against a
/// hung build, far above any normal start), the error names what was awaited and shows the server's stderr.
final class LiveServer: @unchecked Sendable {
    let process = Process()
    private(set) var port = 0
    private let errors = Pipe()
    private let lock = NSLock()
    private var stderrBytes = Data()

    struct StartError: Error, CustomStringConvertible {
        let description: String
    }

    init(arguments: [String], patience: TimeInterval = 600) throws {
        process.executableURL = CLI.executable
        process.arguments = ["serve", "--port", "0"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        errors.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.lock()
            self.stderrBytes.append(data)
            self.lock.unlock()
        }
        try process.run()
        let started = Date()
        while true {
            if let port = Self.readyPort(in: stderr) {
                self.port = port
                break
            }
            if !process.isRunning {
                throw StartError(
                    description:
                        "poi serve \(arguments.joined(separator: " ")) exited with status \(process.terminationStatus) before printing its readiness line (\"serving … on http://…\"); stderr:\n\(stderr)"
                )
            }
            if Date().timeIntervalSince(started) > patience {
                process.terminate()
                throw StartError(
                    description:
                        "poi serve \(arguments.joined(separator: " ")) did not print its readiness line within \(Int(patience)) s; stderr:\n\(stderr)"
                )
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    var stderr: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: stderrBytes, as: UTF8.self)
    }

    var base: String { "\(scheme)://127.0.0.1:\(port)" }

    /// http, or https when the server was given a certificate.
    var scheme: String { process.arguments?.contains("--tls-cert") == true ? "https" : "http" }

    private static func readyPort(in text: String) -> Int? {
        guard let line = text.split(separator: "\n").first(where: { $0.contains("] serving ") }),
            let range = line.range(of: "://", options: .backwards)
        else { return nil }
        return line[range.upperBound...].split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        errors.fileHandleForReading.readabilityHandler = nil
    }

    /// Sends `signal` (SIGHUP: reload the keys).
    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        errors.fileHandleForReading.readabilityHandler = nil
    }

    deinit { stop() }
}

/// Plain bytes over a TCP socket, for requests no HTTP client library would send.
enum RawHTTP {
    struct Reply {
        let bytes: [UInt8]
        /// The peer closed the connection (read returned 0) rather than the read timing out.
        let closed: Bool

        var text: String { String(decoding: bytes, as: UTF8.self) }
        var status: Int? {
            guard text.hasPrefix("HTTP/1.1 ") else { return nil }
            return Int(text.dropFirst(9).prefix(3))
        }
    }

    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LiveServer.StartError(description: "socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw LiveServer.StartError(description: "connect to 127.0.0.1:\(port) failed: errno \(errno)")
        }
        return fd
    }

    static func send(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Reads until the peer closes or nothing arrives for `timeout` seconds.
    static func read(_ fd: Int32, timeout: Int = 60) -> Reply {
        var interval = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                bytes += buffer[0..<count]
            } else {
                return Reply(bytes: bytes, closed: count == 0 || errno == ECONNRESET)
            }
        }
    }

    /// Reads one response with a Content-Length (or until the peer closes or nothing arrives for `timeout` seconds).
    static func readResponse(_ fd: Int32, timeout: Int = 60) -> Reply {
        var interval = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let separator = Array("\r\n\r\n".utf8)
        while true {
            if let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) {
                let head = String(decoding: bytes[..<end], as: UTF8.self).lowercased()
                let length =
                    head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
                if bytes.count >= end + 4 + length { return Reply(bytes: bytes, closed: false) }
            }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return Reply(bytes: bytes, closed: count == 0 || errno == ECONNRESET) }
            bytes += buffer[0..<count]
        }
    }

    /// Sends `request` on a new connection (optionally half-closing after it) and reads the whole reply.
    static func exchange(port: Int, _ request: [UInt8], halfClose: Bool = false, timeout: Int = 60) throws -> Reply {
        let fd = try connect(port: port)
        defer { close(fd) }
        send(fd, request)
        if halfClose { shutdown(fd, Int32(SHUT_WR)) }
        return read(fd, timeout: timeout)
    }

    static func exchange(port: Int, _ request: String, halfClose: Bool = false, timeout: Int = 60) throws -> Reply {
        try exchange(port: port, Array(request.utf8), halfClose: halfClose, timeout: timeout)
    }
}

/// Runs curl (at most 120 s) with `arguments`; answers its exit status and standard output.
func curl(_ arguments: [String]) throws -> CLIResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["--max-time", "120"] + arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CLIResult(status: process.terminationStatus, stdout: String(decoding: data, as: UTF8.self), stderr: "")
}
