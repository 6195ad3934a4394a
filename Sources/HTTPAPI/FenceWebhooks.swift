import AsyncHTTPClient
import Foundation
import Metrics
import NIOCore
import Records
import SearchEngine
import Synchronization

/// Each fence with a webhook gets its events POSTed there, one at a time and in order (docs/ARCHITECTURE.md,
/// "Live areas"): an event is retried with exponential backoff until the receiver answers 2xx, and after
/// `maximumAttempts` it is given up (a dead letter, counted in `/metrics` and in the fence's `webhookDeadLetters`)
/// so that the events after it still arrive. Where a webhook stands is stored with each delivery: a restart resumes
/// after the last event delivered or given up.
final class FenceWebhooks: Sendable {
    typealias Policy = WebhookPolicy

    let book: FenceBook
    let policy: Policy
    /// Each fence's loop, woken by its fence's new events (`wake`) and, over a shared store, when no other server
    /// holds its lease (`leaseFree`).
    private let loops = Mutex<[String: Loop]>([:])
    private let leaseWatch = Mutex<Task<Void, Never>?>(nil)
    private let deliveries = Counter(label: "poi_fence_webhook_deliveries_total")
    private let retries = Counter(label: "poi_fence_webhook_retries_total")
    private let deadLetters = Counter(label: "poi_fence_webhook_dead_letters_total")
    /// Times a webhook found events it had not delivered already dropped by the retention (`FenceEventRetention`).
    private let expired = Counter(label: "poi_fence_webhook_expired_total")
    private let events = Counter(label: "poi_fence_events_total")

    init(book: FenceBook, policy: Policy = WebhookPolicy()) {
        self.book = book
        self.policy = policy
    }

    /// Starts a loop for every fence with a webhook and wakes it when its fence has new events, for the server's life.
    func start() {
        _ = book.subscribe { [weak self] stored in
            guard let self else { return }
            self.events.increment(by: stored.count)
            let fences = Set(stored.map(\.fence))
            self.loops.withLock { loops in
                for fence in fences { loops[fence]?.wake.yield() }
            }
        }
        // Fences other servers put or delete (a shared store) start or stop their loops here too.
        book.watchDefinitions { [weak self] id, fence in
            if let fence { self?.update(fence) } else { self?.remove(id) }
        }
        for fence in book.fences { update(fence) }
        if let shared = book.store as? any SharedFenceLog { watchLeases(shared) }
    }

    struct Loop {
        let task: Task<Void, Never>
        let wake: AsyncStream<Void>.Continuation
        let leaseFree: AsyncStream<Void>.Continuation

        func end() {
            task.cancel()
            wake.finish()
            leaseFree.finish()
        }
    }

