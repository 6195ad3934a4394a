import Synchronization

/// Token buckets by name (a user, a client address): each holds up to `burst` tokens and refills at `rate` per
/// second; a write takes one. Buckets that have refilled completely are forgotten when the table grows past
/// `maximumEntries`, so the table's size stays bounded by the clients active within a refill period.
public final class RateLimiter: Sendable {
    public let rate: Double
    public let burst: Double
    let maximumEntries: Int

    struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let buckets = Mutex<[String: Bucket]>([:])

    /// - Parameters:
    ///   - rate: tokens per second (> 0).
    ///   - burst: largest number of writes in a row (≥ 1).
    public init(rate: Double, burst: Int, maximumEntries: Int = 100_000) {
        precondition(rate > 0 && burst >= 1)
        self.rate = rate
        self.burst = Double(burst)
        self.maximumEntries = maximumEntries
    }

    /// Takes a token from each named bucket when all have one (all or none); else answers the whole seconds to wait.
    public func take(_ names: [String], now: ContinuousClock.Instant = .now) -> Int? {
        charge(names, now: now, taking: true)
    }

    /// What `take` would answer, taking nothing: whether a write now would be refused, and the wait it would be told.
    public func wait(_ names: [String], now: ContinuousClock.Instant = .now) -> Int? {
        charge(names, now: now, taking: false)
    }

    private func charge(_ names: [String], now: ContinuousClock.Instant, taking: Bool) -> Int? {
        buckets.withLock { table -> Int? in
            if table.count > maximumEntries { prune(&table, now: now) }
            var wait = 0.0
            var refilled: [(String, Bucket)] = []
            for name in names {
                var bucket = table[name] ?? Bucket(tokens: burst, updated: now)
                let elapsed = now - bucket.updated
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
                bucket.tokens = min(burst, bucket.tokens + max(0, seconds) * rate)
                bucket.updated = now
                if bucket.tokens < 1 { wait = max(wait, (1 - bucket.tokens) / rate) }
                refilled.append((name, bucket))
            }
            if wait > 0 {
                for (name, bucket) in refilled { table[name] = bucket }
                return max(1, Int(wait.rounded(.up)))
            }
            for (name, var bucket) in refilled {
                if taking { bucket.tokens -= 1 }
                table[name] = bucket
            }
            return nil
        }
    }

    /// How many buckets are kept.
    var entries: Int { buckets.withLock { $0.count } }

    private func prune(_ table: inout [String: Bucket], now: ContinuousClock.Instant) {
        let full = Duration.seconds(burst / rate)
        table = table.filter { now - $0.value.updated < full }
    }
}
