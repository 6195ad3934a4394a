import GeoCore

/// Houses as the SQLite store keeps them: blocks of `AddressBlock.size` houses, each one BLOB, instead of one row a
/// house. A country's 2.3 M houses took 2.3 M inserts into two B-trees (the rows and their unique ids), half of
/// writing an extract; as blocks they are a few thousand writes of sequential bytes, and read back without a row cursor.
///
/// A block holds at most `size` (32) houses, so that a change file, which replaces the houses of a few thousand
/// objects, finds most blocks without a house of theirs and keeps them as they are (`forEachID` reads the ids alone;
/// `CatalogStore.replaceHouses` reads only the blocks whose span holds a changed object). Blocks of 20 000 were each
/// reached by some change; at 512 a file of ~2 800 objects rewrote 1 106 of 5 197 blocks of 2.3 M houses; at 128,
/// 1 107 of 18 906, a quarter of the bytes, for ~8 % more bytes in all. A file's ~1 000 houses land in as many blocks
/// whatever their size, so each block is decoded and encoded again for one house: at 32 the file's houses took half
/// the time of 128's (RESULTS.md, issue 57, "Change files: the mirror's members by relation, smaller blocks").
///
/// Format (version 2): the byte 2; the block's distinct streets, places, postcodes and cities — a LEB128 varint of
/// their number, then each as a varint of its UTF-8 length and its bytes; then per house:
/// - its id front-coded against the house before: a varint of the bytes it shares with that id's start, a varint of
///   the length of the rest and those bytes (`osm-n2203` after `osm-n2201` is 7, 2, "03");
/// - street and place, each a varint reference into the texts (0: none, k: the k-th);
/// - house number and unit, each a varint of its UTF-8 length plus one (0: none) and its bytes;
/// - postcode and city as references;
/// - latitude and longitude as the little-endian bits of their Doubles (exactly what was written).
///
/// A block of an extract's houses names a few dozen streets and a few cities and postcodes, and neighbouring ids share
/// most of their digits: about 30 bytes a house against 70 in version 1, which wrote every text in full
/// (the byte 1, then per house its seven texts as house number and unit are here, then the coordinates). Half the
/// bytes is half of what SQLite copies through its log and into the database on an import. Both versions are read.
public enum AddressBlock {
    public static let size = 32
    static let version: UInt8 = 2

    /// Why a block could not be read.
    public struct CorruptBlock: Error, CustomStringConvertible {
        public let reason: String
        public init(reason: String) { self.reason = reason }
        public var description: String { "address block: \(reason)" }

        /// Decodes stored blocks; a corrupt one is a storage error that says `what` is corrupt and why.
        public static func reading<T>(_ what: String, _ decode: () throws(CorruptBlock) -> T) throws(CatalogError) -> T {
            do { return try decode() } catch { throw .storage("\(what) corrupt: \(error.reason)") }
        }
    }

    public static func encode(_ houses: some Collection<AddressPoint>) -> [UInt8] {
        // The houses' bytes first, numbering the texts as they are met; then the texts, and the houses after them.
        var body = Writer()
        body.bytes.reserveCapacity(houses.count * 40)
        var numbering = TextNumbering()
        // Neighbouring houses usually share their street, place, postcode and city: the last of each field is
        // compared before the table is looked in.
        var recent = [TextNumbering.Recent](repeating: TextNumbering.Recent(), count: 4)
        func reference(_ text: String?, _ field: Int) {
            guard let text else { return body.varint(0) }
            body.varint(UInt64(numbering.number(text, recent: &recent[field])))
        }
        var previousID: [UInt8] = []
        for house in houses {
            body.frontCoded(house.id, after: &previousID)
            reference(house.street, 0)
            reference(house.place, 1)
            body.text(house.housenumber)
            body.text(house.unit)
            reference(house.postcode, 2)
            reference(house.city, 3)
            body.double(house.latitude)
            body.double(house.longitude)
        }
        var block = Writer()
        block.bytes.reserveCapacity(6 + numbering.texts.reduce(0) { $0 + 5 + $1.utf8.count } + body.bytes.count)
        block.bytes.append(version)
        block.varint(UInt64(numbering.texts.count))
        for text in numbering.texts { block.text(text, plusOne: false) }
        block.bytes.append(contentsOf: body.bytes)
        return block.bytes
    }

