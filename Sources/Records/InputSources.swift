import BundledData
import Foundation

/// Reads a file in 1 MiB chunks, decompressing gzip files (`.gz`, or any file that starts like one) on the way.
final class ChunkReader {
    let stream: GzipStream
    let onProgress: (Int) -> Void
    private(set) var bytesRead = 0
    /// Set when the file cannot be read further (a damaged or truncated gzip file).
    private(set) var failure: String?

    init(stream: GzipStream, onProgress: @escaping (Int) -> Void) {
        self.stream = stream
        self.onProgress = onProgress
    }

    /// The next chunk; a UTF-8 byte order mark at the very start of the file is dropped (spreadsheet programs
    /// write one, and it would otherwise glue itself to the first CSV header or JSON key).
    func next() -> [UInt8]? {
        guard failure == nil else { return nil }
        let data: [UInt8]
        do { data = try stream.read(upTo: 1 << 20) } catch {
            failure = error.description
            return nil
        }
        guard !data.isEmpty else { return nil }
        let first = bytesRead == 0
        bytesRead += data.count
        onProgress(stream.compressedOffset)
        var bytes = data
        if first && bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        return bytes
    }
}

/// Decodes validated UTF-8, reporting invalid input instead of repairing it silently.
func decodeUTF8(_ bytes: ArraySlice<UInt8>) -> String? {
    String(validating: bytes, as: UTF8.self)
}

/// One JSON object per line.
enum JSONLinesSource {
    static let maximumLine = 16 << 20

    static func read(_ reader: ChunkReader, _ body: ([String: Any]?, Int, String?) throws(ImportError) -> Void) throws(ImportError) {
        var pending: [UInt8] = []
        var line = 0
        var tooLong = false
        func handle(_ bytes: ArraySlice<UInt8>) throws(ImportError) {
            line += 1
            var slice = bytes
            if slice.last == 0x0D { slice = slice.dropLast() }
            if slice.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }
            if tooLong {
                tooLong = false
                try body(nil, line, "line longer than \(maximumLine >> 20) MiB")
                return
            }
            guard decodeUTF8(slice) != nil else { return try body(nil, line, "invalid UTF-8") }
            guard let object = try? JSONSerialization.jsonObject(with: Data(slice)) else {
                return try body(nil, line, "not valid JSON")
            }
            guard let dictionary = object as? [String: Any] else { return try body(nil, line, "not a JSON object") }
            try body(dictionary, line, nil)
        }
        while let chunk = reader.next() {
            var start = 0
            for i in chunk.indices where chunk[i] == 0x0A {
                if pending.isEmpty {
                    try handle(chunk[start..<i])
                } else {
                    pending.append(contentsOf: chunk[start..<i])
                    try handle(pending[...])
                    pending.removeAll(keepingCapacity: false)
                }
                start = i + 1
            }
            if !tooLong { pending.append(contentsOf: chunk[start...]) }
            if pending.count > maximumLine {
                tooLong = true
                pending.removeAll()
            }
        }
        if !pending.isEmpty || tooLong { try handle(pending[...]) }
    }
}

/// RFC 4180 CSV with a header row; quoted fields may hold commas, quotes ("") and newlines.
enum CSVSource {
    static func read(_ reader: ChunkReader, _ body: ([String: Any]?, Int, String?) throws(ImportError) -> Void) throws(ImportError) {
        var header: [String]?
        var field: [UInt8] = []
        var row: [[UInt8]] = []
        var inQuotes = false
        var quoteSeen = false
        var line = 1
        var rowLine = 1
        func endRow() throws(ImportError) {
            row.append(field)
            field.removeAll(keepingCapacity: true)
            defer {
                row.removeAll(keepingCapacity: true)
                rowLine = line
            }
            if row.count == 1 && row[0].isEmpty { return }
            var strings: [String] = []
            for cell in row {
                guard let s = decodeUTF8(cell[...]) else { return try body(nil, rowLine, "invalid UTF-8") }
                strings.append(s)
            }
            guard let header else {
                header = strings.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                return
            }
            guard strings.count == header.count else {
                return try body(nil, rowLine, "expected \(header.count) fields as in the header, found \(strings.count)")
            }
            var object: [String: Any] = [:]
            for (key, value) in zip(header, strings) where !value.isEmpty { object[key] = value }
            try body(object, rowLine, nil)
        }
        while let chunk = reader.next() {
            for byte in chunk {
                if inQuotes {
                    if byte == UInt8(ascii: "\"") {
                        inQuotes = false
                        quoteSeen = true
                    } else {
                        if byte == 0x0A { line += 1 }
                        field.append(byte)
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""):
                    if quoteSeen { field.append(byte) }  // "" inside a quoted field
                    inQuotes = true
                    quoteSeen = false
                case UInt8(ascii: ","):
                    row.append(field)
                    field.removeAll(keepingCapacity: true)
                    quoteSeen = false
                case 0x0A:
                    line += 1
                    try endRow()
                    quoteSeen = false
                case 0x0D:
                    continue
                default:
                    quoteSeen = false
                    field.append(byte)
                }
            }
        }
        if !field.isEmpty || !row.isEmpty { try endRow() }
    }
}

