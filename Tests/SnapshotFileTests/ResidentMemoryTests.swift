import Foundation
import SnapshotFile
import TestSupport
import Testing

/// The registry behind `--preload`: every live mapping is known while an array reads from it, a warming pass reads
/// it (and the values read afterwards are the same), and an unmapped region is forgotten.
@Suite struct ResidentMemoryTests {
    let scratch = ScratchDirectory("poi-resident")

    @Test func warmingCoversEveryLiveMappingAndForgetsUnmappedOnes() throws {
        let path = scratch.file("r.snapshot")
        let values = (0..<200_000).map { UInt64($0 &* 2_654_435_761) }
        let writer = try SnapshotWriter(path: path, formatVersion: 1)
        try writer.write(FlatArray(values))
        try writer.commit()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        var flat: FlatArray<UInt64>? = nil
        var region: MappedRegion? = nil
        do {
            let reader = try SnapshotReader(path: path, formatVersion: 1)
            flat = try reader.readFlat()
            region = reader.region
            reader.releaseResidentPages()
        }
        var address: UInt = 0
        do {
            let mapped = try #require(region)
            #expect(mapped.length == size)
            #expect(ResidentMemory.isRegistered(mapped), "a mapping an array reads from is registered")
            // Other tests map snapshots at the same time: the pass covers at least this one.
            #expect(ResidentMemory.warmMappings() >= size)
            #expect(flat?.array == values, "warming only reads")
            address = UInt(bitPattern: mapped.base)
        }
        region = nil
        flat = nil
        #expect(!ResidentMemory.isRegistered(address: address), "an unmapped region is forgotten")
    }
}
