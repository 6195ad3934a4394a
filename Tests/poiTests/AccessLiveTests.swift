import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// HTTPS and key rotation on a real socket: curl as the client, openssl making the certificates.
extension LiveTests {
    @Suite struct AccessLiveTests {
        let scratch = ScratchDirectory("poi-access-live")

        func run(_ executable: String, _ arguments: [String]) throws -> Int32 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }

        func certificates(_ name: String) throws -> (ca: String, certificate: String, key: String) {
            try TestCertificates.make(name, in: scratch)
        }

        func emptyDatabase() throws -> String { try CLI.emptyDatabase(at: scratch.file("access.sqlite")) }

        /// HTTPS with a generated certificate: a client trusting its CA reads and writes; one trusting another CA is
        /// refused at the handshake; plain HTTP on the TLS port gets no answer.
        @Test func httpsServesWithAGeneratedCertificate() throws {
            let (ca, certificate, key) = try certificates("good")
            let (otherCA, _, _) = try certificates("other")
            let server = try LiveServer(arguments: [
                "--db", try emptyDatabase(), "--tls-cert", certificate, "--tls-key", key, "--api-key", "tls-key-123",
            ])
            defer { server.stop() }
            #expect(server.base.hasPrefix("https://"))
            let health = try curl(["-s", "-w", "\n%{http_code}", "--cacert", ca, "\(server.base)/health"])
            #expect(health.status == 0 && health.stdout.hasSuffix("\n200"), "curl \(health.status): \(health.stdout)\n\(server.stderr)")
            let created = try curl([
                "-s", "-w", "\n%{http_code}", "--cacert", ca, "-X", "POST", "\(server.base)/v1/pins", "-H", "Authorization: Bearer tls-key-123",
                "-H", "Content-Type: application/json", "-d",
                #"{"uniqueKey":"u","firstName":"Ada","lastName":"L","mapString":"x","mediaURL":"","lat":1,"lon":2}"#,
            ])
            #expect(created.stdout.hasSuffix("\n201"), "\(created.stdout)")
            let nearby = try curl(["-s", "-w", "\n%{http_code}", "--cacert", ca, "\(server.base)/v1/nearby?lat=1&lon=2&kind=pin"])
            #expect(nearby.stdout.contains("\"firstName\":\"Ada\"") && nearby.stdout.hasSuffix("\n200"), "\(nearby.stdout)")
            // curl's exit 60: the peer's certificate is not trusted.
            let untrusted = try curl(["-s", "--cacert", otherCA, "\(server.base)/health"])
            #expect(untrusted.status == 60, "curl with another CA: exit \(untrusted.status)")
            let plain = try curl(["-s", "-w", "%{http_code}", "http://127.0.0.1:\(server.port)/health"])
            #expect(!plain.stdout.hasSuffix("200"), "plain HTTP answered on the TLS port: \(plain.stdout)")
        }

