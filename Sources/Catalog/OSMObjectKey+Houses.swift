import Records

extension OSMObjectKey {
    /// The stored houses with those of the `changed` objects (`packed` keys) taken out and `added` (in `inOrder`'s
    /// order) merged in — the houses, in order, of `merged(kept, added)` over the whole list — block by block: a block
    /// that loses no house and gains none keeps its bytes, and only the others are encoded again. A change file of a
    /// few thousand objects touches a few hundred of a country's thousands of blocks (RESULTS.md, issue 57), where
    /// encoding every house again cost more than the rest of the file.
    ///
    /// Each stored block's ids are read first (`AddressBlock.forEachID`, which checks the block as
    /// `HouseList(checking:)` does; a corrupt one is named by its place); only a block that loses or gains a house is
    /// decoded. Added houses go into the block whose kept houses they come before (the last block takes the rest);
    /// consecutive touched blocks are encoded together, so that removals do not leave a trail of small blocks.
    /// - Returns: nil when a house's id is not an OpenStreetMap object's (`order(of:)`): such a list is merged whole.
    static func replacingHouses(
        in blocks: [HouseList.Block],
        changed: Set<Int64>,
        added: HouseList
    ) throws(AddressBlock.CorruptBlock) -> (houses: HouseList, encodedAgain: Int)? {
        let addedHouses = Array(added)
        var addedKeys: [(type: Int, id: Int64, part: Int)?] = []
        addedKeys.reserveCapacity(addedHouses.count)
        for house in addedHouses {
            guard let key = order(of: house.id) else { return nil }
            addedKeys.append(key)
        }
        var out = HouseList()
        var encodedAgain = 0
        var next = 0
        var kept: [AddressPoint] = []
        var keptKeys: [(type: Int, id: Int64, part: Int)?] = []
        var merged: [AddressPoint] = []
        for (k, block) in blocks.enumerated() {
            // First the ids alone (the block checked on the way): most blocks lose no house and gain none.
            var touched = false
            var foreign = false
            var last: (type: Int, id: Int64, part: Int)?
            var idBytes = 0
            var failure: AddressBlock.CorruptBlock?
            block.bytes.withUnsafeBytes { bytes in
                do throws(AddressBlock.CorruptBlock) {
                    try AddressBlock.forEachID(bytes, count: block.count) { id in
                        idBytes += id.count
                        if let key = order(of: id.assumingMemoryBound(to: UInt8.self)) {
                            if changed.contains(packed(key)) { touched = true } else { last = key }
                        } else {
                            foreign = true
                        }
                    }
                } catch {
                    failure = error
                }
            }
            if let failure { throw AddressBlock.CorruptBlock(reason: "block \(k) of \(blocks.count): \(failure.reason)") }
            if foreign { return nil }
            // The added houses that come before this block's last kept one; in the last block, all that are left.
            var end = next
            if k == blocks.count - 1 {
                end = addedHouses.count
            } else if let last {
                while end < addedHouses.count && precedes(addedKeys[end], 1, last, 0) { end += 1 }
            }
            if !touched && end == next {
                out.append(block, idBytes: idBytes)
                continue
            }
            let houses: [AddressPoint]
            do { houses = try HouseList.decode(block) } catch {
                throw AddressBlock.CorruptBlock(reason: "block \(k) of \(blocks.count): \(error.reason)")
            }
            kept.removeAll(keepingCapacity: true)
            keptKeys.removeAll(keepingCapacity: true)
            for house in houses {
                guard let key = order(of: house.id) else { return nil }
                if !changed.contains(packed(key)) {
                    kept.append(house)
                    keptKeys.append(key)
                }
            }
            encodedAgain += 1
            merged.removeAll(keepingCapacity: true)
            merge(kept[...], keptKeys[...], addedHouses[next..<end], addedKeys[next..<end], into: &merged)
            next = end
            // Left in the tail: a touched block after this one joins it; an untouched one seals it.
            out.append(contentsOf: merged)
        }
        if blocks.isEmpty { out.append(contentsOf: addedHouses) }
        out.seal()
        return (out, encodedAgain)
    }
}
