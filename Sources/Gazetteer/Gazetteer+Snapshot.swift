import BundledData
import Dispatch
import Foundation
import SnapshotFile
import SpatialIndex
import TextIndex

/// The gazetteer's snapshot: places, the name index and the R-trees as flat arrays, so that a start reads them
/// instead of parsing 170 000 rows and normalizing 700 000 names. It records the size and modification time of each
/// bundled file it was built from (and the text analyzer's version), and is used only while all of them match.
extension Gazetteer {
    /// "GAZ" and a version: 5, the R-trees' vectors and boxes lane by lane per node (4: text-index block bounds every
    /// 64 postings; 3: places as mapped columns, capitals; letter masks).
    static let snapshotFormat: UInt32 = 0x4741_5A05

    /// What the snapshot must have been built from: each source file's name, size and modification time.
    static func sourceKey(directory: String) -> String {
        let files = [PlaceFile.placesFile, "china_divisions.tsv.gz", "countries.tsv.gz", "admin1.tsv.gz", "countries.geojson.gz"]
        var parts = ["analyzer \(InvertedIndex.snapshotVersion)"]
        for file in files {
            var status = stat()
            if stat(directory + "/" + file, &status) == 0 {
                parts.append("\(file) \(status.st_size) \(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)")
            } else {
                parts.append("\(file) absent")
            }
        }
        return parts.joined(separator: "; ")
    }

    /// Where the gazetteer's snapshot of the data files in `directory` is kept for every database of this user:
    /// `$POI_CACHE_DIR`, else `$XDG_CACHE_HOME/poi`, else `~/.cache/poi`, in a file named by a hash of what it is built
    /// from (`sourceKey`). The gazetteer depends on the data files alone, so one snapshot serves every database, and
    /// the first start after an import into a new database maps it instead of building the gazetteer (seconds).
    /// Nil when no such directory can be made (the caller keeps one beside its database).
    public static func sharedSnapshotPath(directory: String) -> String? {
        let environment = ProcessInfo.processInfo.environment
        let cache: String
        if let explicit = environment["POI_CACHE_DIR"], !explicit.isEmpty {
            cache = explicit
        } else if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            cache = xdg + "/poi"
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            cache = home + "/.cache/poi"
        } else {
            return nil
        }
        guard (try? FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)) != nil,
            access(cache, W_OK) == 0
        else { return nil }
        // FNV-1a of the key, and of the directory (two data directories are two snapshots).
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (sourceKey(directory: directory) + "\u{0}" + directory).utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return cache + "/gazetteer-" + String(hash, radix: 16) + ".snapshot"
    }

    /// Removes the shared snapshots other than `path` (of data files since changed, or of another analyzer): a server
    /// still mapping one keeps its pages.
    static func removeOtherSharedSnapshots(than path: String) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        guard url.lastPathComponent.hasPrefix("gazetteer-"), let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            return
        }
        for name in names where name.hasPrefix("gazetteer-") && name.hasSuffix(".snapshot") && name != url.lastPathComponent {
            // Only snapshots left alone for a day: another checkout's server may be starting from its own right now.
            let full = directory + "/" + name
            if let modified = (try? FileManager.default.attributesOfItem(atPath: full))?[.modificationDate] as? Date,
                Date().timeIntervalSince(modified) > 86_400
            {
                unlink(full)
            }
        }
    }

    /// Loads the bundled files, taking the built structures from the snapshot at `snapshotPath` when it was made from
    /// these same files, else building them and writing the snapshot (failures to write are reported, not thrown).
    /// - Returns: the gazetteer, and how its structures were made.
    public static func load(directory: String, snapshot snapshotPath: String) throws -> (gazetteer: Gazetteer, source: String) {
        let key = sourceKey(directory: directory)
        // The snapshot and the small bundled files (divisions, countries, outlines) are independent: both at once.
        let snapshot = ResultSlot<(PlaceTable, Built, Set<Int>), SnapshotError>()
        let files = ResultSlot<SideFiles, any Error>()
        DispatchQueue.concurrentPerform(iterations: 2) { task in
            if task == 0 {
                snapshot.set(Result { () throws(SnapshotError) in try readSnapshot(snapshotPath, key: key) })
            } else {
                files.set(Result { try SideFiles(directory: directory) })
            }
        }
        let side = try files.get()
        let (divisions, countries, admin1, outlines) = (side.divisions, side.countries, side.admin1, side.outlines)
        let reason: String
        do {
            let (places, built, capitals) = try snapshot.get()
            let gazetteer = Gazetteer(
                places: places,
                divisions: divisions,
                countries: countries,
                admin1: admin1,
                outlines: outlines,
                built: built,
                capitals: capitals
            )
            return (gazetteer, "read from the snapshot")
        } catch {
            reason = error.description
        }
        let places = PlaceTable(try PlaceFile.loadPlaces(directory: directory))
        let gazetteer = Gazetteer(places: places, divisions: divisions, countries: countries, admin1: admin1, outlines: outlines)
        do {
            try gazetteer.writeSnapshot(snapshotPath, key: key)
            removeOtherSharedSnapshots(than: snapshotPath)
            return (gazetteer, "built (\(reason)); snapshot written")
        } catch {
            return (gazetteer, "built (\(reason)); \(error.description)")
        }
    }

    /// The bundled files other than places, read at every start, snapshot or not.
    struct SideFiles {
        let divisions: [Division]
        let countries: [Country]
        let admin1: [(country: String, name: String, code: String)]
        let outlines: CountryOutlines?

        init(directory: String) throws {
            divisions = try GazetteerFiles.loadDivisions(directory: directory)
            countries = try GazetteerFiles.loadCountries(directory: directory)
            admin1 = try GazetteerFiles.loadAdmin1(directory: directory)
            let outlinesPath = directory + "/countries.geojson.gz"
            outlines = FileManager.default.fileExists(atPath: outlinesPath) ? try CountryOutlines.load(path: outlinesPath) : nil
        }
    }

    func writeSnapshot(_ path: String, key: String) throws(SnapshotError) {
        let file = try SnapshotWriter(path: path, formatVersion: Gazetteer.snapshotFormat)
        try file.write(key)
        file.mark()
        try file.write(places.ids)
        for column in [places.names, places.asciiNames, places.countries, places.admin1s, places.admin2s, places.alternates] {
            try file.write(column.ends)
            try file.write(column.blob)
        }
        try file.write(places.alternateStarts)
        try file.write(places.latitudes)
        try file.write(places.longitudes)
        try file.write(places.populations)
        try file.write(places.kindCodes)
        try file.write(capitals.sorted().map { Int32($0) })
        file.mark()
        try names.write(to: file)
        file.mark()
        try placeTree.write(to: file)
        try districtTree.write(to: file)
        try file.commit()
    }

    static func readSnapshot(_ path: String, key: String) throws(SnapshotError) -> (PlaceTable, Built, Set<Int>) {
        let file = try SnapshotReader(path: path, formatVersion: snapshotFormat)
        let found = try file.readString()
        guard found == key else { throw .stale(path: path, reason: "it was built from other data files") }
        // Served in place from the mapping: no string is decoded until a place is read.
        var places = PlaceTable()
        places.ids = try file.readFlat()
        var columns: [PlaceTable.StringColumn] = []
        for _ in 0..<6 { columns.append(PlaceTable.StringColumn(ends: try file.readFlat(), blob: try file.readFlat())) }
        (places.names, places.asciiNames, places.countries, places.admin1s, places.admin2s, places.alternates) =
            (columns[0], columns[1], columns[2], columns[3], columns[4], columns[5])
        places.alternateStarts = try file.readFlat()
        places.latitudes = try file.readFlat()
        places.longitudes = try file.readFlat()
        places.populations = try file.readFlat()
        places.kindCodes = try file.readFlat()
        let capitals: [Int32] = try file.read()
        let n = places.count
        guard places.isConsistent, capitals.allSatisfy({ $0 >= 0 && Int($0) < n }) else {
            throw .corrupt(path: path, reason: "place columns of different lengths or out of range")
        }
        let names = try NameIndex(snapshot: file)
        let placeTree = try RTree(snapshot: file)
        let districtTree = try RTree(snapshot: file)
        guard file.isAtEnd, placeTree.count == n else { throw .corrupt(path: path, reason: "sections of inconsistent sizes") }
        file.releaseResidentPages()
        return (places, Built(names: names, placeTree: placeTree, districtTree: districtTree), Set(capitals.map { Int($0) }))
    }
}