        /// Keys rotate on SIGHUP without a restart; a broken keys file leaves the keys in force.
        /// `--auth-jwks https://…`: a token signed with a key the provider publishes after the server started is
        /// accepted without a restart, and `/health` says where the keys come from and whether the provider answers.
        @Test func keysPublishedAfterStartAreAcceptedWithoutARestart() async throws {
            let (ca, certificate, key) = try certificates("idp")
            let site = scratch.file("idp-site")
            try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: true)
            let provider = try TestKeyServer(directory: site, certificate: certificate, key: key)
            let (first, second) = (
                try TestIdentityProvider(directory: scratch.path, generation: "first"),
                try TestIdentityProvider(directory: scratch.path, generation: "second")
            )
            try provider.publish("jwks.json", TestIdentityProvider.keySet([first]))
            let server = try LiveServer(arguments: [
                "--db", try emptyDatabase(), "--auth-jwks", provider.base + "/jwks.json", "--auth-ca-file", ca, "--auth-audience", first.audience,
            ])
            defer { server.stop() }
            let pin = #"{"uniqueKey":"u","firstName":"Ada","lastName":"L","mapString":"x","mediaURL":"","lat":1,"lon":2}"#
            func create(_ token: String) throws -> String {
                try curl([
                    "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "\(server.base)/v1/pins", "-H", "Authorization: Bearer \(token)",
                    "-H", "Content-Type: application/json", "-d", pin,
                ]).stdout
            }
            #expect(try create(try await first.token("alice")) == "201", "\(server.stderr)")
            // The provider rotates: the new key is published, and its tokens are taken at once.
            try provider.publish("jwks.json", TestIdentityProvider.keySet([first, second]))
            #expect(try create(try await second.token("bob", signer: .rsa)) == "201", "\(server.stderr)")
            // A key never published is refused, and does not make the server ask again within the minute.
            let forger = try TestIdentityProvider(directory: scratch.path, generation: "forger")
            #expect(try create(try await forger.token("mallory")) == "401")
            #expect(provider.requests("/jwks.json") == 2, "fetches: \(provider.requests("/jwks.json"))")
            let health = try JSONSerialization.jsonObject(with: Data(try curl(["-s", "\(server.base)/health"]).stdout.utf8)) as? [String: Any]
            let auth = try #require(health?["auth"] as? [String: Any], "\(String(describing: health))")
            #expect(
                auth["source"] as? String == provider.base + "/jwks.json" && auth["keys"] as? Int == 4 && auth["providerReachable"] as? Bool == true
            )
            let metrics = try curl(["-s", "\(server.base)/metrics"]).stdout
            #expect(metrics.contains("poi_auth_provider_reachable 1") && metrics.contains("poi_auth_keys 4"), "\(metrics)")
        }

        @Test func keysRotateOnSIGHUP() throws {
            let keys = scratch.file("keys.json")
            func writeKeys(_ entries: [(String, String)]) throws {
                let text = entries.map { #"{"name":"\#($0.0)","sha256":"\#(sha256($0.1))","scopes":["admin"]}"# }.joined(separator: ",")
                try Data(#"{"keys":[\#(text)]}"#.utf8).write(to: URL(fileURLWithPath: keys))
            }
            try writeKeys([("first", "first-key-0001")])
            let server = try LiveServer(arguments: ["--db", try emptyDatabase(), "--keys-file", keys])
            defer { server.stop() }
            func put(_ key: String) throws -> String {
                try curl([
                    "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "PUT", "\(server.base)/v1/pois/k1", "-H", "Authorization: Bearer \(key)",
                    "-H", "Content-Type: application/json", "-d", #"{"name":"K","category":"food.cafe","lat":1,"lon":2}"#,
                ]).stdout
            }
            #expect(try put("first-key-0001") == "201")
            #expect(try put("second-key-001") == "401")
            /// Sends SIGHUP and waits for the server's log line that answers it (the `count`-th such line).
            func hangUp(expecting text: String, count: Int) throws {
                server.send(SIGHUP)
                let started = Date()
                while server.stderr.components(separatedBy: "SIGHUP:").count - 1 < count {
                    guard Date().timeIntervalSince(started) < 120 else {
                        Issue.record("no SIGHUP log line within 120 s; stderr:\n\(server.stderr)")
                        return
                    }
                    Thread.sleep(forTimeInterval: 0.05)
                }
                #expect(server.stderr.components(separatedBy: "SIGHUP:").last?.contains(text) == true, "\(server.stderr)")
            }
            try writeKeys([("second", "second-key-001")])
            try hangUp(expecting: "reloaded 1 keys", count: 1)
            #expect(try put("first-key-0001") == "401")
            #expect(try put("second-key-001") == "200")
            try Data("{not json".utf8).write(to: URL(fileURLWithPath: keys))
            try hangUp(expecting: "keeping the keys in force", count: 2)
            #expect(try put("second-key-001") == "200")
        }

        func sha256(_ key: String) -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
            let (input, output) = (Pipe(), Pipe())
            process.standardInput = input
            process.standardOutput = output
            try! process.run()
            input.fileHandleForWriting.write(Data(key.utf8))
            try! input.fileHandleForWriting.close()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return String(text.prefix(64))
        }
    }
}
