import NIOCore
import Synchronization

/// The flushes of one event loop's fast-lane answers, done together once the loop has handled every connection
/// that was readable in this tick (NIO runs tasks queued from the loop after its I/O events).
///
/// Measured (RESULTS.md, issue 17): a flush is a `write` to a loopback socket, and writing each answer as soon as
/// it is made woke the client's thread once per answer — on this 2-core guest that wake-up cost more server CPU
/// than making the answer. Flushing the tick's answers back to back wakes each waiting client thread about once
/// per tick. The syscalls are the same (one `write` per connection); an answer waits at most for the rest of the
/// tick's reads, which are each a few microseconds.
final class TickFlush: @unchecked Sendable {
    // Used only on its event loop (`add` and the queued task), hence @unchecked.
    private let eventLoop: any EventLoop
    private var pending: [ChannelHandlerContext] = []

    private init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
        pending.reserveCapacity(64)
    }

    /// Flushes `context` at the end of this tick. On the context's event loop only.
    func add(_ context: ChannelHandlerContext) {
        if pending.isEmpty { eventLoop.execute { self.flushAll() } }
        pending.append(context)
    }

    private func flushAll() {
        let contexts = pending
        pending.removeAll(keepingCapacity: true)
        for context in contexts { context.flush() }
    }

    private static let loops = Mutex<[ObjectIdentifier: TickFlush]>([:])

    /// The batch of `eventLoop`, made on first use (once per loop; connections look it up when they open).
    static func of(_ eventLoop: any EventLoop) -> TickFlush {
        loops.withLock { loops in
            if let found = loops[ObjectIdentifier(eventLoop)] { return found }
            let made = TickFlush(eventLoop: eventLoop)
            loops[ObjectIdentifier(eventLoop)] = made
            return made
        }
    }
}
