import Foundation
import GeoCore
import NIOCore
import PostgresNIO
import Records

/// Houses, street lines and map areas in the shared store, so that every replica geocodes houses as a single server does
/// (docs/ARCHITECTURE.md, "Consistency"): houses in `AddressBlock`s (`address_block`), lines in `StreetBlock`s
/// (`street_block`), water and buildings in `MapAreaBlock`s (`area_block`), and a generation (`address_state`) that changes with every replacement. A replacement is a write
/// like any other: it takes the next change sequence and wakes the followers, who find the generation changed and
/// load the addresses again (`SearchEngine.catchUpHoldingWriter`).
extension PostgresStore {
    public var keepsAddresses: Bool { true }

    public func loadAddresses() throws(CatalogError) -> AddressData {
        try main.run { connection in
            try PostgresStore.transaction(connection, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger, within: 600) {
                var data = AddressData()
                let houses = try connection.query("SELECT count, data FROM address_block ORDER BY seq", logger: logger)
                    .answer(on: connection, within: 600)
                var blocks: [HouseList.Block] = []
                for row in houses {
                    let (count, buffer) = try row.decode((Int32, ByteBuffer).self)
                    blocks.append(HouseList.Block(bytes: Array(buffer.readableBytesView), count: Int(count)))
                }
                data.addresses = try AddressBlock.CorruptBlock.reading("the address blocks are") { () throws(AddressBlock.CorruptBlock) in
                    try HouseList(checking: blocks)
                }
                let streets = try connection.query("SELECT seq, data FROM street_block ORDER BY seq", logger: logger)
                    .answer(on: connection, within: 600)
                for row in streets {
                    let (seq, buffer) = try row.decode((Int32, ByteBuffer).self)
                    do {
                        try buffer.withUnsafeReadableBytes { bytes in try StreetBlock.decode(bytes, into: &data.streets) }
                    } catch let error as AddressBlock.CorruptBlock {
                        throw CatalogError.storage("street block \(seq) is corrupt: \(error.reason)")
                    }
                }
                let areas = try connection.query("SELECT data FROM area_block ORDER BY seq", logger: logger)
                    .answer(on: connection, within: 600)
                var areaBlocks: [[UInt8]] = []
                for row in areas { areaBlocks.append(Array(try row.decode(ByteBuffer.self).readableBytesView)) }
                data.areas = try AddressBlock.CorruptBlock.reading("the area blocks are") { () throws(AddressBlock.CorruptBlock) in
                    try AreaList(checking: areaBlocks)
                }
                return data
            }
        }
    }

    @discardableResult
    public func replaceAddresses(_ data: AddressData, osm: OSMMirrorState?) throws(CatalogError) -> String {
        let generation = UUID().uuidString
        let houseBlocks = data.addresses.blocks.map { ($0.count, ByteBuffer(bytes: $0.bytes)) }
        var streetBlocks: [ByteBuffer] = []
        for start in stride(from: 0, to: data.streets.count, by: StreetBlock.size) {
            streetBlocks.append(ByteBuffer(bytes: StreetBlock.encode(data.streets[start..<min(start + StreetBlock.size, data.streets.count)])))
        }
        let areaBlocks = data.areas.blocks().map { ByteBuffer(bytes: $0) }
        return try main.run { connection in
            try PostgresStore.transaction(connection, "BEGIN", logger: logger, within: 600) {
                _ = try connection.query("SET LOCAL idle_in_transaction_session_timeout = '60s'", logger: logger).answer(on: connection)
                // A write like the others: the next sequence (its row lock orders writers), then a wake-up.
                let rows = try connection.query("UPDATE store_state SET sequence = sequence + 1 WHERE id = 1 RETURNING sequence", logger: logger)
                    .answer(on: connection)
                guard let number = try rows.first?.decode(Int64.self) else { throw CatalogError.storage("store_state has no row") }
                _ = try connection.query("DELETE FROM address_block", logger: logger).answer(on: connection, within: 600)
                _ = try connection.query("DELETE FROM street_block", logger: logger).answer(on: connection, within: 600)
                _ = try connection.query("DELETE FROM area_block", logger: logger).answer(on: connection, within: 600)
                // The houses' blocks (thousands of `AddressBlock.size`) in one statement: arrays bound as parameters,
                // one round trip instead of one a block.
                let seqs = houseBlocks.indices.map { Int32($0) }
                let counts = houseBlocks.map { Int32($0.0) }
                let blocks = houseBlocks.map(\.1)
                _ = try connection.query(
                    "INSERT INTO address_block (seq, count, data) SELECT * FROM unnest(\(seqs)::integer[], \(counts)::integer[], \(blocks)::bytea[])",
                    logger: logger
                ).answer(on: connection, within: 600)
                for (seq, block) in streetBlocks.enumerated() {
                    _ = try connection.query("INSERT INTO street_block (seq, data) VALUES (\(Int32(seq)), \(block))", logger: logger)
                        .answer(on: connection, within: 60)
                }
                for (seq, block) in areaBlocks.enumerated() {
                    _ = try connection.query("INSERT INTO area_block (seq, data) VALUES (\(Int32(seq)), \(block))", logger: logger)
                        .answer(on: connection, within: 60)
                }
                _ = try connection.query("UPDATE address_state SET generation = \(generation) WHERE id = 1", logger: logger).answer(on: connection)
                if let osm {
                    _ = try connection.query(
                        """
                        UPDATE address_state SET osm_sequence = \(osm.sequence.map(Int64.init)), osm_timestamp = \(osm.timestamp),
                            osm_source = \(osm.source) WHERE id = 1
                        """,
                        logger: logger
                    ).answer(on: connection)
                }
                _ = try connection.query("SELECT pg_notify('poi_changes', \(String(number)))", logger: logger).answer(on: connection)
                return generation
            }
        }
    }

    /// As the last change file written here left it (`replaceAddresses(_:osm:)`); nil before the first.
    public func osmMirrorState() throws(CatalogError) -> OSMMirrorState? {
        try main.run { connection in
            let rows = try connection.query("SELECT osm_sequence, osm_timestamp, osm_source FROM address_state WHERE id = 1", logger: logger)
                .answer(on: connection)
            guard let row = rows.first else { return nil }
            let (sequence, timestamp, source) = try row.decode((Int64?, String?, String?).self)
            guard sequence != nil || timestamp != nil || source != nil else { return nil }
            return OSMMirrorState(sequence: sequence.map(Int.init), timestamp: timestamp, source: source)
        }
    }

    public func addressGeneration() throws(CatalogError) -> String? {
        try main.run { connection in
            try connection.query("SELECT generation FROM address_state WHERE id = 1", logger: logger).answer(on: connection).first?.decode(
                String.self
            )
        }
    }
}
