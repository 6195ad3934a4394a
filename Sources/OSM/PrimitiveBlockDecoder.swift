/// Decodes one `PrimitiveBlock` (osmformat.proto): its string table, granularity and offsets, and every primitive
/// group's plain nodes, dense nodes, ways and relations.
enum PrimitiveBlockDecoder {
    struct Frame {
        var strings: [String] = []
        var granularity: Int64 = 100
        var latOffset: Int64 = 0
        var lonOffset: Int64 = 0

        /// Degrees from a stored coordinate: (offset + granularity × value) nanodegrees. Divided, not multiplied by
        /// 1e-9, so that 601700077 × 100 reads as 60.1700077 exactly as written, not 60.170007700000006.
        @inline(__always) func latitude(_ value: Int64) -> Double { Double(latOffset &+ granularity &* value) / 1e9 }
        @inline(__always) func longitude(_ value: Int64) -> Double { Double(lonOffset &+ granularity &* value) / 1e9 }

        func string(_ index: UInt64, at position: Int) throws(ProtobufError) -> String {
            guard index < UInt64(strings.count) else {
                throw .malformed("string index \(index) outside the block's table of \(strings.count)", at: position)
            }
            return strings[Int(index)]
        }

        func tags(keys: [UInt64], values: [UInt64], at position: Int) throws(ProtobufError) -> [OSMTag] {
            guard keys.count == values.count else { throw .malformed("\(keys.count) tag keys but \(values.count) values", at: position) }
            var tags: [OSMTag] = []
            tags.reserveCapacity(keys.count)
            for (k, v) in zip(keys, values) { tags.append(OSMTag(key: try string(k, at: position), value: try string(v, at: position))) }
            return tags
        }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, offset: Int) throws(ProtobufError) -> OSMBlock {
        var frame = Frame()
        var groups: [Range<Int>] = []
        var reader = ProtobufReader(bytes)
        while let field = try reader.nextField() {
            switch (field.number, field.type) {
            case (1, .lengthDelimited):
                var table = ProtobufReader(bytes, range: try reader.lengthDelimited())
                while let f = try table.nextField() {
                    if f.number == 1, f.type == .lengthDelimited {
                        frame.strings.append(try table.string(try table.lengthDelimited()))
                    } else {
                        try table.skip(f.type)
                    }
                }
            case (2, .lengthDelimited): groups.append(try reader.lengthDelimited())
            case (17, .varint): frame.granularity = Int64(truncatingIfNeeded: try reader.varint())
            case (19, .varint): frame.latOffset = try reader.int64()
            case (20, .varint): frame.lonOffset = try reader.int64()
            default: try reader.skip(field.type)
            }
        }
        guard frame.granularity > 0 else { throw .malformed("granularity \(frame.granularity)", at: 0) }
        var block = OSMBlock(offset: offset)
        // Tag key and value indices of one way at a time, their storage kept from way to way.
        var keys: [UInt64] = []
        var values: [UInt64] = []
        for group in groups {
            var g = ProtobufReader(bytes, range: group)
            while let field = try g.nextField() {
                guard field.type == .lengthDelimited else {
                    try g.skip(field.type)
                    continue
                }
                let range = try g.lengthDelimited()
                switch field.number {
                case 1: block.nodes.append(try node(bytes, range, frame))
                case 2: try denseNodes(bytes, range, frame, into: &block.nodes)
                case 3: block.ways.append(try way(bytes, range, frame, keys: &keys, values: &values))
                case 4: block.relations.append(try relation(bytes, range, frame))
                default: break  // changesets
                }
            }
        }
        return block
    }

    static func node(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ frame: Frame) throws(ProtobufError) -> OSMNode {
        var r = ProtobufReader(bytes, range: range)
        var id: Int64?
        var lat: Int64?
        var lon: Int64?
        var keys: [UInt64] = []
        var values: [UInt64] = []
        while let f = try r.nextField() {
            switch (f.number, f.type) {
            case (1, .varint): id = try r.sint64()
            case (2, _): try r.packed(f.type, into: &keys) { $0 }
            case (3, _): try r.packed(f.type, into: &values) { $0 }
            case (8, .varint): lat = try r.sint64()
            case (9, .varint): lon = try r.sint64()
            default: try r.skip(f.type)
            }
        }
        guard let id, let lat, let lon else { throw .malformed("node without id, lat or lon", at: range.lowerBound) }
        return OSMNode(
            id: id,
            latitude: frame.latitude(lat),
            longitude: frame.longitude(lon),
            tags: try frame.tags(keys: keys, values: values, at: range.lowerBound)
        )
    }

