import Foundation

/// Reads and decodes a file's blocks on a thread of its own, at most `depth` blocks ahead of the caller, so that
/// reading, decompressing and decoding (a fifth of an import) overlap what the caller does with each block. Blocks,
/// the end and any error come out in file order; memory is bounded by `depth` decoded blocks. A caller that stops
/// before the end calls `stop()`, which lets the thread go (it holds the reader until then).
public final class PrefetchingBlockReader: @unchecked Sendable {
    // All state below is guarded by `condition`; the reader itself is used only by the prefetching thread.
    private let condition = NSCondition()
    private var ready: [(block: Result<OSMBlock, PBFError>?, offset: Int)] = []
    private var ended = false
    private var stopped = false
    private let depth: Int
    public let fileSize: Int
    /// Bytes of the file read up to the last block handed out.
    public private(set) var offset = 0

    public init(_ reader: PBFReader, depth: Int = 4) {
        self.depth = max(1, depth)
        fileSize = reader.fileSize
        nonisolated(unsafe) let reader = reader
        let thread = Thread { [self] in prefetch(reader) }
        thread.name = "pbf-prefetch"
        thread.start()
    }

    private func prefetch(_ reader: PBFReader) {
        while true {
            let block: Result<OSMBlock, PBFError>?
            do throws(PBFError) { block = try reader.nextBlock().map { .success($0) } } catch { block = .failure(error) }
            condition.lock()
            while ready.count >= depth && !stopped { condition.wait() }
            if stopped {
                condition.unlock()
                return
            }
            ready.append((block, reader.offset))
            condition.broadcast()
            condition.unlock()
            guard case .success = block else { return }
        }
    }

    /// The next block, or nil after the last one.
    public func nextBlock() throws(PBFError) -> OSMBlock? {
        condition.lock()
        defer { condition.unlock() }
        if ended { return nil }
        while ready.isEmpty { condition.wait() }
        let (block, offset) = ready.removeFirst()
        self.offset = offset
        condition.broadcast()
        switch block {
        case .success(let decoded): return decoded
        case .failure(let error):
            ended = true
            throw error
        case nil:
            ended = true
            return nil
        }
    }

    /// Lets the prefetching thread end without reading further (the caller stopped early).
    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
