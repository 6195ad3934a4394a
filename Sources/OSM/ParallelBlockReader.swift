import Foundation
import Parallelism

/// Reads a file's blocks on `workers` threads of their own and turns each into an `Output` there, handing the outputs
/// back in file order.
///
/// Only reading a blob's bytes is done in file order (under a lock); decompressing, decoding and `transform` run on
/// whichever worker took the blob, so an import's per-object work (tags into POIs and addresses, ways into
/// geometry) uses every core instead of one. Memory is bounded by `depth` blocks taken but not yet handed out. The
/// first error — reading, decoding or from `transform` — comes out in its place in file order, and nothing after it
/// does.
///
/// `transform` may wait for something the caller does between outputs (an importer's ways need every node's location,
/// which the caller gathers from the node blocks' outputs). The caller learns what it is waiting for through `next`'s
/// `waiting` argument: it is called, on the caller's thread, with the contents of the next block in file order when
/// that block is decoded but its output is not ready — every block before it has been handed out by then.
///
/// A caller that stops before the end calls `stop()`, which lets the workers go once their current block is done
/// (a `transform` that waits must be released by the caller as well).
public final class ParallelBlockReader<Output: Sendable>: @unchecked Sendable {
    /// What a decoded block holds, for `next`'s `waiting`.
    public struct Contents: Sendable {
        public let nodes: Int
        public let ways: Int
        public let relations: Int
    }

    private enum Slot {
        case decoded(Contents)
        case done(Result<Output, any Error>, end: Int)
    }

    // All state below is guarded by `condition`; the reader is used only under it.
    private let condition = NSCondition()
    private let reader: PBFReader
    private let transform: @Sendable (OSMBlock) throws -> Output
    private var slots: [Int: Slot] = [:]
    /// Sequence numbers: the next blob to take, the next output to hand out, and the one after the last blob (once
    /// the end or an error was met).
    private var taken = 0
    private var handed = 0
    private var last: Int?
    private var stopped = false
    private let depth: Int
    public let fileSize: Int
    /// Bytes of the file read up to the last block handed out.
    public private(set) var offset = 0

    public init(_ reader: PBFReader, workers: Int = 2, depth: Int = 6, transform: @escaping @Sendable (OSMBlock) throws -> Output) {
        self.reader = reader
        self.transform = transform
        self.depth = max(workers, depth)
        fileSize = reader.fileSize
        for n in 0..<max(1, workers) {
            let thread = Thread.named("pbf-worker-\(n)") { [self] in work() }
            thread.start()
        }
    }

    private func work() {
        while true {
            condition.lock()
            while !stopped && last == nil && taken - handed >= depth { condition.wait() }
            if stopped || last != nil {
                condition.unlock()
                return
            }
            let sequence = taken
            taken += 1
            let blob: PBFReader.RawBlob?
            do throws(PBFError) {
                blob = try reader.nextRawBlob()
            } catch {
                finish(at: sequence, with: .failure(error), end: reader.offset)
                condition.unlock()
                return
            }
            guard let blob else {
                last = sequence
                condition.broadcast()
                condition.unlock()
                return
            }
            condition.unlock()

            let result: Result<Output, any Error>
            do {
                let block = try PBFReader.block(of: blob) ?? OSMBlock(offset: blob.offset)
                condition.lock()
                slots[sequence] = .decoded(Contents(nodes: block.nodes.count, ways: block.ways.count, relations: block.relations.count))
                condition.broadcast()
                condition.unlock()
                result = .success(try transform(block))
            } catch {
                result = .failure(error)
            }
            condition.lock()
            finish(at: sequence, with: result, end: blob.end)
            condition.unlock()
        }
    }

    /// Records an output (under the lock); a failure is the last one.
    private func finish(at sequence: Int, with result: Result<Output, any Error>, end: Int) {
        slots[sequence] = .done(result, end: end)
        if case .failure = result { last = min(last ?? sequence + 1, sequence + 1) }
        condition.broadcast()
    }

    /// The next output in file order, or nil after the last one.
    /// - Parameter waiting: called without the lock held, with what the next block holds, each time the caller would
    ///   otherwise wait for a decoded block's `transform`.
    public func next(waiting: (Contents) -> Void = { _ in }) throws -> Output? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let last, handed >= last { return nil }
            switch slots[handed] {
            case .done(let result, let end):
                slots[handed] = nil
                handed += 1
                offset = end
                condition.broadcast()
                if case .failure = result { last = handed }
                return try result.get()
            case .decoded(let contents):
                condition.unlock()
                waiting(contents)
                condition.lock()
                if case .decoded = slots[handed] { condition.wait() }
            case nil:
                condition.wait()
            }
        }
    }

    /// Lets the workers end without reading further (the caller stopped early).
    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
