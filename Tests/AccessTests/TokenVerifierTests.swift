import Foundation
import TestSupport
import Testing

@testable import Access

/// Users' tokens against fresh keys made in the test: what verifies, and every token that must not.
@Suite struct TokenVerifierTests {
    let scratch = ScratchDirectory("poi-access")
    let provider: TestIdentityProvider
    let verifier: TokenVerifier

    init() async throws {
        provider = try TestIdentityProvider(directory: scratch.path)
        verifier = try await TokenVerifier(
            settings: .init(
                jwksFile: provider.jwksFile,
                secretFile: provider.secretFile,
                issuer: provider.issuer,
                audience: provider.audience,
                leeway: 30
            )
        )
    }

    @Test(arguments: [TestIdentityProvider.Signer.ec, .rsa, .hmac])
    func aValidTokenNamesItsUser(_ signer: TestIdentityProvider.Signer) async throws {
        let subject = try await verifier.verify(try await provider.token("student-1", signer: signer))
        #expect(subject == "student-1")
    }

    @Test func withinTheLeewayAnExpiredTokenStillCounts() async throws {
        #expect(try await verifier.verify(try await provider.token("u", expiresIn: -10)) == "u")
        #expect(try await verifier.verify(try await provider.token("u", notBefore: 10)) == "u")
    }

    /// Each bad token, and the words its refusal must contain.
    @Test func badTokensAreRefusedWithTheirReason() async throws {
        let cases: [(String, String, String)] = [
            ("expired", try await provider.token("u", expiresIn: -120), "expired"),
            ("not yet valid", try await provider.token("u", notBefore: 600), "not valid yet"),
            ("no expiry", try await provider.token("u", expiresIn: nil), "no expiry"),
            ("wrong audience", try await provider.token("u", audience: "another-app"), "audience"),
            ("wrong issuer", try await provider.token("u", issuer: "https://evil.example"), "issuer"),
            ("no subject", try await provider.token(nil), "names no user"),
            ("empty subject", try await provider.token(""), "names no user"),
            ("forged signature", try await provider.forgedToken("u"), "signature"),
            ("tampered payload", try await provider.tamperedToken("u", as: "admin"), "signature"),
            ("alg none", provider.unsignedToken("u"), "alg: none"),
            ("unknown kid", try await provider.token("u", kid: "ec-2"), "not in the key set"),
            ("garbage", "abc.def.ghi", "malformed"),
        ]
        for (name, token, reason) in cases {
            do {
                let subject = try await verifier.verify(token)
                Issue.record("\(name): accepted as \(subject)")
            } catch {
                guard case .unauthenticated(let message) = error else {
                    Issue.record("\(name): \(error)")
                    continue
                }
                #expect(message.contains(reason), "\(name): \(message)")
            }
        }
    }

    /// A token signed with the RSA key's public half as an HMAC secret (the classic algorithm confusion) is refused.
    @Test func hmacWithAPublishedKeyIdIsNotTriedAgainstTheJWKS() async throws {
        let onlyPublished = try await TokenVerifier(settings: .init(jwksFile: provider.jwksFile, audience: provider.audience))
        let hmacToken = try await provider.token("u", signer: .hmac)
        await #expect(throws: AccessError.self) { try await onlyPublished.verify(hmacToken) }
        let onlySecret = try await TokenVerifier(settings: .init(secretFile: provider.secretFile))
        let ecToken = try await provider.token("u")
        await #expect(throws: AccessError.self) { try await onlySecret.verify(ecToken) }
    }

    @Test func badKeyFilesAreNamed() async throws {
        let empty = scratch.file("empty.json")
        try Data(#"{"keys":[]}"#.utf8).write(to: URL(fileURLWithPath: empty))
        await #expect { try await TokenVerifier(settings: .init(jwksFile: empty)) } throws: { "\($0)".contains("no keys") }
        let short = scratch.file("short.secret")
        try Data("too-short".utf8).write(to: URL(fileURLWithPath: short))
        await #expect { try await TokenVerifier(settings: .init(secretFile: short)) } throws: { "\($0)".contains("at least 32 bytes") }
        await #expect { try await TokenVerifier(settings: .init(jwksFile: scratch.file("missing.json"))) } throws: { "\($0)".contains("cannot read") }
    }
}

@Suite struct KeyRingTests {
    let scratch = ScratchDirectory("poi-keys")

    func write(_ text: String, to file: String) throws { try Data(text.utf8).write(to: URL(fileURLWithPath: file)) }

