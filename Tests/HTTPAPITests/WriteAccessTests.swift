import API
import Access
import Foundation
import HTTPAPI
import Hummingbird
import HummingbirdTesting
import SearchEngine
import TestSupport
import Testing

/// Who may write what, through the router: users' tokens own their pins in every wire form (v1, Parse, Udacity),
/// keys act by their scopes, every bad credential is refused on every write route, and the rate limits and the
/// pin cap answer with problems a client can act on.
@Suite struct WriteAccessTests {
    let scratch = ScratchDirectory("poi-write-access")
    let provider: TestIdentityProvider
    static let keys = ["admin": "admin-key-0001", "moderation": "mod-key-0001", "etl": "etl-key-0001"]

    init() throws {
        provider = try TestIdentityProvider(directory: scratch.path)
        let entries = [("admin", "admin"), ("moderation", "pins:write"), ("etl", "import")].map { name, scope in
            #"{"name":"\#(name)","sha256":"\#(KeyRing.hash(Self.keys[name]!))","scopes":["\#(scope)"]}"#
        }
        try Data(#"{"keys":[\#(entries.joined(separator: ","))]}"#.utf8).write(to: URL(fileURLWithPath: scratch.file("keys.json")))
    }

    func app(
        engine: SearchEngine = makeEngine(),
        writeLimits: (rate: Double, burst: Int)? = nil,
        maximumPinsPerUser: Int? = nil
    ) async throws -> some ApplicationProtocol {
        var configuration = ServerConfiguration()
        configuration.authenticator = Authenticator(
            keys: try KeyRing(file: scratch.file("keys.json"), legacyKey: nil),
            tokens: try await TokenVerifier(
                settings: .init(jwksFile: provider.jwksFile, secretFile: provider.secretFile, issuer: provider.issuer, audience: provider.audience)
            )
        )
        configuration.writeLimits = writeLimits
        configuration.maximumPinsPerUser = maximumPinsPerUser
        return buildApplication(configuration: configuration, engine: engine, gazetteer: nil, metrics: testRegistry)
    }

    static func bearer(_ credentials: String) -> HTTPFields { [.authorization: "Bearer \(credentials)", .contentType: "application/json"] }

    /// One wire form of pins: where they are created, and how an answer names the new pin.
    struct Form: CustomStringConvertible, Sendable {
        let base: String
        let body: String
        let moved: String
        let idKey: String
        var description: String { base }
    }

    static let forms = [
        Form(
            base: "/v1/pins",
            body: #"{"uniqueKey":"s1","firstName":"Ada","lastName":"L","mapString":"Helsinki","mediaURL":"","lat":60.17,"lon":24.94}"#,
            moved: #"{"uniqueKey":"s1","firstName":"Ada","lastName":"L","mapString":"Espoo","mediaURL":"","lat":60.2,"lon":24.65}"#,
            idKey: "id"
        ),
        Form(
            base: "/parse/classes/StudentLocation",
            body: #"{"uniqueKey":"s1","firstName":"Ada","lastName":"L","mapString":"Helsinki","mediaURL":"","latitude":60.17,"longitude":24.94}"#,
            moved: #"{"mapString":"Espoo","latitude":60.2,"longitude":24.65}"#,
            idKey: "objectId"
        ),
        Form(
            base: "/v1/StudentLocation",
            body: #"{"uniqueKey":"s1","firstName":"Ada","lastName":"L","mapString":"Helsinki","mediaURL":"","latitude":60.17,"longitude":24.94}"#,
            moved: #"{"mapString":"Espoo","latitude":60.2,"longitude":24.65}"#,
            idKey: "objectId"
        ),
    ]

    @Test(arguments: forms)
    func usersChangeOnlyTheirOwnPins(_ form: Form) async throws {
        let alice = try await provider.token("alice")
        let bob = try await provider.token("bob", signer: .rsa)
        try await app().test(.router) { client in
            let created = try await client.execute(uri: form.base, method: .post, headers: Self.bearer(alice), body: ByteBuffer(string: form.body))
            #expect(created.status == .created, "\(form): \(String(buffer: created.body))")
            let id = try json(created)[form.idKey] as! String
            let pin = "\(form.base)/\(id)"
            // Another user may neither move nor delete it.
            for method in [HTTPRequest.Method.put, .delete] {
                let refused = try await client.execute(uri: pin, method: method, headers: Self.bearer(bob), body: ByteBuffer(string: form.moved))
                #expect(refused.status == .forbidden, "\(form) \(method) by bob: \(String(buffer: refused.body))")
            }
            // Nor may an import key; the owner and a pins:write key may.
            let importer = try await client.execute(
                uri: pin,
                method: .put,
                headers: Self.bearer(Self.keys["etl"]!),
                body: ByteBuffer(string: form.moved)
            )
            #expect(importer.status == .forbidden, "\(form): \(String(buffer: importer.body))")
            let moved = try await client.execute(uri: pin, method: .put, headers: Self.bearer(alice), body: ByteBuffer(string: form.moved))
            #expect(moved.status == .ok, "\(form): \(String(buffer: moved.body))")
            let moderated = try await client.execute(
                uri: pin,
                method: .put,
                headers: Self.bearer(Self.keys["moderation"]!),
                body: ByteBuffer(string: form.moved)
            )
            #expect(moderated.status == .ok, "\(form): \(String(buffer: moderated.body))")
            let stored = try decode(Answers.Record.self, try await client.execute(uri: "/v1/pins/\(id)", method: .get))
            #expect(stored.lat == 60.2, "\(form): \(stored)")
            // "Is my location already there?": alice's list holds it, bob's does not.
            let mine = try json(try await client.execute(uri: "\(form.base)?owner=me", method: .get, headers: Self.bearer(alice)))
            #expect((mine["results"] as! [[String: Any]]).map { $0[form.idKey] as? String } == [id], "\(form): \(mine)")
            let bobs = try json(try await client.execute(uri: "\(form.base)?owner=me", method: .get, headers: Self.bearer(bob)))
            #expect((bobs["results"] as! [[String: Any]]).isEmpty, "\(form): \(bobs)")
            let deleted = try await client.execute(uri: pin, method: .delete, headers: Self.bearer(alice))
            #expect(deleted.status == (form.base == "/v1/pins" ? .noContent : .ok), "\(form): \(String(buffer: deleted.body))")
        }
    }

    /// Parse clients send a user's session as X-Parse-Session-Token.
    @Test func parseSessionTokensAreUsersTokens() async throws {
        let alice = try await provider.token("alice", signer: .hmac)
        try await app().test(.router) { client in
            let headers: HTTPFields = [.init("X-Parse-Session-Token")!: alice, .contentType: "application/json"]
            let created = try await client.execute(
                uri: Self.forms[1].base,
                method: .post,
                headers: headers,
                body: ByteBuffer(string: Self.forms[1].body)
            )
            #expect(created.status == .created, "\(String(buffer: created.body))")
            let id = try json(created)["objectId"] as! String
            let bob: HTTPFields = [.init("X-Parse-Session-Token")!: try await provider.token("bob"), .contentType: "application/json"]
            let refused = try await client.execute(uri: "\(Self.forms[1].base)/\(id)", method: .delete, headers: bob)
            #expect(refused.status == .forbidden)
            #expect(try json(refused)["code"] as? Int == 119)
        }
    }

    /// Every write route of the route table (so a route added later is covered too), with every bad credential:
    /// refused 401 (Parse forms: 401 with code 209, or 403 "unauthorized" without credentials), nothing written.
    @Test func noWriteRouteTakesABadCredential() async throws {
        let writes = RouteTable.routes.filter { $0.method != .get && $0.operationId != "convertBatch" }
        #expect(writes.count >= 12)
        let bad: [(String, HTTPFields)] = [
            ("none", [.contentType: "application/json"]),
            ("expired", Self.bearer(try await provider.token("alice", expiresIn: -600))),
            ("forged", Self.bearer(try await provider.forgedToken("alice"))),
            ("tampered", Self.bearer(try await provider.tamperedToken("bob", as: "alice"))),
            ("alg none", Self.bearer(provider.unsignedToken("alice"))),
            ("wrong audience", Self.bearer(try await provider.token("alice", audience: "other"))),
            ("unknown kid", Self.bearer(try await provider.token("alice", kid: "rsa-9"))),
            ("wrong key", Self.bearer("not-a-key-00001")),
            ("basic scheme", [.authorization: "Basic YWRtaW46YWRtaW4=", .contentType: "application/json"]),
        ]
        let engine = makeEngine()
        let before = engine.counts
        try await app(engine: engine).test(.router) { client in
            for route in writes {
                let uri = route.path.replacingOccurrences(of: "{id}", with: "p1").replacingOccurrences(of: "{objectId}", with: "p1")
                for (name, headers) in bad {
                    let response = try await client.execute(
                        uri: uri,
                        method: HTTPRequest.Method(route.method.rawValue)!,
                        headers: headers,
                        body: ByteBuffer(string: Self.forms[0].body)
                    )
                    let allowed: Set<UInt16> = route.group == .compatibility ? [401, 403] : [401]
                    #expect(
                        allowed.contains(UInt16(response.status.code)),
                        "\(route) with \(name): \(response.status) \(String(buffer: response.body))"
                    )
                }
            }
        }
        #expect(engine.counts == before, "a refused write changed the records")
    }

