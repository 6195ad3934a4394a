import Access
import HTTPServer
import Hummingbird
import NIOCore
import SearchEngine

/// The rule every write route applies before it writes: who sent it (an API key of the keys file, a user's token,
/// or nobody on an open server), then the rate limits. What the principal may do is `WritePolicy`'s.
///
/// The byte lane asks the same rule first (`refusal`), for the routes registered with `RouteRegistrar.write`: what
/// it refuses never reaches the router, and what it lets through is charged here.
struct WriteAccess: Sendable {
    let authenticator: Authenticator
    /// Write limits per user and per client address; nil: none.
    let limiter: RateLimiter?
    /// The most pins one user may have; nil: no cap.
    let maximumPinsPerUser: Int?

    init(_ configuration: ServerConfiguration) {
        authenticator = configuration.authenticator
        limiter = configuration.writeLimits.map { RateLimiter(rate: $0.rate, burst: $0.burst) }
        maximumPinsPerUser = configuration.maximumPinsPerUser
    }

    /// The request's principal, with its write charged to the rate limits: a user's bucket, or the client
    /// address's for writers without a token (keys are not limited: they are the operator's own tools). `authorization` replaces the request's header (Parse's REST key).
    func principal(_ request: Request, _ context: AppRequestContext, authorization: String? = nil) async throws(AccessError) -> Principal {
        let principal = try await authenticator.principal(authorization: authorization ?? request.headers[.authorization])
        context.caller.set(principal)
        guard let limiter, let bucket = Self.bucket(principal, address: context.remoteAddress?.ipAddress) else { return principal }
        if let wait = limiter.take([bucket]) { throw limited(limiter, wait: wait) }
        return principal
    }

    /// What `principal` would throw for a write from `client` with the `Authorization` value `authorization`, decided
    /// without waiting and charging nothing: the byte lane's write screen. Nil when the write may go on, or when only
    /// the router can tell (a token not verified yet).
    func refusal(authorization: Substring?, client: String?) -> WriteScreen.Refusal? {
        let principal: Principal
        switch authenticator.proof(authorization: authorization) {
        case .unverifiedToken: return nil
        case .refused(let error): return WriteScreen.Refusal(problem: Problem.of(error)!, caller: nil)
        case .principal(let proven): principal = proven
        }
        guard let limiter, let bucket = Self.bucket(principal, address: client), let wait = limiter.wait([bucket]) else { return nil }
        return WriteScreen.Refusal(problem: Problem.of(limited(limiter, wait: wait))!, caller: principal.caller)
    }

    /// The rate-limit bucket of a principal's writes: a user is limited by who they are (many users may share one
    /// address behind a NAT or a proxy); a writer without an identity, by its address; nil for a key (not limited).
    private static func bucket(_ principal: Principal, address: String?) -> String? {
        switch principal {
        case .key: return nil
        case .user(let subject): return "user:" + subject
        case .anonymous: return address.map { "address:" + $0 }
        }
    }

    private func limited(_ limiter: RateLimiter, wait: Int) -> AccessError {
        .limited(
            "too many writes: at most \(Self.format(limiter.rate)) a second (bursts of \(Int(limiter.burst))) per user, or per address without a token; retry in \(wait) s",
            retryAfter: wait
        )
    }

    private static func format(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }
}
