/// 64-bit FNV-1a: a hash that is the same in every process and on every machine (Swift's `Hasher` is seeded per
/// process), for what is stored or sent: snapshot tables, page cursors, ids in answers, the address typo index.
public struct FNV1a: Sendable {
    @usableFromInline var state: UInt64 = 0xcbf2_9ce4_8422_2325

    /// The hash of what was combined so far.
    @inlinable public var value: UInt64 { state }

    @inlinable public init() {}

    @inlinable
    public mutating func combine(_ byte: UInt8) { state = (state ^ UInt64(byte)) &* 0x100_0000_01b3 }

    @inlinable
    public mutating func combine(_ bytes: some Sequence<UInt8>) { for byte in bytes { combine(byte) } }

    /// The hash of a string's UTF-8 bytes.
    @inlinable
    public static func hash(_ text: String) -> UInt64 {
        var hash = FNV1a()
        hash.combine(text.utf8)
        return hash.value
    }
}
