/// The OpenStreetMap object an output id comes from, and the order an extract has them in.
public enum OSMObjectKey {
    /// "osm-n12" of "osm-n12#3"; any other id is its own object.
    public static func object(of id: String) -> String {
        guard let hash = id.firstIndex(of: "#") else { return id }
        return String(id[..<hash])
    }

    /// (type, id, part) of an output id: nodes, then ways, then relations, each by id, then the part after "#";
    /// nil for an id that is not an OpenStreetMap object's.
    public static func order(of id: String) -> (type: Int, id: Int64, part: Int)? {
        let utf8 = id.utf8
        // Read from the string's own bytes (no copy): nearly every id is a native string.
        if let key = utf8.withContiguousStorageIfAvailable({ order(of: $0) }) { return key }
        return Array(utf8).withUnsafeBufferPointer { order(of: $0) }
    }

    public static func order(of bytes: UnsafeBufferPointer<UInt8>) -> (type: Int, id: Int64, part: Int)? {
        guard bytes.count > 5, bytes[0] == UInt8(ascii: "o"), bytes[1] == UInt8(ascii: "s"), bytes[2] == UInt8(ascii: "m"),
            bytes[3] == UInt8(ascii: "-")
        else { return nil }
        let type: Int
        switch bytes[4] {
        case UInt8(ascii: "n"): type = 0
        case UInt8(ascii: "w"): type = 1
        case UInt8(ascii: "r"): type = 2
        default: return nil
        }
        var i = 5
        var number: Int64 = 0
        var digits = 0
        while i < bytes.count, (0x30...0x39).contains(bytes[i]), digits < 18 {
            number = number * 10 + Int64(bytes[i] - 0x30)
            digits += 1
            i += 1
        }
        guard digits > 0 else { return nil }
        if i == bytes.count { return (type, number, 1) }
        guard bytes[i] == UInt8(ascii: "#") else { return nil }
        var part = 0
        i += 1
        while i < bytes.count, (0x30...0x39).contains(bytes[i]), part < 1 << 40 {
            part = part * 10 + Int(bytes[i] - 0x30)
            i += 1
        }
        return i == bytes.count ? (type, number, part) : nil
    }

    /// `items` by `order` of their ids (stable; items with other ids first, in their order); as they are when they
    /// already are in that order (an extract's output, read from a sorted file).
    public static func inOrder<T>(_ items: [T], id: (T) -> String) -> [T] {
        if isInOrder(items, id: id) { return items }
        let keys = items.map { order(of: id($0)) }
        return items.indices.sorted { precedes(keys[$0], $0, keys[$1], $1) }.map { items[$0] }
    }

    /// Houses in `inOrder`'s order: the list itself, its blocks untouched, when it is in order already.
    public static func inOrder(_ houses: HouseList) -> HouseList {
        isInOrder(houses, id: \.id) ? houses : HouseList(inOrder(Array(houses), id: \.id))
    }

    /// Areas in `inOrder`'s order: the list itself when it is in order already (only the ids read to tell).
    public static func inOrder(_ areas: AreaList) -> AreaList {
        isInOrder(areas.indices, id: { areas.id(of: $0) }) ? areas : AreaList(inOrder(Array(areas), id: \.id))
    }

    /// Whether `items` are in `inOrder`'s order already: checked pair by pair, each key read once (usually they are).
    public static func isInOrder<S: Sequence>(_ items: S, id: (S.Element) -> String) -> Bool {
        var previous: (type: Int, id: Int64, part: Int)?
        var i = 0
        for item in items {
            let key = order(of: id(item))
            if i > 0 && precedes(key, i, previous, i - 1) { return false }
            (previous, i) = (key, i + 1)
        }
        return true
    }

    /// An object's (type, id) as one number (the part left out): type in the top bits, ids below 2⁶⁰.
    public static func packed(_ key: (type: Int, id: Int64, part: Int)) -> Int64 { Int64(key.type) << 60 | (key.id & (1 << 60 - 1)) }

