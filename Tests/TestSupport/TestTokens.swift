import CryptoExtras
import Foundation
import JWTKit

/// An identity provider made fresh for a test: an ES256 and an RS256 signing key published as a JWKS file, and an
/// HS256 secret, with tokens signed by them — valid ones, and every kind of bad one the server must refuse.
public struct TestIdentityProvider: Sendable {
    public let jwksFile: String
    public let secretFile: String
    public let issuer = "https://id.example.test"
    public let audience = "poi-test"

    private let ecKey: ES256PrivateKey
    private let rsaKey: JWTKit.Insecure.RSA.PrivateKey
    private let secret: String
    /// The key ids' suffix: `ec-1` and `rsa-1` by default.
    public let generation: String
    /// The public keys as JWK objects, to publish in a key set of the test's making (a rotation).
    public let publishedKeys: [[String: String]]

    /// Writes the JWKS and the secret into `directory` (`jwks.json`, or `jwks-GENERATION.json` for another
    /// generation of keys, whose key ids end in it).
    public init(directory: String, generation: String = "1") throws {
        self.generation = generation
        ecKey = ES256PrivateKey()
        rsaKey = try JWTKit.Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
        secret = (0..<48).map { _ in String(UInt8.random(in: 97...122), radix: 36) }.joined()
        let (x, y) = ecKey.publicKey.parameters!
        let (modulus, exponent) = try rsaKey.publicKey.getKeyPrimitives()
        publishedKeys = [
            ["kty": "EC", "crv": "P-256", "kid": "ec-\(generation)", "alg": "ES256", "use": "sig", "x": x, "y": y],
            ["kty": "RSA", "kid": "rsa-\(generation)", "alg": "RS256", "use": "sig", "n": Self.base64URL(modulus), "e": Self.base64URL(exponent)],
        ]
        let jwks: [String: Any] = ["keys": publishedKeys]
        jwksFile = directory + (generation == "1" ? "/jwks.json" : "/jwks-\(generation).json")
        secretFile = directory + (generation == "1" ? "/hs256.secret" : "/hs256-\(generation).secret")
        try JSONSerialization.data(withJSONObject: jwks).write(to: URL(fileURLWithPath: jwksFile))
        try Data((secret + "\n").utf8).write(to: URL(fileURLWithPath: secretFile))
    }

    /// The claims of a test token.
    public struct Claims: JWTPayload {
        public var sub: SubjectClaim?
        public var exp: ExpirationClaim?
        public var nbf: NotBeforeClaim?
        public var iss: IssuerClaim?
        public var aud: AudienceClaim?

        public func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    public enum Signer: Sendable { case ec, rsa, hmac }

    /// A token for `subject`, valid for an hour unless told otherwise.
    public func token(
        _ subject: String?,
        signer: Signer = .ec,
        expiresIn: TimeInterval? = 3_600,
        notBefore: TimeInterval? = nil,
        issuer: String? = nil,
        audience: String? = nil,
        kid: String? = nil
    ) async throws -> String {
        let now = Date()
        let claims = Claims(
            sub: subject.map { SubjectClaim(value: $0) },
            exp: expiresIn.map { ExpirationClaim(value: now.addingTimeInterval($0)) },
            nbf: notBefore.map { NotBeforeClaim(value: now.addingTimeInterval($0)) },
            iss: IssuerClaim(value: issuer ?? self.issuer),
            aud: AudienceClaim(value: [audience ?? self.audience])
        )
        let keys = JWTKeyCollection()
        switch signer {
        case .ec:
            await keys.add(ecdsa: ecKey, kid: JWKIdentifier(string: kid ?? "ec-\(generation)"))
            return try await keys.sign(claims, kid: JWKIdentifier(string: kid ?? "ec-\(generation)"))
        case .rsa:
            await keys.add(rsa: rsaKey, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid ?? "rsa-\(generation)"))
            return try await keys.sign(claims, kid: JWKIdentifier(string: kid ?? "rsa-\(generation)"))
        case .hmac:
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
            return try await keys.sign(claims)
        }
    }

    /// A token signed by a key the provider never published (a forger's), under a published key id.
    public func forgedToken(_ subject: String) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: ES256PrivateKey(), kid: "ec-1")
        let claims = Claims(
            sub: SubjectClaim(value: subject),
            exp: ExpirationClaim(value: Date().addingTimeInterval(3_600)),
            iss: IssuerClaim(value: issuer),
            aud: AudienceClaim(value: [audience])
        )
        return try await keys.sign(claims, kid: "ec-1")
    }

    /// A valid token with its payload swapped for another user's (the signature no longer matches).
    public func tamperedToken(_ subject: String, as other: String) async throws -> String {
        let parts = try await token(subject).split(separator: ".")
        let claims = try await token(other).split(separator: ".")
        return "\(parts[0]).\(claims[1]).\(parts[2])"
    }

    /// An unsigned token (`alg: none`) claiming to be `subject`.
    public func unsignedToken(_ subject: String) -> String {
        let header = Self.base64URL(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))
        let exp = Int(Date().addingTimeInterval(3_600).timeIntervalSince1970)
        let payload = Self.base64URL(Data(#"{"sub":"\#(subject)","exp":\#(exp),"iss":"\#(issuer)","aud":"\#(audience)"}"#.utf8))
        return "\(header).\(payload)."
    }

    /// A key set of the keys of `providers`, as a provider publishes it after a rotation.
    public static func keySet(_ providers: [TestIdentityProvider]) -> Data {
        try! JSONSerialization.data(withJSONObject: ["keys": providers.flatMap(\.publishedKeys)], options: [.sortedKeys])
    }

    public static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
            of: "=",
            with: ""
        )
    }
}
