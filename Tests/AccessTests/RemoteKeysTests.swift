import Access
import Foundation
import TestSupport
import Testing

/// Keys fetched from the identity provider over HTTPS (a local provider with its own CA): rotation without a restart,
/// the Cache-Control lifetime, refetches on unknown key ids bounded, the provider down, OpenID discovery, and every
/// unusable location named.
@Suite struct RemoteKeysTests {
    let scratch = ScratchDirectory("poi-remote-keys")

    func provider(_ generation: String) throws -> TestIdentityProvider {
        try TestIdentityProvider(directory: scratch.path, generation: generation)
    }

    func server() throws -> (TestKeyServer, ca: String) {
        let (ca, certificate, key) = try TestCertificates.make("idp", in: scratch)
        let root = scratch.file("site")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        return (try TestKeyServer(directory: root, certificate: certificate, key: key), ca)
    }

    /// Polls `condition` until it holds (the background refresh is on its own schedule); the failure names what was
    /// awaited.
    func eventually(_ what: String, patience: TimeInterval = 120, _ condition: () async -> Bool) async throws {
        let start = Date()
        while !(await condition()) {
            guard Date().timeIntervalSince(start) < patience else {
                Issue.record("waited \(Int(patience)) s for \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func accepts(_ verifier: TokenVerifier, _ token: String) async -> Bool {
        (try? await verifier.verify(token)) != nil
    }

    @Test func keysRotateWithoutARestartAndSurviveTheProviderGoingDown() async throws {
        let (server, ca) = try server()
        let (old, new) = (try provider("old"), try provider("new"))
        try server.publish("jwks.json", TestIdentityProvider.keySet([old]))
        try server.publish("cache-control", Data("public, max-age=1".utf8))
        var settings = TokenVerifier.Settings(jwksLocation: .jwks(server.base + "/jwks.json"), caFile: ca, audience: old.audience)
        (settings.minimumRefresh, settings.unknownKeyInterval) = (0.2, 0.2)
        let verifier = try await TokenVerifier(settings: settings)
        #expect(verifier.keyStatus?.keys == 2 && verifier.keyStatus?.reachable == true, "\(String(describing: verifier.keyStatus))")
        let oldToken = try await old.token("alice")
        #expect(try await verifier.verify(oldToken) == "alice")
        // The provider publishes a new key beside the old one: a token signed with it is accepted at once (an
        // unknown key id fetches the set again).
        try server.publish("jwks.json", TestIdentityProvider.keySet([old, new]))
        #expect(try await verifier.verify(try await new.token("bob", signer: .rsa)) == "bob")
        // The old key is withdrawn: once the set's max-age has run out, its tokens are refused — also one verified
        // before, which the cache must not keep valid.
        try server.publish("jwks.json", TestIdentityProvider.keySet([new]))
        try await eventually("the old key's token to be refused") { !(await accepts(verifier, oldToken)) }
        await #expect { try await verifier.verify(oldToken) } throws: { "\($0)".contains("not in the key set") }
        // The provider goes down: the keys in force stay in force, and the status says the provider is unreachable.
        server.stop()
        try await eventually("a failed fetch to be reported") { verifier.keyStatus?.reachable == false }
        #expect(try await verifier.verify(try await new.token("carol")) == "carol")
        let status = try #require(verifier.keyStatus)
        #expect(status.keys == 2 && status.failures >= 1 && status.lastError?.contains(server.base) == true, "\(status)")
    }

    @Test func unknownKeyIdsFetchAtMostOncePerInterval() async throws {
        let (server, ca) = try server()
        let known = try provider("k")
        try server.publish("jwks.json", TestIdentityProvider.keySet([known]))
        try server.publish("cache-control", Data("max-age=86400".utf8))
        var settings = TokenVerifier.Settings(jwksLocation: .jwks(server.base + "/jwks.json"), caFile: ca, audience: known.audience)
        settings.unknownKeyInterval = 3_600
        let verifier = try await TokenVerifier(settings: settings)
        #expect(server.requests("/jwks.json") == 1)
        // A flood of tokens naming made-up key ids: one refetch, then refusals from the keys in force.
        for i in 0..<20 {
            let forged = try await known.token("mallory", kid: "made-up-\(i)")
            await #expect { try await verifier.verify(forged) } throws: { "\($0)".contains("is not in the key set") }
        }
        #expect(server.requests("/jwks.json") == 2, "fetches: \(server.requests("/jwks.json"))")
        #expect(try await verifier.verify(try await known.token("alice")) == "alice")
    }

    @Test func discoveryFindsTheKeySetAndChecksTheIssuer() async throws {
        let (server, ca) = try server()
        let idp = try provider("d")
        let issuer = server.base
        try server.publish("keys/set.json", TestIdentityProvider.keySet([idp]))
        try server.publish(
            ".well-known/openid-configuration",
            Data(
                #"{"issuer":"\#(issuer)","jwks_uri":"\#(server.base)/keys/set.json","id_token_signing_alg_values_supported":["ES256","RS256"]}"#.utf8
            )
        )
        let verifier = try await TokenVerifier(
            settings: .init(jwksLocation: .discovery(issuer: issuer), caFile: ca, issuer: issuer, audience: idp.audience)
        )
        #expect(try await verifier.verify(try await idp.token("alice", issuer: issuer)) == "alice")
        #expect(server.requests("/.well-known/openid-configuration") == 1 && server.requests("/keys/set.json") == 1)
        // A document that names another issuer is not this provider's: no keys, and the reason is said.
        try server.publish(
            ".well-known/openid-configuration",
            Data(#"{"issuer":"https://evil.example","jwks_uri":"\#(server.base)/keys/set.json"}"#.utf8)
        )
        let misled = try await TokenVerifier(settings: .init(jwksLocation: .discovery(issuer: issuer), caFile: ca, issuer: issuer))
        #expect(misled.keyStatus?.keys == 0 && misled.keyStatus?.lastError?.contains("https://evil.example") == true)
        await #expect { try await misled.verify(try await idp.token("alice", issuer: issuer)) } throws: {
            "\($0)".contains("could not be fetched")
        }
    }

    @Test func unusableLocationsAreNamed() async throws {
        let (server, _) = try server()
        let idp = try provider("u")
        try server.publish("jwks.json", TestIdentityProvider.keySet([idp]))
        await #expect { try await TokenVerifier(settings: .init(jwksLocation: .jwks("http://idp.example/jwks.json"))) } throws: {
            "\($0)".contains("must be an https:// URL")
        }
        await #expect { try await TokenVerifier(settings: .init(jwksLocation: .jwks("jwks.json"))) } throws: {
            "\($0)".contains("not an absolute URL")
        }
        // A certificate the server does not trust (no --auth-ca-file): no keys, a TLS failure named with the URL.
        let untrusted = try await TokenVerifier(settings: .init(jwksLocation: .jwks(server.base + "/jwks.json")))
        let status = try #require(untrusted.keyStatus)
        #expect(status.keys == 0 && !status.reachable && status.lastError?.contains(server.base) == true, "\(status)")
        // A set that is not a key set keeps the keys in force and says why.
        let (_, ca) = (0, scratch.file("idp-ca.pem"))
        try server.publish("bad.json", Data(#"{"keys":[{"kty":"oct","kid":"s","k":"c2VjcmV0"}]}"#.utf8))
        let refused = try await TokenVerifier(settings: .init(jwksLocation: .jwks(server.base + "/bad.json"), caFile: ca))
        #expect(refused.keyStatus?.keys == 0 && refused.keyStatus?.lastError?.contains("kty must be RSA, EC or OKP") == true)
    }
}
