/// Houses as the stores keep them: `AddressBlock`s (~35 bytes a house), not an array of `AddressPoint`s (128 bytes
/// a house and its texts on the heap). A country's import holds millions of houses from when the file is read until
/// they are written and indexed: as blocks they take a quarter of the memory, the stores write the blocks as they are,
/// and an index reads them a block at a time (docs/ARCHITECTURE.md, "OpenStreetMap that stays current", country scale).
///
/// Houses appended one by one wait in a tail and become a block at `AddressBlock.size`; `seal()` makes the tail a block
/// at any size (what an import's threads do with the houses of one block of the file, so that the thread gathering
/// them in file order only appends blocks). A list is a sequence of houses in the order appended; two lists are
/// equal when their houses are, however they are divided into blocks.
public struct HouseList: Sendable, Equatable, Sequence, ExpressibleByArrayLiteral {
    /// Encoded houses (`AddressBlock.encode`) and how many.
    public struct Block: Sendable {
        public let bytes: [UInt8]
        public let count: Int

        public init(bytes: [UInt8], count: Int) { (self.bytes, self.count) = (bytes, count) }
    }

    private var sealed: [Block] = []
    private var tail: [AddressPoint] = []
    public private(set) var count = 0
    /// The UTF-8 bytes of every house's id together: what a column of the ids is made at the size of.
    public private(set) var idBytes = 0

    public init() {}

    public init(_ houses: some Sequence<AddressPoint>) {
        append(contentsOf: houses)
    }

    public init(arrayLiteral houses: AddressPoint...) {
        self.init(houses)
    }

    /// The blocks a store read back, in order, each decoded once to check it (a store's bytes can be damaged; a
    /// list's blocks are read later where there is no one to tell). The error names the block by its place.
    public init(checking blocks: [Block]) throws(AddressBlock.CorruptBlock) {
        var scratch: [AddressPoint] = []
        for (k, block) in blocks.enumerated() {
            scratch.removeAll(keepingCapacity: true)
            do {
                try Self.decode(block, into: &scratch)
            } catch {
                throw AddressBlock.CorruptBlock(reason: "block \(k) of \(blocks.count): \(error.reason)")
            }
            for house in scratch { idBytes += house.id.utf8.count }
            count += block.count
        }
        sealed = blocks
    }

    public var isEmpty: Bool { count == 0 }

    public mutating func append(_ house: AddressPoint) {
        tail.append(house)
        count += 1
        idBytes += house.id.utf8.count
        if tail.count >= AddressBlock.size { seal() }
    }

    public mutating func append(contentsOf houses: some Sequence<AddressPoint>) {
        for house in houses { append(house) }
    }

    /// Appends another list's houses, its blocks as they are.
    public mutating func append(contentsOf other: HouseList) {
        if !other.sealed.isEmpty {
            seal()
            sealed += other.sealed
            count += other.count - other.tail.count
            idBytes += other.idBytes - other.tail.reduce(0) { $0 + $1.id.utf8.count }
        }
        append(contentsOf: other.tail)
    }

    /// Appends a block as it is, its bytes not encoded again: one the caller has checked (`decode(_:)`, or
    /// `AddressBlock.forEachID`, which checks as much and also gives `idBytes`, the UTF-8 bytes of its ids together).
    public mutating func append(_ block: Block, idBytes: Int) {
        seal()
        sealed.append(block)
        count += block.count
        self.idBytes += idBytes
    }

    /// A block's houses, checked as `init(checking:)` checks them.
    public static func decode(_ block: Block) throws(AddressBlock.CorruptBlock) -> [AddressPoint] {
        var houses: [AddressPoint] = []
        houses.reserveCapacity(block.count)
        try decode(block, into: &houses)
        return houses
    }

    /// Makes the houses waiting in the tail a block of their own.
    public mutating func seal() {
        guard !tail.isEmpty else { return }
        sealed.append(Block(bytes: AddressBlock.encode(tail), count: tail.count))
        tail.removeAll()
    }

    /// Every house in blocks, for a store to write: the sealed ones, and the tail encoded.
    public var blocks: [Block] {
        var list = self
        list.seal()
        return list.sealed
    }

    /// Hands each block's houses to `body` in order, decoded into one array that is reused.
    public func forEachBlock(_ body: ([AddressPoint]) throws -> Void) rethrows {
        var houses: [AddressPoint] = []
        for block in sealed {
            houses.removeAll(keepingCapacity: true)
            Self.decodeChecked(block, into: &houses)
            try body(houses)
        }
        if !tail.isEmpty { try body(tail) }
    }

    static func decode(_ block: Block, into houses: inout [AddressPoint]) throws(AddressBlock.CorruptBlock) {
        var failure: AddressBlock.CorruptBlock?
        block.bytes.withUnsafeBytes { bytes in
            do throws(AddressBlock.CorruptBlock) { try AddressBlock.decode(bytes, count: block.count, into: &houses) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// A block of this list: encoded here, or checked when read from a store (`init(checking:)`).
    static func decodeChecked(_ block: Block, into houses: inout [AddressPoint]) {
        do { try decode(block, into: &houses) } catch { preconditionFailure("a house list's block was checked when the list was made: \(error)") }
    }

    public struct Iterator: IteratorProtocol {
        let list: HouseList
        var block = 0
        var decoded: [AddressPoint] = []
        var position = 0
        var inTail = false

        public mutating func next() -> AddressPoint? {
            while true {
                if position < decoded.count {
                    defer { position += 1 }
                    return decoded[position]
                }
                if inTail { return nil }
                decoded.removeAll(keepingCapacity: true)
                position = 0
                if block < list.sealed.count {
                    HouseList.decodeChecked(list.sealed[block], into: &decoded)
                    block += 1
                } else {
                    (decoded, inTail) = (list.tail, true)
                }
            }
        }
    }

    public func makeIterator() -> Iterator { Iterator(list: self) }

    public var underestimatedCount: Int { count }

    public static func == (a: HouseList, b: HouseList) -> Bool {
        a.count == b.count && a.elementsEqual(b)
    }
}