    @Test func keysActByTheirScopes() async throws {
        let user = try await provider.token("alice")
        let poi = #"{"name":"Kahvila","category":"food.cafe","lat":60.17,"lon":24.94}"#
        try await app().test(.router) { client in
            for (credentials, status) in [
                (user, HTTPResponse.Status.forbidden), (Self.keys["etl"]!, .forbidden), (Self.keys["moderation"]!, .forbidden),
                (Self.keys["admin"]!, .created),
            ] {
                let response = try await client.execute(
                    uri: "/v1/pois/k1",
                    method: .put,
                    headers: Self.bearer(credentials),
                    body: ByteBuffer(string: poi)
                )
                #expect(response.status == status, "\(String(buffer: response.body))")
            }
            let jsonl = #"{"id":"imp1","name":"Imported","category":"food.cafe","lat":60.1,"lon":24.9}"# + "\n"
            for (credentials, status) in [
                (user, HTTPResponse.Status.forbidden), (Self.keys["moderation"]!, .forbidden), (Self.keys["etl"]!, .accepted),
            ] {
                var headers = Self.bearer(credentials)
                headers[.contentType] = "application/x-ndjson"
                let response = try await client.execute(uri: "/v1/import", method: .post, headers: headers, body: ByteBuffer(string: jsonl))
                #expect(response.status == status, "\(String(buffer: response.body))")
            }
            // The tasks are the importer's business too.
            #expect(try await client.execute(uri: "/v1/tasks", method: .get).status == .unauthorized)
            #expect(try await client.execute(uri: "/v1/tasks", method: .get, headers: Self.bearer(user)).status == .forbidden)
            #expect(try await client.execute(uri: "/v1/tasks", method: .get, headers: Self.bearer(Self.keys["etl"]!)).status == .ok)
            // A key creates pins only with pins:write; those pins have no owner, so no user may change them.
            let keyed = try await client.execute(
                uri: "/v1/pins",
                method: .post,
                headers: Self.bearer(Self.keys["moderation"]!),
                body: ByteBuffer(string: Self.forms[0].body)
            )
            #expect(keyed.status == .created)
            let id = try decode(Answers.Record.self, keyed).id
            #expect(try await client.execute(uri: "/v1/pins/\(id)", method: .delete, headers: Self.bearer(user)).status == .forbidden)
            #expect(
                try await client.execute(
                    uri: "/v1/pins",
                    method: .post,
                    headers: Self.bearer(Self.keys["etl"]!),
                    body: ByteBuffer(string: Self.forms[0].body)
                ).status == .forbidden
            )
        }
    }

    @Test func writesOverTheLimitWaitAndOthersDoNot() async throws {
        let alice = try await provider.token("alice")
        let bob = try await provider.token("bob")
        // One write an hour after a burst of two: however slow the machine, no token comes back during the test.
        try await app(writeLimits: (rate: 1.0 / 3_600, burst: 2)).test(.router) { client in
            for _ in 0..<2 {
                let ok = try await client.execute(
                    uri: "/v1/pins",
                    method: .post,
                    headers: Self.bearer(alice),
                    body: ByteBuffer(string: Self.forms[0].body)
                )
                #expect(ok.status == .created)
            }
            let limited = try await client.execute(
                uri: "/v1/pins",
                method: .post,
                headers: Self.bearer(alice),
                body: ByteBuffer(string: Self.forms[0].body)
            )
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.contentType] == "application/problem+json")
            let wait = Int(limited.headers[.retryAfter] ?? "")
            #expect(wait != nil && (3_000...3_600).contains(wait!), "Retry-After: \(String(describing: limited.headers[.retryAfter]))")
            #expect(String(buffer: limited.body).contains("too many writes"))
            // The Parse form answers Parse's code for it.
            let parse = try await client.execute(
                uri: Self.forms[1].base,
                method: .post,
                headers: Self.bearer(alice),
                body: ByteBuffer(string: Self.forms[1].body)
            )
            #expect(parse.status == .tooManyRequests)
            #expect(try json(parse)["code"] as? Int == 155)
            // Another user, reads, and keys are not limited.
            #expect(
                try await client.execute(uri: "/v1/pins", method: .post, headers: Self.bearer(bob), body: ByteBuffer(string: Self.forms[0].body))
                    .status == .created
            )
            for _ in 0..<20 { #expect(try await client.execute(uri: "/v1/pins?owner=me", method: .get, headers: Self.bearer(alice)).status == .ok) }
            for _ in 0..<5 {
                let keyed = try await client.execute(
                    uri: "/v1/pins",
                    method: .post,
                    headers: Self.bearer(Self.keys["admin"]!),
                    body: ByteBuffer(string: Self.forms[0].body)
                )
                #expect(keyed.status == .created)
            }
        }
    }

    @Test func aUserHasAtMostTheirCapOfPins() async throws {
        let alice = try await provider.token("alice")
        try await app(maximumPinsPerUser: 2).test(.router) { client in
            for _ in 0..<2 {
                #expect(
                    try await client.execute(
                        uri: "/v1/pins",
                        method: .post,
                        headers: Self.bearer(alice),
                        body: ByteBuffer(string: Self.forms[0].body)
                    ).status == .created
                )
            }
            let over = try await client.execute(
                uri: "/v1/pins",
                method: .post,
                headers: Self.bearer(alice),
                body: ByteBuffer(string: Self.forms[0].body)
            )
            #expect(over.status == .forbidden)
            #expect(String(buffer: over.body).contains("the most one user may have"))
        }
    }

    @Test func ownerMeNeedsAUserToken() async throws {
        try await app().test(.router) { client in
            let anonymous = try await client.execute(uri: "/v1/pins?owner=me", method: .get)
            #expect(anonymous.status == .unauthorized)
            #expect(try await client.execute(uri: "/v1/pins?owner=alice", method: .get).status == .badRequest)
            // A key's "own" pins are those no user owns (placed by keys).
            let keyed = try await client.execute(
                uri: "/v1/pins",
                method: .post,
                headers: Self.bearer(Self.keys["moderation"]!),
                body: ByteBuffer(string: Self.forms[0].body)
            )
            let alice = try await provider.token("alice")
            _ = try await client.execute(uri: "/v1/pins", method: .post, headers: Self.bearer(alice), body: ByteBuffer(string: Self.forms[0].body))
            let byKeys = try decode(
                Answers.Page.self,
                try await client.execute(uri: "/v1/pins?owner=me", method: .get, headers: Self.bearer(Self.keys["admin"]!))
            )
            #expect(byKeys.ids == [try decode(Answers.Record.self, keyed).id])
            // Reads without owner=me need nothing.
            #expect(try await client.execute(uri: "/v1/pins", method: .get).status == .ok)
        }
    }

    /// A pin answer tells its reader whether the pin is theirs — true only for the owner's valid token, in every
    /// read and write answer of every form — and never names the owner to anyone.
    @Test(arguments: forms)
    func pinsSayWhetherTheReaderOwnsThem(_ form: Form) async throws {
        let alice = try await provider.token("alice-subject")
        try await app().test(.router) { client in
            let created = try await client.execute(uri: form.base, method: .post, headers: Self.bearer(alice), body: ByteBuffer(string: form.body))
            if form.base == "/v1/pins" { #expect(try json(created)["owned"] as? Bool == true, "\(form): \(String(buffer: created.body))") }
            let id = try json(created)[form.idKey] as! String
            let keyed = try await client.execute(
                uri: form.base,
                method: .post,
                headers: Self.bearer(Self.keys["moderation"]!),
                body: ByteBuffer(string: form.body)
            )
            let keyedID = try json(keyed)[form.idKey] as! String
            let parse = form.base != "/v1/pins"
            func headers(_ credentials: String?) -> HTTPFields {
                guard let credentials else { return [:] }
                return parse ? [.init("X-Parse-Session-Token")!: credentials] : [.authorization: "Bearer \(credentials)"]
            }
            // Each reader, and whether alice's pin is theirs: only alice's own valid token says yes.
            let readers: [(String, String?, Bool)] = [
                ("alice", alice, true),
                ("alice, RS256", try await provider.token("alice-subject", signer: .rsa), true),
                ("bob", try await provider.token("bob"), false),
                ("alice, expired", try await provider.token("alice-subject", expiresIn: -3_600), false),
                ("alice, forged", try await provider.forgedToken("alice-subject"), false),
                ("a pins:write key", Self.keys["moderation"]!, false),
                ("Parse's REST key", "QuWThTdiRmTux3YaDseUSEpUKo7aBYM737yKd4gY", false),
                ("nobody", nil, false),
            ]
            for (name, credentials, owns) in readers {
                let one = try await client.execute(uri: "\(form.base)/\(id)", method: .get, headers: headers(credentials))
                #expect(one.status == .ok, "\(form) \(name): \(String(buffer: one.body))")
                #expect(try json(one)["owned"] as? Bool == owns, "\(form) \(name): \(String(buffer: one.body))")
                #expect(!String(buffer: one.body).contains("alice-subject"), "\(form) \(name) sees the owner: \(String(buffer: one.body))")
                let list = try await client.execute(uri: form.base, method: .get, headers: headers(credentials))
                #expect(list.status == .ok, "\(form) \(name): \(String(buffer: list.body))")
                let owned = Dictionary(
                    uniqueKeysWithValues: (try json(list)["results"] as! [[String: Any]]).map { ($0[form.idKey] as! String, $0["owned"] as? Bool) }
                )
                #expect(owned == [id: owns, keyedID: false], "\(form) \(name): \(owned)")
            }
            // The answer to alice's move says it is hers; a moderator's move of it does not.
            if !parse {
                let moved = try await client.execute(
                    uri: "\(form.base)/\(id)",
                    method: .put,
                    headers: Self.bearer(alice),
                    body: ByteBuffer(string: form.moved)
                )
                #expect(try json(moved)["owned"] as? Bool == true)
                let moderated = try await client.execute(
                    uri: "\(form.base)/\(id)",
                    method: .put,
                    headers: Self.bearer(Self.keys["moderation"]!),
                    body: ByteBuffer(string: form.moved)
                )
                #expect(try json(moderated)["owned"] as? Bool == false)
            }
        }
    }
}
