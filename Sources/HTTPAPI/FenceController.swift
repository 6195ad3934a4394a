import API
import Access
import Foundation
import HTTPServer
import HTTPTypes
import Hummingbird
import NIOCore
import Records
import SearchEngine

/// Live areas (docs/ARCHITECTURE.md, "Live areas"): fences made, listed and removed, and their events as
/// Server-Sent Events. Every operation needs a key with the `fences` scope (or an open server): events carry users'
/// pins and positions.
struct FenceController {
    let book: FenceBook
    let write: WriteAccess
    let webhooks: FenceWebhooks
    let maximumBodySize: Int
    /// Seconds between SSE comments that keep an idle stream open through proxies.
    var heartbeat: Duration = .seconds(15)

    func register(on routes: RouteRegistrar) {
        routes.write("createFence") { request, context in
            try WritePolicy.manageFences(try await write.principal(request, context))
            let body = try await request.body.collect(upTo: maximumBodySize)
            let fence = try Fence(json: String(buffer: body))
            guard book.fence(id: fence.id) == nil else {
                throw Problem(.conflict, "a fence with id \"\(fence.id)\" exists: DELETE it first, or leave id out")
            }
            try book.put(fence)
            webhooks.update(fence)
            return Self.json(fence.json, status: .created, location: "/v1/fences/\(fence.id)")
        }
        routes.on("listFences") { request, context in
            try WritePolicy.manageFences(try await write.principal(request, context))
            return Self.json("{\"results\":[" + book.fences.map(\.json).joined(separator: ",") + "]}")
        }
        routes.on("getFence") { request, context in
            try WritePolicy.manageFences(try await write.principal(request, context))
            let fence = try fence(context)
            var text = fence.json
            if fence.webhook != nil {
                let state: (delivered: Int64, dead: Int) = (try? book.store.delivery(fence: fence.id)) ?? (0, 0)
                text = String(text.dropLast()) + ",\"webhookDelivered\":\(state.delivered),\"webhookDeadLetters\":\(state.dead)}"
            }
            return Self.json(text)
        }
        routes.write("deleteFence") { request, context in
            try WritePolicy.manageFences(try await write.principal(request, context))
            let fence = try fence(context)
            try book.delete(id: fence.id)
            webhooks.remove(fence.id)
            return Response(status: .noContent)
        }
        routes.on("fenceEvents") { request, context in
            try WritePolicy.manageFences(try await write.principal(request, context))
            let fence = try fence(context)
            let parameters = RequestParameters(request)
            // Resume after the last event seen: the Last-Event-ID header (what EventSource sends on reconnecting) or `after`.
            var after: Int64 = 0
            if let header = request.headers[HTTPField.Name("Last-Event-ID")!] {
                guard let value = Int64(header.trimmingCharacters(in: .whitespaces)), value >= 0 else {
                    throw ParameterError("Last-Event-ID", "must be the id of an event: a whole number of 0 or more")
                }
                after = value
            }
            if let value = try parameters.int("after", rule: "must be the id of an event: a whole number of 0 or more") {
                guard value >= 0 else { throw ParameterError("after", "must be the id of an event: a whole number of 0 or more") }
                after = Int64(value)
            }
            let limit = try parameters.int("limit", rule: "must be a number of events from 1 to 100000")
            if let limit, !(1...100_000).contains(limit) { throw ParameterError("limit", "must be a number of events from 1 to 100000") }
            let idle = try parameters.int("timeout", rule: "must be a number of seconds from 1 to 86400")
            if let idle, !(1...86_400).contains(idle) { throw ParameterError("timeout", "must be a number of seconds from 1 to 86400") }
            return Response(
                status: .ok,
                headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                body: stream(fence: fence.id, after: after, limit: limit, idle: idle.map { .seconds($0) })
            )
        }
    }

    private func fence(_ context: AppRequestContext) throws -> Fence {
        let id = context.parameters.get("id") ?? ""
        guard let fence = book.fence(id: id) else { throw Problem(.notFound, "no fence with id \"\(id)\"") }
        return fence
    }

    /// The fence's stored events after `after`, then each new one as it is stored, with a comment every heartbeat;
    /// ends after `limit` events, or `idle` without one, when given, or when the client goes.
    private func stream(fence: String, after: Int64, limit: Int?, idle: Duration?) -> ResponseBody {
        let book = self.book
        let heartbeat = idle.map { min($0, self.heartbeat) } ?? self.heartbeat
        return ResponseBody { writer in
            // Subscribed before the stored events are read, so that none falls between the two; an event both read
            // and handed over is written once (by its sequence).
            let (live, continuation) = AsyncStream<[FenceEvent]>.makeStream()
            let token = book.subscribe { events in
                let mine = events.filter { $0.fence == fence }
                if !mine.isEmpty { continuation.yield(mine) }
            }
            let ticker = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: heartbeat)
                    continuation.yield([])
                }
            }
            defer {
                ticker.cancel()
                book.unsubscribe(token)
                continuation.finish()
            }
            var last = after
            var sent = 0
            func send(_ events: [FenceEvent], _ writer: inout any ResponseBodyWriter) async throws -> Bool {
                var buffer = ByteBuffer()
                for event in events where event.sequence > last {
                    buffer.writeString("id: \(event.sequence)\nevent: \(event.detect)\ndata: \(event.json)\n\n")
                    last = event.sequence
                    sent += 1
                    if let limit, sent >= limit { break }
                }
                if buffer.readableBytes > 0 { try await writer.write(buffer) }
                return limit.map { sent >= $0 } ?? false
            }
            try await writer.write(ByteBuffer(string: ": events of fence \(fence)\n\n"))
            // Resuming from before the events still kept: the client is told what it cannot get (an event with no id,
            // so that its Last-Event-ID stays), then gets what is kept.
            if after > 0, let kept = try? book.store.keptFrom(), after + 1 < kept {
                let gap =
                    #"{"after":\#(after),"keptFrom":\#(kept),"detail":"events \#(after + 1) to \#(kept - 1) are past the retention and no longer kept"}"#
                try await writer.write(ByteBuffer(string: "event: gap\ndata: \(gap)\n\n"))
            }
            while true {
                let stored = try book.store.events(fence: fence, after: last, limit: 1000)
                if stored.isEmpty { break }
                if try await send(stored, &writer) {
                    try await writer.finish(nil)
                    return
                }
            }
            let clock = ContinuousClock()
            var lastEvent = clock.now
            for await batch in live {
                if batch.isEmpty {
                    if let idle, clock.now - lastEvent >= idle { break }
                    try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                    continue
                }
                lastEvent = clock.now
                if try await send(batch, &writer) { break }
            }
            try await writer.finish(nil)
        }
    }

    static func json(_ text: String, status: HTTPResponse.Status = .ok, location: String? = nil) -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let location { headers[.location] = location }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
