import CZlib
import Foundation

/// Errors reading bundled or imported files.
public enum DataFileError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(path: String)
    case corrupt(path: String, reason: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path): return "cannot open \(path)"
        case .corrupt(let path, let reason): return "\(path) is not a readable gzip file: \(reason)"
        }
    }
}

/// Reads a gzip (or plain) file through zlib's gz* API, which passes uncompressed files through unchanged.
public enum GzipFile {
    /// The whole decompressed content.
    public static func read(_ path: String) throws(DataFileError) -> [UInt8] {
        guard let file = gzopen(path, "rb") else { throw .cannotOpen(path: path) }
        defer { gzclose(file) }
        gzbuffer(file, 1 << 17)
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 17)
        while true {
            // SAFETY: gzread writes at most `chunk.count` bytes into the chunk's own buffer.
            let n = chunk.withUnsafeMutableBytes { gzread(file, $0.baseAddress, UInt32($0.count)) }
            if n < 0 {
                var code: Int32 = 0
                let message = gzerror(file, &code).map { String(cString: $0) } ?? "error \(code)"
                throw .corrupt(path: path, reason: message)
            }
            if n == 0 { break }
            output.append(contentsOf: chunk[0..<Int(n)])
        }
        // zlib reads a stream cut short up to where it ends, then answers 0 as at its end, leaving Z_BUF_ERROR behind.
        var code: Int32 = 0
        let message = gzerror(file, &code).map { String(cString: $0) }
        if code == Z_BUF_ERROR { throw .corrupt(path: path, reason: message ?? "unexpected end of file") }
        return output
    }

    /// Calls `body` with the tab-separated fields of each line as UTF-8 byte slices, skipping `#` comment lines.
    /// Much faster than splitting Strings for the large bundled tables.
    public static func forEachRow(_ path: String, _ body: ([ArraySlice<UInt8>]) throws -> Void) throws {
        let bytes = try read(path)
        var fields: [ArraySlice<UInt8>] = []
        fields.reserveCapacity(16)
        var lineStart = 0
        while lineStart < bytes.count {
            var lineEnd = lineStart
            while lineEnd < bytes.count && bytes[lineEnd] != 0x0A { lineEnd += 1 }
            if lineEnd > lineStart && bytes[lineStart] != UInt8(ascii: "#") {
                fields.removeAll(keepingCapacity: true)
                var fieldStart = lineStart
                for i in lineStart..<lineEnd where bytes[i] == 0x09 {
                    fields.append(bytes[fieldStart..<i])
                    fieldStart = i + 1
                }
                fields.append(bytes[fieldStart..<lineEnd])
                try body(fields)
            }
            lineStart = lineEnd + 1
        }
    }

    /// Calls `body` with each line (without its newline), skipping `#` comment lines.
    public static func forEachLine(_ path: String, skipComments: Bool = true, _ body: (Substring) throws -> Void) throws {
        let bytes = try read(path)
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if skipComments && line.hasPrefix("#") { continue }
            try body(line)
        }
    }
}

/// Where the bundled data lives: `--data-dir`, else `POI_DATA_DIR`, else `data/` under the working directory
/// (or next to the executable's package when run from `.build`).
public enum DataDirectory {
    public static func resolve(_ explicit: String? = nil) -> String {
        if let explicit { return explicit }
        if let env = ProcessInfo.processInfo.environment["POI_DATA_DIR"], !env.isEmpty { return env }
        let cwd = FileManager.default.currentDirectoryPath + "/data"
        if FileManager.default.fileExists(atPath: cwd + "/places.tsv.gz") { return cwd }
        // Running .build/<config>/poi from elsewhere: look beside the package root.
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("data/places.tsv.gz").path
            if FileManager.default.fileExists(atPath: candidate) { return directory.appendingPathComponent("data").path }
            directory = directory.deletingLastPathComponent()
        }
        return "data"
    }
}

/// A gzip (or plain) file read in chunks, for files too large to hold decompressed.
public final class GzipStream {
    private let file: gzFile
    public let path: String

    public init(path: String) throws(DataFileError) {
        guard let file = gzopen(path, "rb") else { throw .cannotOpen(path: path) }
        gzbuffer(file, 1 << 17)
        self.file = file
        self.path = path
    }

    deinit { gzclose(file) }

    /// Up to `count` decompressed bytes; empty at the end. - Throws: `.corrupt` for a damaged or truncated gzip file.
    public func read(upTo count: Int) throws(DataFileError) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: count)
        // SAFETY: gzread writes at most `chunk.count` bytes into the chunk's own buffer.
        let n = chunk.withUnsafeMutableBytes { gzread(file, $0.baseAddress, UInt32($0.count)) }
        var code: Int32 = 0
        let message = gzerror(file, &code).map { String(cString: $0) }
        // A gzip stream cut short reads to its end and then reports Z_BUF_ERROR ("unexpected end of file").
        if n < 0 || (n == 0 && code != Z_OK) {
            throw .corrupt(path: path, reason: message ?? "error \(code)")
        }
        chunk.removeSubrange(Int(n)...)
        return chunk
    }

    /// Bytes of the file (compressed) consumed so far, for progress against the file's size.
    public var compressedOffset: Int { Int(gzoffset(file)) }
}
