import Foundation

/// Certificates for TLS tests, made by openssl (scripts/setup.sh installs it): a certificate authority and a server
/// certificate it signs, for the names given (by default 127.0.0.1 and localhost).
public enum TestCertificates {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// A certificate authority named `name` and a server certificate signed by it, as PEM files in `scratch`.
    public static func make(
        _ name: String,
        in scratch: ScratchDirectory,
        subjectAltNames: String = "IP:127.0.0.1,DNS:localhost"
    ) throws -> (ca: String, certificate: String, key: String) {
        let (ca, caKey) = (scratch.file("\(name)-ca.pem"), scratch.file("\(name)-ca.key"))
        let (certificate, key, request) = (scratch.file("\(name)-server.pem"), scratch.file("\(name)-server.key"), scratch.file("\(name).csr"))
        let extensions = scratch.file("\(name).ext")
        try Data("subjectAltName=\(subjectAltNames)\n".utf8).write(to: URL(fileURLWithPath: extensions))
        let newKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try openssl(["req", "-x509"] + newKey + ["-keyout", caKey, "-out", ca, "-days", "2", "-subj", "/CN=\(name) test CA"])
        try openssl(["req"] + newKey + ["-keyout", key, "-out", request, "-subj", "/CN=\(name) test server"])
        try openssl([
            "x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out", certificate, "-days", "2", "-extfile", extensions,
        ])
        return (ca, certificate, key)
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "openssl \(arguments.joined(separator: " ")) failed: \(String(decoding: message, as: UTF8.self))")
        }
    }
}
