import Foundation
import GeoCore
import TestSupport
import Testing

@testable import SnapshotFile

/// `SnapshotWriter` writes whole buffers around the page cache (`O_DIRECT`) and the rest through it: the file must be
/// byte for byte the one a writer through the page cache makes, whatever its length against pages and buffers.
@Suite struct SnapshotWriterTests {
    let scratch = ScratchDirectory("writer")

    /// Payload lengths around the edges: empty, under a page, a file of exactly whole pages, exactly one buffer, and
    /// several buffers with a tail.
    static let lengths = [
        0, 100, 4_096 - SnapshotLayout.headerSize - 8, SnapshotWriter.bufferSize - SnapshotLayout.headerSize - 8,
        2 * SnapshotWriter.bufferSize + 12_345,
    ]

    @Test(arguments: lengths) func directWritesMakeTheSameFile(length: Int) throws {
        var random = testRandom("directWritesMakeTheSameFile-\(length)")
        let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        var files: [Data] = []
        for direct in [true, false] {
            let path = scratch.url.appendingPathComponent("\(length)-\(direct).snapshot").path
            let writer = try SnapshotWriter(path: path, formatVersion: 3, direct: direct)
            try writer.write(bytes)
            try writer.commit()
            let reader = try SnapshotReader(path: path, formatVersion: 3)
            let back: [UInt8] = try reader.read()
            #expect(back == bytes, "direct: \(direct)")
            #expect(reader.isAtEnd)
            files.append(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        #expect(files[0] == files[1], "the file written around the page cache differs from the one written through it")
        let size = SnapshotLayout.headerSize + 8 + length + SnapshotLayout.padding(length)
        #expect(files[0].count == size)
    }
}