/// A GeoJSON FeatureCollection of Point features, read feature by feature: a small scanner tracks strings and
/// nesting to cut each object out of the "features" array, which is then decoded alone.
enum GeoJSONSource {
    static func read(
        _ reader: ChunkReader,
        _ body: ([String: Any]?, (lon: Double, lat: Double)?, Int, String?) throws(ImportError) -> Void
    ) throws(ImportError) {
        var line = 1
        var depth = 0
        var inString = false
        var escaped = false
        var featuresDepth: Int?
        var recentKey: [UInt8] = []
        var collectingKey = false
        var current: [UInt8] = []
        var featureLine = 1
        var sawFeatures = false
        while let chunk = reader.next() {
            for byte in chunk {
                if byte == 0x0A { line += 1 }
                if featuresDepth != nil && depth > featuresDepth! { current.append(byte) }
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                        collectingKey = false
                    } else if collectingKey {
                        recentKey.append(byte)
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""):
                    inString = true
                    if featuresDepth == nil {
                        collectingKey = true
                        recentKey.removeAll(keepingCapacity: true)
                    }
                case UInt8(ascii: "["):
                    if featuresDepth == nil && depth == 1 && recentKey == Array("features".utf8) {
                        featuresDepth = depth + 1
                        sawFeatures = true
                    }
                    depth += 1
                case UInt8(ascii: "{"):
                    depth += 1
                    if let fd = featuresDepth, depth == fd + 1 {
                        current = [byte]
                        featureLine = line
                    }
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    if let fd = featuresDepth, byte == UInt8(ascii: "}"), depth == fd + 1 {
                        try emit(current, featureLine, body)
                        current.removeAll(keepingCapacity: true)
                    }
                    depth -= 1
                    if let fd = featuresDepth, depth < fd { featuresDepth = nil }
                default:
                    break
                }
            }
        }
        if !sawFeatures { return try body(nil, nil, 1, "not a GeoJSON FeatureCollection (no \"features\" array)") }
        // The end of the file must close everything that was opened: a file cut short (a copy that stopped, a
        // download that failed) otherwise imports its first part without a word.
        if featuresDepth != nil && depth > featuresDepth! {
            try body(nil, nil, featureLine, "the file ends inside this feature (truncated file?)")
        } else if inString || depth != 0 {
            try body(nil, nil, line, "the file ends before the FeatureCollection is closed (truncated file?)")
        }
    }

    private static func emit(
        _ bytes: [UInt8],
        _ line: Int,
        _ body: ([String: Any]?, (lon: Double, lat: Double)?, Int, String?) throws(ImportError) -> Void
    ) throws(ImportError) {
        guard decodeUTF8(bytes[...]) != nil else { return try body(nil, nil, line, "invalid UTF-8") }
        guard let feature = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            return try body(nil, nil, line, "feature is not valid JSON")
        }
        guard let geometry = feature["geometry"] as? [String: Any], geometry["type"] as? String == "Point",
            let coordinates = geometry["coordinates"] as? [Any], coordinates.count >= 2,
            let lon = (coordinates[0] as? NSNumber)?.doubleValue, let lat = (coordinates[1] as? NSNumber)?.doubleValue
        else {
            return try body(nil, nil, line, "feature geometry must be a Point with [lon, lat] coordinates")
        }
        var properties = feature["properties"] as? [String: Any] ?? [:]
        if properties["id"] == nil, let id = feature["id"] { properties["id"] = id }
        try body(properties, (lon, lat), line, nil)
    }
}