    /// Over a shared store: one look every third of a lease for fences with events waiting whose lease no other
    /// server holds (its holder stopped, or went idle and let it run out), and a wake-up for this server's loops of
    /// those — one query a server, not a claim a fence. A lease that ran out with nothing to deliver is left alone:
    /// taking it over would cost each fence a claim and two reads for nothing.
    private func watchLeases(_ shared: any SharedFenceLog) {
        let task = Task { [weak self, holder, policy] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(policy.leaseSeconds) / 3)
                guard let self, let waiting = try? shared.deliveriesWaiting(for: holder), !waiting.isEmpty else { continue }
                self.loops.withLock { loops in
                    for fence in waiting { loops[fence]?.leaseFree.yield() }
                }
            }
        }
        leaseWatch.withLock { $0 = task }
    }

    /// Stops every delivery loop and returns once they have ended (a shutdown): a POST in flight is let run to its
    /// answer or its timeout and recorded, so a restart does not send it again; one that times out is (at least once).
    func stop() async {
        let stopped = loops.withLock { loops in
            let all = Array(loops.values)
            loops.removeAll()
            return all
        }
        leaseWatch.withLock { $0?.cancel() }
        for loop in stopped { loop.end() }
        for loop in stopped { await loop.task.value }
    }

    /// A fence made or replaced: its loop (re)started when it has a webhook.
    func update(_ fence: Fence) {
        let previous = loops.withLock { $0.removeValue(forKey: fence.id) }
        previous?.end()
        guard let url = fence.webhook else { return }
        let (wake, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let (leaseFree, leaseContinuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task { [book, policy, holder, deliveries, retries, deadLetters, expired] in
            // The loop this one replaces (the fence put again, or its definition arriving through the change feed
            // after the server listed it) first records the delivery it may have had in flight; this one then starts
            // from the stored progress, rather than sending that event a second time.
            await previous?.task.value
            await Self.run(
                fence: fence.id,
                url: url,
                holder: holder,
                store: book.store,
                wakes: (wake, leaseFree),
                policy: policy,
                counters: (deliveries, retries, deadLetters, expired)
            )
        }
        loops.withLock { $0[fence.id] = Loop(task: task, wake: continuation, leaseFree: leaseContinuation) }
    }

    func remove(_ id: String) {
        loops.withLock { loops in loops.removeValue(forKey: id)?.end() }
    }

    private static func run(
        fence: String,
        url: String,
        holder: String,
        store: any FenceLog,
        wakes: (events: AsyncStream<Void>, leaseFree: AsyncStream<Void>),
        policy: Policy,
        counters: (deliveries: Counter, retries: Counter, deadLetters: Counter, expired: Counter)
    ) async {
        var delivered = (try? store.delivery(fence: fence).delivered) ?? 0
        var iterator = wakes.events.makeAsyncIterator()
        var leaseFree = wakes.leaseFree.makeAsyncIterator()
        let shared = store as? any SharedFenceLog
        let renewal: Duration = .seconds(policy.leaseSeconds) / 3
        /// When this loop last asked for the lease and got it (nil: it does not hold it).
        var claimed: ContinuousClock.Instant?
        /// Over a shared store, only the server holding the fence's lease delivers: true when this one does, with the
        /// progress the last holder left. The lease is renewed once a third of it has passed, not before every
        /// POST: it then still has two thirds to run, more than a POST's timeout (`WebhookPolicy.leaseSeconds`).
        func holdsLease() -> Bool {
            guard let shared else { return true }
            let asked = ContinuousClock.now
            if let claimed, asked - claimed < renewal { return true }
            guard (try? shared.claimDelivery(fence: fence, holder: holder, seconds: policy.leaseSeconds)) == true else {
                claimed = nil
                return false
            }
            // Taken anew, or held so long ago that it may have lapsed and another server delivered meanwhile.
            if claimed.map({ asked - $0 >= .seconds(policy.leaseSeconds) }) ?? true {
                delivered = max(delivered, (try? store.delivery(fence: fence).delivered) ?? 0)
            }
            claimed = asked
            return true
        }
        while !Task.isCancelled {
            guard holdsLease() else {
                // Another server delivers; this one tries again when the lease watch finds it free.
                guard await leaseFree.next() != nil else { return }
                continue
            }
            // Behind the retention (a receiver down for longer than events are kept): what is left is delivered.
            if delivered > 0, let kept = try? store.keptFrom(), delivered + 1 < kept {
                counters.expired.increment()
                delivered = kept - 1
            }
            let pending = (try? store.events(fence: fence, after: delivered, limit: 100)) ?? []
            if pending.isEmpty {
                // Wait for the next event (or a minute, in case a wake-up was missed).
                guard await iterator.next() != nil else { return }
                continue
            }
            for event in pending {
                var attempt = 0
                var ok = false
                while !Task.isCancelled {
                    attempt += 1
                    if shared != nil, !holdsLease() { break }
                    // The POST runs to its answer or its timeout even when the loop is stopped or replaced meanwhile
                    // (a task of its own, which the loop's cancellation does not reach): what the receiver took is
                    // then recorded below, and neither the next loop nor the next server sends it again.
                    ok = await Task { [attempt] in await post(event, attempt: attempt, to: url, timeout: policy.timeout) }.value
                    if ok || attempt >= policy.maximumAttempts { break }
                    counters.retries.increment()
                    let wait = min(policy.longestRetry, policy.firstRetry * (1 << min(attempt - 1, 20)))
                    // Over a shared store the wait is slept in slices, the lease renewed after each, so that a long
                    // backoff does not hand the delivery to another server while this one still means to retry.
                    var waited: Duration = .zero
                    while waited < wait, !Task.isCancelled {
                        let slice = shared == nil ? wait : min(wait - waited, renewal)
                        try? await Task.sleep(for: slice)
                        waited += slice
                        if shared != nil, waited < wait, !holdsLease() { break }
                    }
                }
                // A delivery the receiver answered is recorded even when the loop is stopping (a shutdown), so that
                // the next holder does not send it again.
                if Task.isCancelled && !ok { return }
                // The lease went to another server (this one was cut off from the store): it carries on from here.
                if shared != nil, !ok, attempt < policy.maximumAttempts { break }
                try? store.setDelivered(fence: fence, through: event.sequence, dead: !ok)
                delivered = event.sequence
                if ok { counters.deliveries.increment() } else { counters.deadLetters.increment() }
            }
        }
    }

    /// This server, as a holder of webhook leases in a shared store.
    let holder = "\(ProcessInfo.processInfo.hostName):\(getpid()):\(UUID().uuidString.prefix(8))"

    /// One delivery: the event's JSON, with its id in `X-Poi-Event-Id` and the attempt (1 for the first, counted per
    /// server) in `X-Poi-Delivery-Attempt`; delivered when the receiver answers 2xx.
    private static func post(_ event: FenceEvent, attempt: Int, to url: String, timeout: Duration) async -> Bool {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "X-Poi-Event-Id", value: String(event.sequence))
        request.headers.add(name: "X-Poi-Delivery-Attempt", value: String(attempt))
        request.body = .bytes(ByteBuffer(string: event.json))
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .milliseconds(Int64(timeout.components.seconds * 1000)))
            _ = try? await response.body.collect(upTo: 1 << 16)
            return (200..<300).contains(response.status.code)
        } catch {
            return false
        }
    }
}

/// How a fence's webhook retries: attempts per event before it is given up, and the backoff between them (doubling
/// from `firstRetry` up to `longestRetry`). With the defaults an event is retried for about ten minutes.
public struct WebhookPolicy: Sendable {
    public var maximumAttempts: Int
    public var firstRetry: Duration
    public var longestRetry: Duration
    public var timeout: Duration
    /// Over a shared store, how long a webhook's lease lasts without renewal: a server that stops or is cut off hands
    /// its deliveries over within this (plus a third of it, the other servers' next look). The holder renews it once
    /// a third has passed, before a POST and during a retry's backoff, so it keeps it while the receiver answers
    /// within `timeout` (which must stay under two thirds of it); a POST still in flight when the lease runs out may
    /// see another server send the same event again — delivery is at least once, and receivers drop an id they have
    /// seen.
    public var leaseSeconds: Int

    public init(
        maximumAttempts: Int = 20,
        firstRetry: Duration = .milliseconds(100),
        longestRetry: Duration = .seconds(60),
        timeout: Duration = .seconds(10),
        leaseSeconds: Int = 30
    ) {
        (self.maximumAttempts, self.firstRetry, self.longestRetry) = (maximumAttempts, firstRetry, longestRetry)
        (self.timeout, self.leaseSeconds) = (timeout, leaseSeconds)
    }
}
