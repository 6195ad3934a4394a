/// Geohash (G. Niemeyer, 2008): a cell of the lon/lat plane named by interleaving longitude and latitude
/// bisection bits, longitude first, five bits per base-32 character.
///
/// Besides the string form there is a 64-bit integer form: the 60 bits of a 12-character geohash, left-aligned
/// (the low 4 bits are zero). Because the base-32 alphabet is in ASCII order, integers sort exactly like the
/// strings, and the cells of precision p are the ranges that share the top 5p bits.
public struct Geohash: Hashable, Sendable, Comparable, CustomStringConvertible {
    public static let alphabet: [UInt8] = Array("0123456789bcdefghjkmnpqrstuvwxyz".utf8)
    public static let maximumPrecision = 12
    static let bitsPerAxis = 30

    /// The 60-bit interleaved value, left-aligned in 64 bits; bits below the precision are zero.
    public let bits: UInt64
    /// Number of characters, 1...12.
    public let precision: Int

    /// The cell of precision `precision` containing the point.
    public init(latitude: Double, longitude: Double, precision: Int = 12) throws(GeoError) {
        guard (1...Geohash.maximumPrecision).contains(precision) else { throw .invalidGeohashPrecision(precision) }
        let full = Geohash.encode(latitude: latitude, longitude: longitude)
        self.init(bits: full, precision: precision)
    }

    public init(_ coordinate: Coordinate, precision: Int = 12) throws(GeoError) {
        try self.init(latitude: coordinate.latitude, longitude: coordinate.longitude, precision: precision)
    }

    /// Parses the string form (case-insensitive).
    public init(_ text: String) throws(GeoError) {
        let utf8 = Array(text.lowercased().utf8)
        guard (1...Geohash.maximumPrecision).contains(utf8.count) else { throw .invalidGeohash(text) }
        var bits: UInt64 = 0
        for (index, char) in utf8.enumerated() {
            guard let value = Geohash.decodeTable[Int(char)] else { throw .invalidGeohash(text) }
            bits |= UInt64(value) << UInt64(59 - 5 * index)
        }
        self.init(bits: bits, precision: utf8.count)
    }

    /// The cell of `precision` containing the full-precision integer geohash `bits`.
    public init(bits: UInt64, precision: Int) {
        self.precision = precision
        self.bits = bits & Geohash.mask(precision: precision)
    }

    /// The mask keeping the top 5·precision bits.
    @inlinable
    public static func mask(precision: Int) -> UInt64 {
        precision >= 12 ? ~UInt64(0xF) : ~(UInt64.max >> UInt64(5 * precision))
    }

    public var string: String {
        var chars: [UInt8] = []
        chars.reserveCapacity(precision)
        for index in 0..<precision {
            let value = Int((bits >> UInt64(59 - 5 * index)) & 0x1F)
            chars.append(Geohash.alphabet[value])
        }
        return String(decoding: chars, as: UTF8.self)
    }

    public var description: String { string }

    public static func < (lhs: Geohash, rhs: Geohash) -> Bool {
        lhs.bits != rhs.bits ? lhs.bits < rhs.bits : lhs.precision < rhs.precision
    }

    /// The cell's extent.
    public var bounds: BoundingBox {
        let (latIndex, lonIndex) = Geohash.deinterleave(bits)
        let lonBits = (5 * precision + 1) / 2
        let latBits = (5 * precision) / 2
        let lonCell = Double(lonIndex >> UInt32(Geohash.bitsPerAxis - lonBits))
        let latCell = Double(latIndex >> UInt32(Geohash.bitsPerAxis - latBits))
        let lonSize = 360.0 / Double(1 << lonBits)
        let latSize = 180.0 / Double(1 << latBits)
        return BoundingBox(
            uncheckedWest: -180 + lonCell * lonSize,
            south: -90 + latCell * latSize,
            east: -180 + (lonCell + 1) * lonSize,
            north: -90 + (latCell + 1) * latSize
        )
    }

    /// The cell's centre.
    public var center: Coordinate {
        let box = bounds
        return Coordinate(uncheckedLatitude: (box.south + box.north) / 2, longitude: (box.west + box.east) / 2)
    }

