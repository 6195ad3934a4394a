/// Bytes kept in chunks of about a megabyte that are never moved: a store of millions of varint-coded objects grows
/// without the copy (and the twice-the-size moment) of one growing array. An object's bytes never straddle two
/// chunks, so an object is read from one buffer; its place is an `Address` (chunk and offset in one integer).
/// See docs/ARCHITECTURE.md, "OpenStreetMap that stays current", country scale.
public struct PackedBytes: Sendable {
    public typealias Address = Int

    static let chunkSize = 1 << 20
    private var chunks: [[UInt8]] = []

    public init() {}

    /// Every byte held, chunks' unused tails included.
    public var capacity: Int { chunks.reduce(0) { $0 + $1.capacity } }

    /// Appends `bytes` in one piece (in a new chunk when the last has not room for all of them), returning where they
    /// start.
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) -> Address {
        if chunks.isEmpty || chunks[chunks.count - 1].count + bytes.count > Swift.max(Self.chunkSize, chunks[chunks.count - 1].capacity) {
            var chunk: [UInt8] = []
            chunk.reserveCapacity(Swift.max(Self.chunkSize, bytes.count))
            chunks.append(chunk)
        }
        let c = chunks.count - 1
        let offset = chunks[c].count
        chunks[c].append(contentsOf: bytes)
        return c << 32 | offset
    }

    /// Reads the bytes from `address` to the end of its chunk.
    /// SAFETY: the buffer lives only for `body`.
    @inline(__always)
    public func withBytes<R>(at address: Address, _ body: (UnsafeBufferPointer<UInt8>, Int) throws -> R) rethrows -> R {
        try chunks[address >> 32].withUnsafeBufferPointer { try body($0, address & 0xFFFF_FFFF) }
    }
}

/// Varints as in protocol buffers (7 bits a byte, low first), their zigzag form for signed differences, and texts as
/// a length and UTF-8: the one coding of the packed tables here and of the stores' blocks (`VarintWriter` in Records).
/// `read` is for bytes this process wrote itself; bytes read back from a store go through Records' `VarintReader`,
/// which checks each one.
public enum Varint {
    @inlinable @inline(__always)
    public static func append(_ value: UInt64, to out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    @inlinable @inline(__always)
    public static func appendSigned(_ value: Int64, to out: inout [UInt8]) {
        append(UInt64(bitPattern: (value << 1) ^ (value >> 63)), to: &out)
    }

    @inlinable @inline(__always)
    public static func appendText(_ value: String, to out: inout [UInt8]) {
        append(UInt64(value.utf8.count), to: &out)
        out.append(contentsOf: value.utf8)
    }

    /// The varint at `position` of bytes this process wrote itself (no bounds check beyond the buffer's own).
    @inlinable @inline(__always)
    public static func read(_ bytes: UnsafeBufferPointer<UInt8>, _ position: inout Int) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = bytes[position]
            position += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    /// The text at `position` written by `appendText` (bytes this process wrote itself).
    @inlinable
    public static func readText(_ bytes: UnsafeBufferPointer<UInt8>, _ position: inout Int) -> String {
        let length = Int(read(bytes, &position))
        defer { position += length }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[position..<position + length]), as: UTF8.self)
    }

    @inlinable @inline(__always)
    public static func readSigned(_ bytes: UnsafeBufferPointer<UInt8>, _ position: inout Int) -> Int64 {
        let v = read(bytes, &position)
        return Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
    }
}