    static func denseNodes(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ frame: Frame, into nodes: inout [OSMNode]) throws(ProtobufError) {
        var r = ProtobufReader(bytes, range: range)
        var ids: [Int64] = []
        var lats: [Int64] = []
        var lons: [Int64] = []
        var keysVals: [UInt64] = []
        while let f = try r.nextField() {
            switch f.number {
            case 1: try r.packedDeltas(f.type, into: &ids)
            case 8: try r.packedDeltas(f.type, into: &lats)
            case 9: try r.packedDeltas(f.type, into: &lons)
            case 10: try r.packed(f.type, into: &keysVals) { $0 }
            default: try r.skip(f.type)
            }
        }
        guard ids.count == lats.count, ids.count == lons.count else {
            throw .malformed("dense nodes with \(ids.count) ids, \(lats.count) lats and \(lons.count) lons", at: range.lowerBound)
        }
        nodes.reserveCapacity(nodes.count + ids.count)
        var kv = 0
        for i in ids.indices {
            var tags: [OSMTag] = []
            if !keysVals.isEmpty {
                // Room for every tag at once (grown one by one, a house's five tags were four allocations).
                var end = kv
                while end < keysVals.count && keysVals[end] != 0 { end += 2 }
                if end > kv { tags.reserveCapacity((end - kv) / 2) }
                // Each node's key/value string ids, ended by a 0.
                while true {
                    guard kv < keysVals.count else { throw .malformed("dense node tags end without their 0 terminator", at: range.lowerBound) }
                    let key = keysVals[kv]
                    kv += 1
                    if key == 0 { break }
                    guard kv < keysVals.count else { throw .malformed("dense node tag key without a value", at: range.lowerBound) }
                    let value = keysVals[kv]
                    kv += 1
                    tags.append(OSMTag(key: try frame.string(key, at: range.lowerBound), value: try frame.string(value, at: range.lowerBound)))
                }
            }
            nodes.append(OSMNode(id: ids[i], latitude: frame.latitude(lats[i]), longitude: frame.longitude(lons[i]), tags: tags))
        }
    }

    /// A way; `keys` and `values` are scratch space, emptied here.
    static func way(
        _ bytes: UnsafeRawBufferPointer,
        _ range: Range<Int>,
        _ frame: Frame,
        keys: inout [UInt64],
        values: inout [UInt64]
    ) throws(ProtobufError) -> OSMWay {
        var r = ProtobufReader(bytes, range: range)
        var id: Int64?
        keys.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        var refs: [Int64] = []
        while let f = try r.nextField() {
            switch (f.number, f.type) {
            case (1, .varint): id = try r.int64()
            case (2, _): try r.packed(f.type, into: &keys) { $0 }
            case (3, _): try r.packed(f.type, into: &values) { $0 }
            case (8, _): try r.packedDeltas(f.type, into: &refs)
            default: try r.skip(f.type)
            }
        }
        guard let id else { throw .malformed("way without id", at: range.lowerBound) }
        return OSMWay(id: id, refs: refs, tags: try frame.tags(keys: keys, values: values, at: range.lowerBound))
    }

    static func relation(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, _ frame: Frame) throws(ProtobufError) -> OSMRelation {
        var r = ProtobufReader(bytes, range: range)
        var id: Int64?
        var keys: [UInt64] = []
        var values: [UInt64] = []
        var roles: [UInt64] = []
        var memberIDs: [Int64] = []
        var types: [UInt64] = []
        while let f = try r.nextField() {
            switch (f.number, f.type) {
            case (1, .varint): id = try r.int64()
            case (2, _): try r.packed(f.type, into: &keys) { $0 }
            case (3, _): try r.packed(f.type, into: &values) { $0 }
            case (8, _): try r.packed(f.type, into: &roles) { $0 }
            case (9, _): try r.packedDeltas(f.type, into: &memberIDs)
            case (10, _): try r.packed(f.type, into: &types) { $0 }
            default: try r.skip(f.type)
            }
        }
        guard let id else { throw .malformed("relation without id", at: range.lowerBound) }
        guard roles.count == memberIDs.count, types.count == memberIDs.count else {
            throw .malformed("relation \(id) with \(memberIDs.count) members, \(roles.count) roles and \(types.count) types", at: range.lowerBound)
        }
        var members: [OSMRelation.Member] = []
        members.reserveCapacity(memberIDs.count)
        for i in memberIDs.indices {
            guard let type = OSMRelation.MemberType(rawValue: Int(truncatingIfNeeded: types[i])) else {
                throw .malformed("relation \(id) member type \(types[i])", at: range.lowerBound)
            }
            members.append(OSMRelation.Member(type: type, ref: memberIDs[i], role: try frame.string(roles[i], at: range.lowerBound)))
        }
        return OSMRelation(id: id, members: members, tags: try frame.tags(keys: keys, values: values, at: range.lowerBound))
    }
}
