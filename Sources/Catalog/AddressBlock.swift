import GeoCore

/// Houses as the SQLite store keeps them: blocks of `AddressBlock.size` houses, each one BLOB, instead of one row a
/// house. A country's 2.3 M houses took 2.3 M inserts into two B-trees (the rows and their unique ids), half of
/// writing an extract; as blocks they are ~120 writes of sequential bytes, and read back without a row cursor.
///
/// Format (version 1): the byte 1, then per house its seven texts — id, street, place, house number, unit, postcode,
/// city — each a LEB128 varint of its UTF-8 length plus one (0: none) and its bytes, then latitude and longitude as the
/// little-endian bits of their Doubles (exactly what was written).
public enum AddressBlock {
    public static let size = 20_000
    static let version: UInt8 = 1

    /// Why a block could not be read.
    public struct CorruptBlock: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { "address block: \(reason)" }
    }

    public static func encode(_ houses: some Collection<AddressPoint>) -> [UInt8] {
        var writer = Writer()
        writer.bytes.reserveCapacity(1 + houses.count * 64)
        writer.bytes.append(version)
        for house in houses {
            writer.text(house.id)
            writer.text(house.street)
            writer.text(house.place)
            writer.text(house.housenumber)
            writer.text(house.unit)
            writer.text(house.postcode)
            writer.text(house.city)
            writer.double(house.latitude)
            writer.double(house.longitude)
        }
        return writer.bytes
    }

    struct Writer {
        var bytes: [UInt8] = []

        mutating func text(_ value: String?) {
            guard let value else { return bytes.append(0) }
            let utf8 = value.utf8
            varint(UInt64(utf8.count) + 1)
            if utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil { bytes.append(contentsOf: utf8) }
        }

        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        mutating func double(_ value: Double) {
            var bits = value.bitPattern  // low byte first: little-endian on any host
            for _ in 0..<8 {
                bytes.append(UInt8(truncatingIfNeeded: bits))
                bits >>= 8
            }
        }
    }

    /// Appends the block's `count` houses to `houses`.
    public static func decode(_ block: UnsafeRawBufferPointer, count: Int, into houses: inout [AddressPoint]) throws(CorruptBlock) {
        guard block.first == version else { throw CorruptBlock(reason: "version \(block.first.map(String.init) ?? "none"), not \(version)") }
        var at = 1
        func varint() throws(CorruptBlock) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while at < block.count, shift < 64 {
                let byte = block[at]
                at += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            throw CorruptBlock(reason: "a length runs past the block's \(block.count) bytes")
        }
        func text() throws(CorruptBlock) -> String? {
            let stored = try varint()
            guard stored > 0 else { return nil }
            let length = Int(stored - 1)
            guard length <= block.count - at else { throw CorruptBlock(reason: "a text of \(length) bytes runs past the block's end") }
            defer { at += length }
            return String(decoding: UnsafeRawBufferPointer(rebasing: block[at..<(at + length)]), as: UTF8.self)
        }
        func double() throws(CorruptBlock) -> Double {
            guard block.count - at >= 8 else { throw CorruptBlock(reason: "a coordinate runs past the block's end") }
            defer { at += 8 }
            return Double(bitPattern: UInt64(littleEndian: block.loadUnaligned(fromByteOffset: at, as: UInt64.self)))
        }
        houses.reserveCapacity(houses.count + count)
        for _ in 0..<count {
            let id = try text()
            let street = try text()
            let place = try text()
            let housenumber = try text()
            let unit = try text()
            let postcode = try text()
            let city = try text()
            guard let id, let housenumber else { throw CorruptBlock(reason: "a house without an id or a number") }
            houses.append(
                AddressPoint(
                    id: id,
                    street: street,
                    place: place,
                    housenumber: housenumber,
                    unit: unit,
                    postcode: postcode,
                    city: city,
                    latitude: try double(),
                    longitude: try double()
                )
            )
        }
        guard at == block.count else { throw CorruptBlock(reason: "\(block.count - at) bytes after its \(count) houses") }
    }
}
