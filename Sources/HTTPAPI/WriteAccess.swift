import Access
import Hummingbird
import NIOCore
import SearchEngine

/// The rule every write route applies before it writes: who sent it (an API key of the keys file, a user's token,
/// or nobody on an open server), then the rate limits. What the principal may do is `WritePolicy`'s.
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
        guard let limiter else { return principal }
        // A user is limited by who they are (many users may share one address behind a NAT or a proxy); a writer
        // without an identity, by its address.
        let bucket: String
        switch principal {
        case .key: return principal
        case .user(let subject): bucket = "user:" + subject
        case .anonymous:
            guard let address = context.remoteAddress?.ipAddress else { return principal }
            bucket = "address:" + address
        }
        if let wait = limiter.take([bucket]) {
            throw .limited(
                "too many writes: at most \(Self.format(limiter.rate)) a second (bursts of \(Int(limiter.burst))) per user, or per address without a token; retry in \(wait) s",
                retryAfter: wait
            )
        }
        return principal
    }

    private static func format(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }
}