extension NameIndex {
    func write(to file: SnapshotWriter) throws(SnapshotError) {
        try file.write(storage)
        try file.write(offsets)
        try file.write(targets)
        try file.write(kinds.map(\.rawValue))
        try file.write(sorted)
        try file.write(nested: byLength)
        let codes = shortPrefixTop.keys.sorted()
        try file.write(codes)
        try file.write(nested: codes.map { shortPrefixTop[$0]! })
        try file.write(letterMasks)
    }

    init(snapshot file: SnapshotReader) throws(SnapshotError) {
        self.init()
        let bytes: FlatArray<UInt8> = try file.readFlat()
        offsets = try file.readFlat()
        targets = try file.readFlat()
        let kindValues: [UInt8] = try file.read()
        sorted = try file.readFlat()
        byLength = try file.readNestedFlat()
        let codes: [UInt32] = try file.read()
        let tops: [[Int32]] = try file.readNested()
        letterMasks = try file.readFlat()
        let n = targets.count
        guard offsets.count == n + 1, kindValues.count == n, sorted.count == n, letterMasks.count == n, codes.count == tops.count,
            Int(offsets.last ?? -1) == bytes.count, zip(offsets, offsets.dropFirst()).allSatisfy({ $0 <= $1 }),
            sorted.allSatisfy({ $0 >= 0 && Int($0) < n }), byLength.allSatisfy({ $0.allSatisfy { $0 >= 0 && Int($0) < n } }),
            tops.allSatisfy({ $0.allSatisfy { $0 >= 0 && Int($0) < n } })
        else { throw .corrupt(path: file.path, reason: "name index arrays of inconsistent sizes") }
        var decoded: [Kind] = []
        decoded.reserveCapacity(n)
        for value in kindValues {
            guard let kind = Kind(rawValue: value) else { throw .corrupt(path: file.path, reason: "unknown name kind \(value)") }
            decoded.append(kind)
        }
        kinds = decoded
        storage = bytes
        shortPrefixTop.reserveCapacity(codes.count)
        for (code, top) in zip(codes, tops) { shortPrefixTop[code] = top }
        makeFence()
    }
}

/// The result of work done on another thread of `concurrentPerform`, set once there and read after it returns.
private final class ResultSlot<Success, Failure: Error>: @unchecked Sendable {
    // SAFETY: @unchecked Sendable because `set` runs once, on one thread, before `concurrentPerform` returns, and
    // `get` only after.
    private var result: Result<Success, Failure>?

    func set(_ value: Result<Success, Failure>) { result = value }

    func get() throws(Failure) -> Success { try result!.get() }
}
