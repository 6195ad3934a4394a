import CZlib

/// `Content-Encoding: gzip` for answers that are worth compressing (vector tiles): zlib's deflate with the gzip
/// wrapper (RFC 1952), never the bare zlib format some servers send as "deflate".
enum GzipEncoding {
    /// Level 6, zlib's default: a tile is written once per request and read over a mobile link.
    static let level: Int32 = 6

    /// The bytes gzip-compressed; nil only if zlib refuses (out of memory).
    ///
    /// The window and the hash table are sized to the input (`window(for:)`): with zlib's defaults (a 32 KB window,
    /// memLevel 8) `deflateInit2` allocates 256 KB and clears a 64 KB hash table for every tile, where a deep tile is a
    /// few hundred bytes — that clearing was ~2 % of the server's CPU on gzip tiles at zoom 16 (perf; the compression
    /// itself is ~27 %). A window at least as long as the input loses no match.
    static func compress(_ input: [UInt8], level: Int32 = GzipEncoding.level) -> [UInt8]? {
        var stream = z_stream()
        let (windowBits, memoryLevel) = window(for: input.count)
        // windowBits + 16: the gzip header and trailer.
        guard
            deflateInit2_(
                &stream,
                level,
                Z_DEFLATED,
                windowBits + 16,
                memoryLevel,
                Z_DEFAULT_STRATEGY,
                ZLIB_VERSION,
                Int32(MemoryLayout<z_stream>.size)
            )
                == Z_OK
        else {
            return nil
        }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))))
        let status = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.avail_in = UInt32(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(target.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }

    /// zlib's `windowBits` (9–15: a window of 2^bits bytes, at least the input's length up to zlib's largest) and
    /// `memLevel` (its hash table and buffers, 2–8, zlib's default for the largest window).
    static func window(for count: Int) -> (windowBits: Int32, memoryLevel: Int32) {
        let bits = count <= 1 ? 9 : min(15, max(9, Int.bitWidth - (count - 1).leadingZeroBitCount))
        return (Int32(bits), Int32(bits - 7))
    }

    /// Whether an `Accept-Encoding` value admits gzip: a `gzip` (or `x-gzip`) or `*` coding with a q-value above 0,
    /// an explicit gzip coding winning over `*` (RFC 9110 §12.5.3).
    static func accepted(by header: String?) -> Bool {
        guard let header else { return false }
        var star: Bool?
        for item in header.split(separator: ",") {
            let parts = item.split(separator: ";")
            guard let name = parts.first?.trimmingSpaces.lowercased() else { continue }
            var q = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                if pair.count == 2, pair[0].trimmingSpaces.lowercased() == "q" { q = Double(pair[1].trimmingSpaces) ?? 0 }
            }
            if name == "gzip" || name == "x-gzip" { return q > 0 }
            if name == "*" { star = q > 0 }
        }
        return star ?? false
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return s
    }
}
