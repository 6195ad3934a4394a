import CZlib
import Foundation

/// Streams an OpenStreetMap `.osm.pbf` file block by block (https://wiki.openstreetmap.org/wiki/PBF_Format).
///
/// The file is a sequence of (4-byte big-endian length, `BlobHeader`, `Blob`); the first blob is the `OSMHeader`,
/// every later `OSMData` blob a `PrimitiveBlock` of nodes (plain or dense), ways and relations with its own string
/// table, granularity and offsets. Memory is one block at a time (at most 32 MiB decompressed, the format's limit).
public final class PBFReader {
    /// The format's limits: a blob header under 64 KiB, a blob under 32 MiB.
    static let maximumHeaderSize = 64 * 1024
    static let maximumBlobSize = 32 * 1024 * 1024
    /// Required features this reader implements.
    public static let supportedFeatures: Set<String> = ["OsmSchema-V0.6", "DenseNodes"]

    public let path: String
    public private(set) var header = OSMHeader()
    private let file: UnsafeMutablePointer<FILE>
    /// Byte offset of the next blob.
    public private(set) var offset = 0
    public let fileSize: Int

    /// Opens `path` and reads its header block.
    /// - Throws: `PBFError` when the file cannot be opened, is not a PBF file, or requires an unsupported feature.
    public init(path: String) throws(PBFError) {
        guard let file = fopen(path, "rb") else { throw .cannotOpen(path: path) }
        self.path = path
        self.file = file
        fileSize = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        guard let first = try nextFramedBlob() else { throw .missingHeader }
        guard first.type == "OSMHeader" else { throw .missingHeader }
        header = try Self.decodeHeader(try Self.decompress(first.data, offset: first.offset), offset: first.offset)
        for feature in header.requiredFeatures where !Self.supportedFeatures.contains(feature) {
            throw .unsupportedFeature(feature)
        }
    }

    deinit { fclose(file) }

    /// The next primitive block, or nil at the end of the file. Blobs of unknown types are skipped, as the
    /// format says readers must.
    public func nextBlock() throws(PBFError) -> OSMBlock? {
        while let blob = try nextRawBlob() {
            if let block = try Self.block(of: blob) { return block }
        }
        return nil
    }

    /// The next blob as it is in the file (still compressed), or nil at the end: reading the bytes is the only part of
    /// a block that must happen in file order, so readers on several threads share the file through this and
    /// `block(of:)`.
    public func nextRawBlob() throws(PBFError) -> RawBlob? {
        while let blob = try nextFramedBlob() {
            if blob.type == "OSMData" { return blob }
        }
        return nil
    }

