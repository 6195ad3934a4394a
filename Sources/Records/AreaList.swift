/// Water and building areas as the stores code them (`MapAreaBlock`: ids, kinds, names and rings as varints, the
/// vertices as differences in 1e-7°), one after another with where each ends, not an array of `MapArea`s (an area,
/// its ring array and its vertex array on the heap: ~200 bytes for a building of five vertices, ~40 coded). A
/// country's import holds its buildings from the read until they are written and indexed; the stores cut the bytes
/// into their blocks and the map-area index takes each area's bytes as they are (docs/ARCHITECTURE.md, "Country
/// scale").
///
/// An area is decoded when it is read, so its vertices come back in 1e-7° (as from a store); a list's areas are
/// equal to another's when they decode equal.
public struct AreaList: Sendable, Equatable, RandomAccessCollection, ExpressibleByArrayLiteral {
    private var bytes: [UInt8] = []
    /// Where each area's bytes end.
    private var ends: [Int] = []

    public init() {}

    public init(_ areas: some Sequence<MapArea>) {
        append(contentsOf: areas)
    }

    public init(arrayLiteral areas: MapArea...) {
        self.init(areas)
    }

    /// The areas of a store's blocks (`MapAreaBlock`), in order, each decoded once to check it; the error names the
    /// block by its place.
    public init(checking blocks: [[UInt8]]) throws(AddressBlock.CorruptBlock) {
        for (k, block) in blocks.enumerated() {
            var failure: AddressBlock.CorruptBlock?
            block.withUnsafeBytes { block in
                do throws(AddressBlock.CorruptBlock) {
                    try MapAreaBlock.forEachArea(block) { reader throws(AddressBlock.CorruptBlock) in
                        let start = reader.at
                        _ = try MapAreaBlock.area(&reader)
                        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: block[start..<reader.at]))
                        ends.append(bytes.count)
                    }
                } catch {
                    failure = error
                }
            }
            if let failure { throw AddressBlock.CorruptBlock(reason: "block \(k) of \(blocks.count): \(failure.reason)") }
        }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { ends.count }

    public subscript(i: Int) -> MapArea {
        withBytes(of: i) { body in
            var reader = VarintReader(bytes: body)
            do {
                return try MapAreaBlock.area(&reader)
            } catch {
                // Coded here, or checked when read from a store (`init(checking:)`).
                preconditionFailure("an area list's bytes were checked when the list was made: \(error)")
            }
        }
    }

    /// Area `i`'s id, read without decoding the rest of it.
    public func id(of i: Int) -> String {
        withBytes(of: i) { body in
            var reader = VarintReader(bytes: body)
            do { return try reader.text() } catch { preconditionFailure("an area list's bytes were checked when the list was made: \(error)") }
        }
    }

    /// Area `i`'s bytes (`MapAreaBlock`'s coding of one area, without a block's version and count).
    public func withBytes<R>(of i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let start = i == 0 ? 0 : ends[i - 1]
        return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<ends[i]])) }
    }

    /// The bytes of every area together.
    public var byteCount: Int { bytes.count }

    public mutating func append(_ area: MapArea) {
        // Coded straight into the list's bytes.
        var out = VarintWriter()
        swap(&out.bytes, &bytes)
        MapAreaBlock.body(area, &out)
        swap(&out.bytes, &bytes)
        ends.append(bytes.count)
    }

    public mutating func append(contentsOf areas: some Sequence<MapArea>) {
        for area in areas { append(area) }
    }

    /// Appends another list's areas, their bytes as they are.
    public mutating func append(contentsOf other: AreaList) {
        let base = bytes.count
        bytes += other.bytes
        ends += other.ends.map { $0 + base }
    }

    /// The areas in store blocks of at most `size` (`MapAreaBlock`).
    public func blocks(size: Int = MapAreaBlock.size) -> [[UInt8]] {
        stride(from: 0, to: count, by: size).map { first in block(first..<Swift.min(count, first + size)) }
    }

    /// The areas `range` as one store block (`MapAreaBlock`), their bytes as they are.
    public func block(_ range: Range<Int>) -> [UInt8] {
        let (start, end) = (range.lowerBound == 0 ? 0 : ends[range.lowerBound - 1], range.isEmpty ? 0 : ends[range.upperBound - 1])
        return bytes.withUnsafeBytes { bytes in
            MapAreaBlock.block(
                count: range.count,
                bodies: range.isEmpty ? UnsafeRawBufferPointer(start: nil, count: 0) : UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            )
        }
    }

    public static func == (a: AreaList, b: AreaList) -> Bool {
        a.count == b.count && a.elementsEqual(b)
    }
}
