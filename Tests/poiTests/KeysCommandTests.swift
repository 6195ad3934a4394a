import Foundation
import Testing

/// `poi keys`: new keys and their keys-file entries, which hold only the key's hash.
@Suite struct KeysCommandTests {
    @Test func aNewKeyAndItsEntryAgreeWithHash() throws {
        let made = try CLI.run(["keys", "new", "--name", "ops", "--scope", "admin", "pins:write"])
        #expect(made.status == 0, "\(made.stderr)")
        let key = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(key.hasPrefix("poi_") && key.count >= 40, "\(key)")
        let entry = try JSONSerialization.jsonObject(with: Data(made.stderr.utf8)) as! [String: Any]
        #expect(entry["name"] as? String == "ops")
        #expect(entry["scopes"] as? [String] == ["admin", "pins:write"])
        let hash = try #require(entry["sha256"] as? String)
        #expect(hash.count == 64 && !made.stderr.contains(key), "the entry must not hold the key")
        // The same key read from standard input gives the same entry.
        let again = try CLI.run(["keys", "hash", "--name", "ops", "--scope", "admin", "pins:write"], stdin: key + "\n")
        #expect(again.status == 0, "\(again.stderr)")
        #expect((try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])?["sha256"] as? String == hash)
        // Two new keys differ.
        let other = try CLI.run(["keys", "new", "--name", "ops", "--scope", "admin"])
        #expect(other.stdout != made.stdout)
    }

    @Test(arguments: [
        (["keys", "new", "--name", "x", "--scope", "root"], "--scope: unknown scope \"root\""),
        (["keys", "new", "--name", "x"], "--scope must name at least one of"),
    ])
    func badScopesAreUsageErrors(_ arguments: [String], _ fragment: String) throws {
        let result = try CLI.run(arguments)
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(fragment), "\(arguments): \(result.stderr)")
    }

    /// The access options of `poi serve` are checked before anything is opened; each mistake is named.
    @Test(arguments: [
        (["serve", "--tls-cert", "cert.pem"], "--tls-cert and --tls-key must be given together"),
        (["serve", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"], "--tls-cert /nonexistent/cert.pem"),
        (["serve", "--auth-audience", "app"], "--auth-issuer and --auth-audience need --auth-jwks or --auth-hs256-secret-file"),
        (["serve", "--keys-file", "/nonexistent/keys.json"], "cannot read /nonexistent/keys.json"),
        (["serve", "--auth-jwks", "/nonexistent/jwks.json"], "cannot read /nonexistent/jwks.json"),
        (["serve", "--api-key", "k-123456789", "--write-rate", "-1"], "--write-rate must be a positive number"),
        (["serve", "--api-key", "k-123456789", "--max-pins-per-user", "0"], "--max-pins-per-user must be at least 1"),
        (["serve", "--host", "0.0.0.0"], "refusing to listen on 0.0.0.0 without credentials for writes"),
    ])
    func badAccessOptionsAreUsageErrors(_ arguments: [String], _ fragment: String) throws {
        let result = try CLI.run(arguments + ["--port", "0"])
        #expect(result.status == 2, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(fragment), "\(arguments): \(result.stderr)")
    }
}
