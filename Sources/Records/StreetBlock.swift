import GeoCore

/// Street and interpolation lines as a store keeps them in blocks (the PostgreSQL store's `street_block`): per line,
/// varints of its id, kind, names, city and postcode (texts with their length), its vertices as zigzag differences in
/// 1e-7° (OSM's precision: what SQLite's `street_line` keeps too, `AddressData.asStored`), and its numbered vertices.
/// Format version 1: the byte 1 first.
public enum StreetBlock {
    public static let size = 20_000
    static let version: UInt8 = 1

    public static func encode(_ lines: some Collection<StreetLine>) -> [UInt8] {
        var out = VarintWriter()
        out.bytes.append(version)
        out.varint(UInt64(lines.count))
        for line in lines {
            out.text(line.id)
            out.text(line.kind.rawValue)
            out.varint(UInt64(line.names.count))
            for name in line.names { out.text(name) }
            optional(line.city, &out)
            optional(line.postcode, &out)
            out.vertices(line.points)
            out.varint(UInt64(line.numbers.count))
            for numbered in line.numbers {
                out.varint(UInt64(numbered.vertex))
                out.signed(Int64(numbered.number))
            }
        }
        return out.bytes
    }

    static func optional(_ text: String?, _ out: inout VarintWriter) {
        guard let text else { return out.varint(0) }
        out.varint(1)
        out.text(text)
    }

    public static func decode(_ bytes: UnsafeRawBufferPointer, into lines: inout [StreetLine]) throws(AddressBlock.CorruptBlock) {
        var reader = VarintReader(bytes: bytes)
        guard try reader.byte() == version else { throw AddressBlock.CorruptBlock(reason: "street block of an unknown version") }
        let count = Int(try reader.varint())
        guard count <= bytes.count else { throw AddressBlock.CorruptBlock(reason: "\(count) street lines in \(bytes.count) bytes") }
        func optional(_ reader: inout VarintReader) throws(AddressBlock.CorruptBlock) -> String? {
            try reader.varint() == 0 ? nil : try reader.text()
        }
        for _ in 0..<count {
            let id = try reader.text()
            let kind = StreetLine.Kind(rawValue: try reader.text()) ?? .street
            let nameCount = Int(try reader.varint())
            guard nameCount <= bytes.count else { throw AddressBlock.CorruptBlock(reason: "\(nameCount) names") }
            var names: [String] = []
            for _ in 0..<nameCount { names.append(try reader.text()) }
            let city = try optional(&reader)
            let postcode = try optional(&reader)
            let points = try reader.vertices()
            let numberCount = Int(try reader.varint())
            guard numberCount <= bytes.count else { throw AddressBlock.CorruptBlock(reason: "\(numberCount) numbered vertices") }
            var numbers: [NumberedVertex] = []
            for _ in 0..<numberCount {
                let vertex = Int(try reader.varint())
                numbers.append(NumberedVertex(vertex: vertex, number: Int(try reader.signed())))
            }
            lines.append(StreetLine(id: id, kind: kind, names: names, points: points, numbers: numbers, city: city, postcode: postcode))
        }
    }
}

extension VarintWriter {
    /// Vertices as the block formats keep them: their count, then each as zigzag differences from the one before in
    /// units of 1e-7° (`AddressData.storedUnits`).
    mutating func vertices(_ points: [Coordinate2]) {
        varint(UInt64(points.count))
        var (latitude, longitude): (Int64, Int64) = (0, 0)
        for point in points {
            let (y, x) = (Int64(AddressData.storedUnits(point.latitude)), Int64(AddressData.storedUnits(point.longitude)))
            signed(y - latitude)
            signed(x - longitude)
            (latitude, longitude) = (y, x)
        }
    }
}

extension VarintReader {
    /// Vertices written by `VarintWriter.vertices`.
    mutating func vertices() throws(AddressBlock.CorruptBlock) -> [Coordinate2] {
        let count = Int(try varint())
        guard count <= bytes.count else { throw AddressBlock.CorruptBlock(reason: "\(count) vertices") }
        var points: [Coordinate2] = []
        points.reserveCapacity(count)
        var (latitude, longitude): (Int64, Int64) = (0, 0)
        for _ in 0..<count {
            latitude &+= try signed()
            longitude &+= try signed()
            points.append(Coordinate2(Double(latitude) / 1e7, Double(longitude) / 1e7))
        }
        return points
    }
}
