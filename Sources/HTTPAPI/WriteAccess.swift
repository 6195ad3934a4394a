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

    /// The request's principal, with its write charged to the rate limits (keys are not limited: they are the
    /// operator's own tools). `authorization` replaces the request's header (Parse's REST key).
    func principal(_ request: Request, _ context: AppRequestContext, authorization: String? = nil) async throws(AccessError) -> Principal {
        let principal = try await authenticator.principal(authorization: authorization ?? request.headers[.authorization])
        guard let limiter else { return principal }
        var buckets: [String] = []
        switch principal {
        case .key: return principal
        case .user(let subject): buckets.append("user:" + subject)
        case .anonymous: break
        }
        if let address = context.remoteAddress?.ipAddress { buckets.append("address:" + address) }
        if let wait = limiter.take(buckets) {
            throw .limited("too many writes: at most \(Self.format(limiter.rate)) a second (bursts of \(Int(limiter.burst))) per user and per address; retry in \(wait) s", retryAfter: wait)
        }
        return principal
    }

    private static func format(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }
}