    /// Cell width and height in degrees at a precision.
    public static func cellSize(precision: Int) -> (longitude: Double, latitude: Double) {
        let lonBits = (5 * precision + 1) / 2
        let latBits = (5 * precision) / 2
        return (360.0 / Double(1 << lonBits), 180.0 / Double(1 << latBits))
    }

    /// The neighbouring cell in a direction (dx, dy in cells: east +1, north +1), wrapping across the antimeridian;
    /// nil beyond a pole.
    public func neighbor(dx: Int, dy: Int) -> Geohash? {
        let box = bounds
        let size = Geohash.cellSize(precision: precision)
        let lat = (box.south + box.north) / 2 + Double(dy) * size.latitude
        guard lat > -90, lat < 90 else { return nil }
        let lon = Coordinate.wrapLongitude((box.west + box.east) / 2 + Double(dx) * size.longitude)
        return Geohash(bits: Geohash.encode(latitude: lat, longitude: lon), precision: precision)
    }

    /// The eight surrounding cells, clockwise from north: n, ne, e, se, s, sw, w, nw (nil beyond a pole).
    public var neighbors: [Geohash?] {
        [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)].map { neighbor(dx: $0.0, dy: $0.1) }
    }

    // MARK: - Integer form

    /// The full-precision (60-bit, left-aligned) geohash of a point. Latitude 90 and longitude 180 fall in the
    /// last cell, as with bisection.
    @inlinable
    public static func encode(latitude: Double, longitude: Double) -> UInt64 {
        let scale = Double(1 << 30)
        let latIndex = UInt32(min(scale - 1, max(0, ((latitude + 90) / 180 * scale).rounded(.down))))
        let lonIndex = UInt32(min(scale - 1, max(0, ((longitude + 180) / 360 * scale).rounded(.down))))
        return interleave(latIndex: latIndex, lonIndex: lonIndex)
    }

    /// Interleaves 30-bit indices, longitude bit first, into the top 60 bits.
    @inlinable
    public static func interleave(latIndex: UInt32, lonIndex: UInt32) -> UInt64 {
        (spread(UInt64(lonIndex)) << 1 | spread(UInt64(latIndex))) << 4
    }

    /// Splits a left-aligned geohash into its 30-bit latitude and longitude indices.
    @inlinable
    public static func deinterleave(_ bits: UInt64) -> (latIndex: UInt32, lonIndex: UInt32) {
        let value = bits >> 4
        return (UInt32(compact(value)), UInt32(compact(value >> 1)))
    }

    /// Spreads the low 32 bits of `x` to the even bit positions (Morton order).
    @inlinable
    static func spread(_ value: UInt64) -> UInt64 {
        var x = value & 0xFFFF_FFFF
        x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF
        x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF
        x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F
        x = (x | (x << 2)) & 0x3333_3333_3333_3333
        x = (x | (x << 1)) & 0x5555_5555_5555_5555
        return x
    }

    /// The inverse of `spread`: gathers the even bit positions.
    @inlinable
    static func compact(_ value: UInt64) -> UInt64 {
        var x = value & 0x5555_5555_5555_5555
        x = (x | (x >> 1)) & 0x3333_3333_3333_3333
        x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F
        x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF
        x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF
        x = (x | (x >> 16)) & 0x0000_0000_FFFF_FFFF
        return x
    }

    /// The centre of the finest (precision 12) cell of a full-precision value: its position to about 2 cm.
    public static func approximatePosition(_ bits: UInt64) -> (latitude: Double, longitude: Double) {
        let (latIndex, lonIndex) = deinterleave(bits)
        let scale = Double(1 << 30)
        return ((Double(latIndex) + 0.5) / scale * 180 - 90, (Double(lonIndex) + 0.5) / scale * 360 - 180)
    }

    private static let decodeTable: [UInt8?] = {
        var table = [UInt8?](repeating: nil, count: 256)
        for (index, char) in alphabet.enumerated() { table[Int(char)] = UInt8(index) }
        return table
    }()
}