    @Test func keysHaveScopesAndReloadWithoutARestart() throws {
        let file = scratch.file("keys.json")
        let (ops, moderation) = ("ops-key-123456", "mod-key-123456")
        try write(#"{"keys":[{"name":"ops","sha256":"\#(KeyRing.hash(ops))","scopes":["admin"]}]}"#, to: file)
        let ring = try KeyRing(file: file, legacyKey: "legacy-key-1")
        #expect(ring.entry(forKey: ops) == .init(name: "ops", scopes: [.admin]))
        #expect(ring.entry(forKey: "legacy-key-1") == .init(name: "api-key", scopes: [.admin]))
        #expect(ring.entry(forKey: moderation) == nil)
        #expect(ring.entry(forKey: ops + "x") == nil)

        // Rotation: the old key goes, a new one comes, the legacy key stays.
        try write(#"{"keys":[{"name":"moderation","sha256":"\#(KeyRing.hash(moderation).uppercased())","scopes":["pins:write"]}]}"#, to: file)
        try ring.reload()
        #expect(ring.entry(forKey: ops) == nil)
        #expect(ring.entry(forKey: moderation) == .init(name: "moderation", scopes: [.writePins]))
        #expect(ring.entry(forKey: "legacy-key-1") != nil)

        // A broken file is refused and the keys in force stay.
        try write(#"{"keys":[{"name":"x","sha256":"abc","scopes":["admin"]}]}"#, to: file)
        #expect { try ring.reload() } throws: { "\($0)".contains("sha256 must be 64 hexadecimal digits") }
        #expect(ring.entry(forKey: moderation) != nil)
        try write(#"{"keys":[{"name":"x","sha256":"\#(KeyRing.hash("k"))","scopes":["root"]}]}"#, to: file)
        #expect { try ring.reload() } throws: { "\($0)".contains("unknown scope \"root\"") }
    }

    @Test func theHashIsSHA256() {
        // FIPS 180-2's test vector for "abc".
        #expect(KeyRing.hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}

@Suite struct WritePolicyTests {
    let admin = Principal.key(name: "ops", scopes: [.admin])
    let moderator = Principal.key(name: "mod", scopes: [.writePins])
    let importer = Principal.key(name: "etl", scopes: [.importRecords])

    @Test func scopesDecide() throws {
        try WritePolicy.importRecords(admin)
        try WritePolicy.importRecords(importer)
        #expect(throws: AccessError.self) { try WritePolicy.importRecords(moderator) }
        #expect(throws: AccessError.self) { try WritePolicy.importRecords(.user("u")) }
        try WritePolicy.writePOI(admin)
        #expect(throws: AccessError.self) { try WritePolicy.writePOI(importer) }
        #expect(throws: AccessError.self) { try WritePolicy.writePOI(.user("u")) }
        #expect(try WritePolicy.createPin(.user("u")) == "u")
        #expect(try WritePolicy.createPin(moderator) == nil)
        #expect(throws: AccessError.self) { try WritePolicy.createPin(importer) }
    }

    @Test func onlyTheOwnerOrAPinsKeyChangesAPin() throws {
        try WritePolicy.changePin(.user("u"), owner: "u")
        #expect(throws: AccessError.forbidden("this pin belongs to someone else: only its owner may change it")) {
            try WritePolicy.changePin(.user("v"), owner: "u")
        }
        #expect(throws: AccessError.self) { try WritePolicy.changePin(.user("u"), owner: nil) }
        try WritePolicy.changePin(moderator, owner: "u")
        try WritePolicy.changePin(admin, owner: nil)
        #expect(throws: AccessError.self) { try WritePolicy.changePin(importer, owner: "u") }
    }
}

@Suite struct RateLimiterTests {
    @Test func aBucketEmptiesAndRefills() {
        let limiter = RateLimiter(rate: 2, burst: 3)
        let start = ContinuousClock.now
        for _ in 0..<3 { #expect(limiter.take(["user:a"], now: start) == nil) }
        #expect(limiter.take(["user:a"], now: start) == 1)
        // Another user is not affected.
        #expect(limiter.take(["user:b"], now: start) == nil)
        // Half a second later one token (rate 2/s) is back.
        #expect(limiter.take(["user:a"], now: start + .milliseconds(500)) == nil)
        #expect(limiter.take(["user:a"], now: start + .milliseconds(500)) != nil)
        // After the whole burst period, the whole burst.
        for _ in 0..<3 { #expect(limiter.take(["user:a"], now: start + .seconds(3)) == nil) }
    }

    @Test func allBucketsOrNone() {
        let limiter = RateLimiter(rate: 1, burst: 1)
        let now = ContinuousClock.now
        #expect(limiter.take(["address:10.0.0.1"], now: now) == nil)
        // The user has a token, the address none: refused, and the user's token is not spent.
        #expect(limiter.take(["user:a", "address:10.0.0.1"], now: now) == 1)
        #expect(limiter.take(["user:a"], now: now) == nil)
    }

    @Test func theTableStaysBounded() {
        let limiter = RateLimiter(rate: 1_000, burst: 1, maximumEntries: 100)
        let now = ContinuousClock.now
        for i in 0..<1_000 { _ = limiter.take(["user:\(i)"], now: now + .seconds(i)) }
        #expect(limiter.entries <= 101)
    }
}

extension TokenVerifierTests {
    /// A token verified once is remembered, but its expiry still counts on every use.
    @Test func aRememberedTokenStillExpires() async throws {
        let token = try await provider.token("u", expiresIn: 120)
        #expect(try await verifier.verify(token) == "u")
        #expect(try await verifier.verify(token, now: Date().addingTimeInterval(60)) == "u")
        await #expect(throws: AccessError.unauthenticated("the token has expired")) {
            try await verifier.verify(token, now: Date().addingTimeInterval(600))
        }
    }
}