    /// `items` (in `inOrder`'s order) without the items of the `changed` objects ("osm-w12"), and with `added` (in that
    /// order) in their places: `merged(items.filter { !changed.contains(object(of: $0.id)) }, added)`, found by binary
    /// search for each changed object instead of reading every item's id — what a change file's few objects cost in a
    /// list of every object changed since a base (`AddressChanges.add`).
    public static func replacing<T>(_ items: [T], changed: Set<String>, with added: [T], id: (T) -> String) -> [T] {
        var cut = Set<Int64>()
        for object in changed {
            // An object without an OpenStreetMap id: the items are read one by one.
            guard let key = order(of: object).map(packed) else {
                return merged(items.filter { !changed.contains(Self.object(of: id($0))) }, added, id: id)
            }
            cut.insert(key)
        }
        let addedKeys = added.map { order(of: id($0)).map(packed) ?? -1 }
        func key(_ i: Int) -> Int64 { order(of: id(items[i])).map(packed) ?? -1 }
        func lowerBound(_ value: Int64, from start: Int) -> Int {
            var (low, high) = (start, items.count)
            while low < high {
                let middle = (low + high) / 2
                if key(middle) < value { low = middle + 1 } else { high = middle }
            }
            return low
        }
        var out: [T] = []
        out.reserveCapacity(items.count + added.count)
        var (cursor, a) = (0, 0)
        for k in cut.union(addedKeys).sorted() {
            let run = lowerBound(k, from: cursor)
            let end = lowerBound(k + 1, from: run)
            out.append(contentsOf: items[cursor..<run])
            if !cut.contains(k) { out.append(contentsOf: items[run..<end]) }
            while a < added.count && addedKeys[a] == k {
                out.append(added[a])
                a += 1
            }
            cursor = end
        }
        out.append(contentsOf: items[cursor...])
        return out
    }

    /// Two runs in `inOrder`'s order merged into one (`first`'s items before `second`'s of equal keys); as `inOrder` of
    /// their concatenation, in linear time when both are in order.
    public static func merged<T>(_ first: [T], _ second: [T], id: (T) -> String) -> [T] {
        guard !second.isEmpty else { return first }
        guard !first.isEmpty else { return second }
        let firstKeys = first.map { order(of: id($0)) }
        let secondKeys = second.map { order(of: id($0)) }
        // Items without an OpenStreetMap id go first, in their order (as `inOrder` puts them): outside the merge.
        guard !firstKeys.contains(where: { $0 == nil }) && !secondKeys.contains(where: { $0 == nil }) else {
            return inOrder(first + second, id: id)
        }
        var out: [T] = []
        out.reserveCapacity(first.count + second.count)
        merge(first[...], firstKeys[...], second[...], secondKeys[...], into: &out)
        return out
    }

    /// Appends two runs in order, each with its items' keys (at the same indices), merged: `second`'s item goes first
    /// only when its key is strictly smaller (positions break ties in the concatenation).
    public static func merge<T>(
        _ first: ArraySlice<T>,
        _ firstKeys: ArraySlice<(type: Int, id: Int64, part: Int)?>,
        _ second: ArraySlice<T>,
        _ secondKeys: ArraySlice<(type: Int, id: Int64, part: Int)?>,
        into out: inout [T]
    ) {
        precondition(first.indices == firstKeys.indices && second.indices == secondKeys.indices, "keys at the items' indices")
        var (i, j) = (first.startIndex, second.startIndex)
        while i < first.endIndex && j < second.endIndex {
            if precedes(secondKeys[j], 1, firstKeys[i], 0) {
                out.append(second[j])
                j += 1
            } else {
                out.append(first[i])
                i += 1
            }
        }
        out.append(contentsOf: first[i...])
        out.append(contentsOf: second[j...])
    }

    /// Whether the item with key `x` at `a` goes before the one with key `y` at `b`.
    public static func precedes(_ x: (type: Int, id: Int64, part: Int)?, _ a: Int, _ y: (type: Int, id: Int64, part: Int)?, _ b: Int) -> Bool {
        switch (x, y) {
        case (nil, nil): return a < b
        case (nil, _): return true
        case (_, nil): return false
        case (let x?, let y?):
            if x.type != y.type { return x.type < y.type }
            if x.id != y.id { return x.id < y.id }
            if x.part != y.part { return x.part < y.part }
            return a < b
        }
    }
}