    struct Writer {
        var bytes: [UInt8] = []

        /// A text as a varint of its UTF-8 length (plus one, so that 0 says none) and its bytes.
        mutating func text(_ value: String?, plusOne: Bool = true) {
            guard let value else { return bytes.append(0) }
            let utf8 = value.utf8
            varint(UInt64(utf8.count) + (plusOne ? 1 : 0))
            if utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil { bytes.append(contentsOf: utf8) }
        }

        /// An id as the number of bytes it shares with the start of `previous`, and the rest; `previous` becomes it.
        mutating func frontCoded(_ id: String, after previous: inout [UInt8]) {
            var id = id
            id.withUTF8 { utf8 in
                var shared = 0
                let most = min(utf8.count, previous.count)
                while shared < most && utf8[shared] == previous[shared] { shared += 1 }
                varint(UInt64(shared))
                varint(UInt64(utf8.count - shared))
                let rest = UnsafeBufferPointer(rebasing: utf8[shared...])
                bytes.append(contentsOf: rest)
                previous.removeSubrange(shared...)
                previous.append(contentsOf: rest)
            }
        }

        mutating func varint(_ value: UInt64) {
            if value < 0x80 { return bytes.append(UInt8(value)) }
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        mutating func double(_ value: Double) {
            // Low byte first: little-endian on any host.
            withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        }
    }

    /// Appends the block's `count` houses to `houses` (a block of either version).
    public static func decode(_ block: UnsafeRawBufferPointer, count: Int, into houses: inout [AddressPoint]) throws(CorruptBlock) {
        guard let first = block.first, first == 1 || first == version else {
            throw CorruptBlock(reason: "version \(block.first.map(String.init) ?? "none"), not 1 or \(version)")
        }
        var reader = Reader(block: block, at: 1)
        houses.reserveCapacity(houses.count + count)
        // Version 2's table of the texts houses refer to (version 1 writes every text in full).
        var texts: [String]?
        if first == 2 {
            let textCount = try reader.varint()
            guard textCount <= UInt64(block.count) else { throw CorruptBlock(reason: "\(textCount) texts in \(block.count) bytes") }
            var table: [String] = []
            table.reserveCapacity(Int(textCount))
            for _ in 0..<textCount { table.append(try reader.bytes(Int(clamping: try reader.varint()), what: "a text").string) }
            texts = table
        }
        /// A street, place, postcode or city: a reference into the table (version 2), or the text itself.
        func shared() throws(CorruptBlock) -> String? {
            guard let texts else { return try reader.text() }
            let k = try reader.varint()
            guard k > 0 else { return nil }
            guard k <= UInt64(texts.count) else { throw CorruptBlock(reason: "a reference to text \(k) of \(texts.count)") }
            return texts[Int(k - 1)]
        }
        var previousID: [UInt8] = []
        for _ in 0..<count {
            let id: String?
            if texts != nil {
                // Front-coded: the bytes shared with the id before, then the rest.
                let sharedBytes = try reader.varint()
                guard sharedBytes <= UInt64(previousID.count) else {
                    throw CorruptBlock(reason: "an id sharing \(sharedBytes) bytes of the \(previousID.count) before it")
                }
                previousID.removeSubrange(Int(sharedBytes)...)
                previousID.append(contentsOf: try reader.bytes(Int(clamping: try reader.varint()), what: "an id").buffer)
                id = String(decoding: previousID, as: UTF8.self)
            } else {
                id = try reader.text()
            }
            let street = try shared()
            let place = try shared()
            let housenumber = try reader.text()
            let unit = try reader.text()
            let postcode = try shared()
            let city = try shared()
            guard let id, let housenumber else { throw CorruptBlock(reason: "a house without an id or a number") }
            let latitude = try reader.double()
            houses.append(
                AddressPoint(
                    id: id,
                    street: street,
                    place: place,
                    housenumber: housenumber,
                    unit: unit,
                    postcode: postcode,
                    city: city,
                    latitude: latitude,
                    longitude: try reader.double()
                )
            )
        }
        guard reader.at == block.count else { throw CorruptBlock(reason: "\(block.count - reader.at) bytes after its \(count) houses") }
    }