    /// The primitive block of a blob from `nextRawBlob()`: decompressed and decoded, on any thread.
    public static func block(of blob: RawBlob) throws(PBFError) -> OSMBlock? {
        guard blob.type == "OSMData" else { return nil }
        let data = try decompress(blob.data, offset: blob.offset)
        do {
            return try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws -> OSMBlock in
                try PrimitiveBlockDecoder.decode(bytes, offset: blob.offset)
            }
        } catch {
            throw .corruptBlob(offset: blob.offset, reason: "primitive block: \(error)")
        }
    }

    /// Calls `body` with every primitive block in file order.
    public func forEachBlock(_ body: (OSMBlock) throws -> Void) throws {
        while let block = try nextBlock() { try body(block) }
    }

    // MARK: Framing

    /// One blob of the file, still compressed: its type, its bytes, and the byte offsets where it starts (what
    /// errors name) and ends.
    public struct RawBlob: Sendable {
        public let type: String
        let data: [UInt8]
        public let offset: Int
        public let end: Int
    }

    private func readExactly(_ count: Int, blobOffset: Int) throws(PBFError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        // SAFETY: fread writes at most `count` bytes into the buffer's own storage.
        let read = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, count, file) }
        offset += read
        guard read == count else { throw .truncated(offset: blobOffset) }
        return buffer
    }

    private func nextFramedBlob() throws(PBFError) -> RawBlob? {
        let blobOffset = offset
        var lengthBytes = [UInt8](repeating: 0, count: 4)
        let got = lengthBytes.withUnsafeMutableBytes { fread($0.baseAddress, 1, 4, file) }
        offset += got
        if got == 0 { return nil }
        guard got == 4 else { throw .truncated(offset: blobOffset) }
        let headerLength = lengthBytes.reduce(0) { $0 << 8 | Int($1) }
        guard headerLength > 0, headerLength <= Self.maximumHeaderSize else {
            throw .corruptBlob(offset: blobOffset, reason: "blob header length \(headerLength) is outside 1...\(Self.maximumHeaderSize)")
        }
        let headerBytes = try readExactly(headerLength, blobOffset: blobOffset)
        var type: String?
        var dataSize: Int?
        do {
            try headerBytes.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws -> Void in
                var reader = ProtobufReader(bytes)
                while let field = try reader.nextField() {
                    switch (field.number, field.type) {
                    case (1, .lengthDelimited): type = try reader.string(try reader.lengthDelimited())
                    case (3, .varint): dataSize = Int(truncatingIfNeeded: try reader.varint())
                    default: try reader.skip(field.type)
                    }
                }
            }
        } catch {
            throw .corruptBlob(offset: blobOffset, reason: "blob header: \(error)")
        }
        guard let type, let dataSize else { throw .corruptBlob(offset: blobOffset, reason: "blob header without type or datasize") }
        guard dataSize >= 0, dataSize <= Self.maximumBlobSize else {
            throw .corruptBlob(offset: blobOffset, reason: "blob size \(dataSize) is outside 0...\(Self.maximumBlobSize)")
        }
        let blob = try readExactly(dataSize, blobOffset: blobOffset)
        return RawBlob(type: type, data: blob, offset: blobOffset, end: offset)
    }

    /// A `Blob` message's payload: raw, or zlib-compressed with its declared raw size.
    static func decompress(_ blob: [UInt8], offset: Int) throws(PBFError) -> [UInt8] {
        var raw: Range<Int>?
        var zlib: Range<Int>?
        var rawSize: Int?
        var other: String?
        do {
            try blob.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws -> Void in
                var reader = ProtobufReader(bytes)
                while let field = try reader.nextField() {
                    switch (field.number, field.type) {
                    case (1, .lengthDelimited): raw = try reader.lengthDelimited()
                    case (2, .varint): rawSize = Int(truncatingIfNeeded: try reader.varint())
                    case (3, .lengthDelimited): zlib = try reader.lengthDelimited()
                    case (4, _):
                        other = "lzma"
                        try reader.skip(field.type)
                    case (5, _):
                        other = "bzip2"
                        try reader.skip(field.type)
                    case (6, _):
                        other = "lz4"
                        try reader.skip(field.type)
                    case (7, _):
                        other = "zstd"
                        try reader.skip(field.type)
                    default: try reader.skip(field.type)
                    }
                }
            }
        } catch {
            throw .corruptBlob(offset: offset, reason: "blob: \(error)")
        }
        if let raw { return Array(blob[raw]) }
        if let other { throw .unsupportedCompression(offset: offset, method: other) }
        guard let zlib else { throw .corruptBlob(offset: offset, reason: "blob without data") }
        guard let rawSize, rawSize >= 0, rawSize <= maximumBlobSize else {
            throw .corruptBlob(offset: offset, reason: "zlib blob without a raw size within 0...\(maximumBlobSize)")
        }
        var output = [UInt8](repeating: 0, count: rawSize)
        var outputLength = uLongf(rawSize)
        // SAFETY: uncompress writes at most `outputLength` bytes to the output buffer and reads exactly the zlib
        // range of the blob, both of which are owned by these arrays for the call.
        let status = output.withUnsafeMutableBytes { out in
            blob.withUnsafeBytes { input in
                uncompress(
                    out.baseAddress?.assumingMemoryBound(to: Bytef.self),
                    &outputLength,
                    input.baseAddress!.advanced(by: zlib.lowerBound).assumingMemoryBound(to: Bytef.self),
                    uLong(zlib.count)
                )
            }
        }
        guard status == Z_OK else {
            let reason =
                status == Z_DATA_ERROR
                ? "zlib data is corrupt" : status == Z_BUF_ERROR ? "zlib data is longer than its declared raw size" : "zlib error \(status)"
            throw .corruptBlob(offset: offset, reason: reason)
        }
        guard Int(outputLength) == rawSize else {
            throw .corruptBlob(offset: offset, reason: "zlib data decompressed to \(outputLength) bytes, not the declared \(rawSize)")
        }
        return output
    }

    static func decodeHeader(_ data: [UInt8], offset: Int) throws(PBFError) -> OSMHeader {
        var header = OSMHeader()
        do {
            try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws -> Void in
                var reader = ProtobufReader(bytes)
                while let field = try reader.nextField() {
                    switch (field.number, field.type) {
                    case (1, .lengthDelimited):
                        var box = ProtobufReader(bytes, range: try reader.lengthDelimited())
                        var edges: [Int: Int64] = [:]
                        while let f = try box.nextField() {
                            if f.type == .varint, (1...4).contains(f.number) { edges[f.number] = try box.sint64() } else { try box.skip(f.type) }
                        }
                        if let left = edges[1], let right = edges[2], let top = edges[3], let bottom = edges[4] {
                            // Nanodegrees to OSM's 1e-7°, truncated as libosmium reads them (osmium writes them back
                            // so): the box the sea is closed along is then the same whoever read the header.
                            func degrees(_ nano: Int64) -> Double { Double(nano / 100) / 1e7 }
                            header.bbox = (degrees(left), degrees(bottom), degrees(right), degrees(top))
                        }
                    case (4, .lengthDelimited): header.requiredFeatures.append(try reader.string(try reader.lengthDelimited()))
                    case (5, .lengthDelimited): header.optionalFeatures.append(try reader.string(try reader.lengthDelimited()))
                    case (16, .lengthDelimited): header.writingProgram = try reader.string(try reader.lengthDelimited())
                    case (17, .lengthDelimited): header.source = try reader.string(try reader.lengthDelimited())
                    case (32, .varint): header.replicationTimestamp = try reader.int64()
                    case (33, .varint): header.replicationSequence = try reader.int64()
                    case (34, .lengthDelimited): header.replicationBaseURL = try reader.string(try reader.lengthDelimited())
                    default: try reader.skip(field.type)
                    }
                }
            }
        } catch {
            throw .corruptBlob(offset: offset, reason: "header block: \(error)")
        }
        return header
    }
}
