import CChecksum
import Foundation
import TestSupport
import Testing

@testable import SnapshotFile

/// Snapshots are checksummed with CRC-32C (`SnapshotChecksum`): the instruction and the bit-by-bit fallback against
/// published vectors and each other, and files of either kind read back.
@Suite struct SnapshotChecksumTests {
    let scratch = ScratchDirectory("checksum")

    /// RFC 3720 (iSCSI), appendix B.4, and the customary check value of "123456789" (CRC-32's by zlib beside it).
    static let vectors: [(bytes: [UInt8], crc32c: UInt32)] = [
        ([UInt8](repeating: 0, count: 32), 0x8A91_36AA),
        ([UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
        (Array(0...31), 0x46DD_794E),
        (Array((0...31).reversed()), 0x113F_DB5C),
        (Array("123456789".utf8), 0xE306_9283),
    ]

    func crc(_ kind: SnapshotChecksum, _ bytes: [UInt8], from start: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { kind.update(start, $0) }
    }

    @Test func publishedVectors() {
        for (bytes, expected) in Self.vectors {
            #expect(crc(.crc32c, bytes) == expected, "\(bytes)")
            #expect(bytes.withUnsafeBytes { poi_crc32c_software(0, $0.baseAddress, $0.count) } == expected, "software, \(bytes)")
            if SnapshotChecksum.hardware {
                #expect(bytes.withUnsafeBytes { poi_crc32c_hardware(0, $0.baseAddress, $0.count) } == expected, "instruction, \(bytes)")
            }
        }
        #expect(crc(.crc32, Array("123456789".utf8)) == 0xCBF4_3926)
    }

    /// Random bytes at every alignment, in random pieces: the instruction's result is the fallback's, and a checksum
    /// continued piece by piece is the one of the whole.
    @Test func instructionMatchesFallbackInPieces() {
        var random = testRandom("instructionMatchesFallbackInPieces")
        for _ in 0..<200 {
            let bytes = (0..<Int(random.next() % 3_000)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let whole = bytes.withUnsafeBytes { poi_crc32c_software(0, $0.baseAddress, $0.count) }
            var continued: UInt32 = 0
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + 1 + Int(random.next() % 50))
                continued = bytes.withUnsafeBytes { SnapshotChecksum.crc32c.update(continued, UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
                start = end
            }
            #expect(continued == whole, "\(bytes.count) bytes")
            if SnapshotChecksum.hardware {
                #expect(bytes.withUnsafeBytes { poi_crc32c_hardware(0, $0.baseAddress, $0.count) } == whole, "\(bytes.count) bytes")
            }
        }
    }

    /// A file with the header's checksum kind set to `kind` and `checksum` in its place.
    func rewritten(_ path: String, kind: UInt32, checksum: (Data) -> UInt32) throws -> String {
        var file = try Data(contentsOf: URL(fileURLWithPath: path))
        let payload = file.subdata(in: SnapshotLayout.headerSize..<file.count)
        withUnsafeBytes(of: kind.littleEndian) { file.replaceSubrange(12..<16, with: $0) }
        withUnsafeBytes(of: checksum(payload).littleEndian) { file.replaceSubrange(24..<28, with: $0) }
        let out = path + ".kind\(kind)"
        try file.write(to: URL(fileURLWithPath: out))
        return out
    }

    @Test func filesOfEitherKindAreRead() throws {
        let path = scratch.url.appendingPathComponent("values.snapshot").path
        let values: [UInt64] = Array(0..<5_000).map { $0 &* 0x9E37_79B9_7F4A_7C15 }
        let writer = try SnapshotWriter(path: path, formatVersion: 2)
        try writer.write(values)
        try writer.commit()
        let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(16)
        #expect(header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self) } == SnapshotChecksum.written.rawValue)
        #expect(SnapshotChecksum.written == (SnapshotChecksum.hardware ? .crc32c : .crc32))
        let back: [UInt64] = try SnapshotReader(path: path, formatVersion: 2).read()
        #expect(back == values)

        // A file of an earlier build (or of a processor without the instruction): CRC-32 as zlib computes it, kind 0.
        let older = try rewritten(path, kind: 0) { payload in payload.withUnsafeBytes { SnapshotChecksum.crc32.update(0, $0) } }
        let olderBack: [UInt64] = try SnapshotReader(path: older, formatVersion: 2).read()
        #expect(olderBack == values)

        // A file written with CRC-32C (kind 1) is read whatever this processor has; kind 0 with its value does not match.
        let crc32c = try rewritten(path, kind: 1) { payload in payload.withUnsafeBytes { SnapshotChecksum.crc32c.update(0, $0) } }
        let crc32cBack: [UInt64] = try SnapshotReader(path: crc32c, formatVersion: 2).read()
        #expect(crc32cBack == values)
        let mixed = try rewritten(path, kind: 0) { payload in payload.withUnsafeBytes { SnapshotChecksum.crc32c.update(0, $0) } }
        #expect(throws: SnapshotError.corrupt(path: mixed, reason: "checksum mismatch")) { try SnapshotReader(path: mixed, formatVersion: 2) }

        // A kind this program does not know: another format, rebuilt.
        let unknown = try rewritten(path, kind: 7) { _ in 0 }
        #expect(throws: SnapshotError.wrongFormat(path: unknown, reason: "checksum kind 7, this program knows 0 (CRC-32) and 1 (CRC-32C)")) {
            try SnapshotReader(path: unknown, formatVersion: 2)
        }
    }
}