    /// Walks the block's `count` houses with `decode`'s checks, one for one, and hands each house's id (its UTF-8
    /// bytes) to `body` without making a text of anything: what a change file reads of the blocks it leaves as they
    /// are (`HouseList`'s users in the stores). A block this accepts, `decode` reads, and the other way round (tested on
    /// damaged blocks).
    public static func forEachID(
        _ block: UnsafeRawBufferPointer,
        count: Int,
        _ body: (UnsafeRawBufferPointer) -> Void
    ) throws(CorruptBlock) {
        guard let first = block.first, first == 1 || first == version else {
            throw CorruptBlock(reason: "version \(block.first.map(String.init) ?? "none"), not 1 or \(version)")
        }
        var reader = Reader(block: block, at: 1)
        var textCount: UInt64?
        if first == 2 {
            let count = try reader.varint()
            guard count <= UInt64(block.count) else { throw CorruptBlock(reason: "\(count) texts in \(block.count) bytes") }
            for _ in 0..<count { _ = try reader.bytes(Int(clamping: try reader.varint()), what: "a text") }
            textCount = count
        }
        func shared() throws(CorruptBlock) {
            guard let textCount else {
                _ = try reader.textBytes()
                return
            }
            let k = try reader.varint()
            guard k <= textCount else { throw CorruptBlock(reason: "a reference to text \(k) of \(textCount)") }
        }
        var previousID: [UInt8] = []
        for _ in 0..<count {
            var hasID = true
            if textCount != nil {
                let sharedBytes = try reader.varint()
                guard sharedBytes <= UInt64(previousID.count) else {
                    throw CorruptBlock(reason: "an id sharing \(sharedBytes) bytes of the \(previousID.count) before it")
                }
                previousID.removeSubrange(Int(sharedBytes)...)
                previousID.append(contentsOf: try reader.bytes(Int(clamping: try reader.varint()), what: "an id").buffer)
            } else if let id = try reader.textBytes() {
                previousID.removeAll(keepingCapacity: true)
                previousID.append(contentsOf: id)
            } else {
                hasID = false
            }
            try shared()
            try shared()
            let hasNumber = try reader.textBytes() != nil
            _ = try reader.textBytes()
            try shared()
            try shared()
            guard hasID, hasNumber else { throw CorruptBlock(reason: "a house without an id or a number") }
            _ = try reader.double()
            _ = try reader.double()
            previousID.withUnsafeBytes(body)
        }
        guard reader.at == block.count else { throw CorruptBlock(reason: "\(block.count - reader.at) bytes after its \(count) houses") }
    }

    /// Reads a block's varints, texts and coordinates, refusing any that runs past its end.
    struct Reader {
        let block: UnsafeRawBufferPointer
        var at: Int

        mutating func varint() throws(CorruptBlock) -> UInt64 {
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

        /// The next `length` bytes.
        mutating func bytes(_ length: Int, what: String) throws(CorruptBlock) -> Slice {
            guard length <= block.count - at else { throw CorruptBlock(reason: "\(what) of \(length) bytes runs past the block's end") }
            defer { at += length }
            return Slice(buffer: UnsafeRawBufferPointer(rebasing: block[at..<(at + length)]))
        }

        struct Slice {
            let buffer: UnsafeRawBufferPointer
            var string: String { String(decoding: buffer, as: UTF8.self) }
        }

        /// A text written as its length plus one (0: none) and its bytes.
        mutating func text() throws(CorruptBlock) -> String? {
            try textBytes().map { String(decoding: $0, as: UTF8.self) }
        }

        /// `text()`'s bytes, not made a text.
        mutating func textBytes() throws(CorruptBlock) -> UnsafeRawBufferPointer? {
            let stored = try varint()
            guard stored > 0 else { return nil }
            return try bytes(Int(clamping: stored - 1), what: "a text").buffer
        }

        mutating func double() throws(CorruptBlock) -> Double {
            guard block.count - at >= 8 else { throw CorruptBlock(reason: "a coordinate runs past the block's end") }
            defer { at += 8 }
            return Double(bitPattern: UInt64(littleEndian: block.loadUnaligned(fromByteOffset: at, as: UInt64.self)))
        }
    }
}
