/// Why an `.osm.pbf` file cannot be read. Each case names where: the byte offset of the blob in the file.
public enum PBFError: Error, Equatable, CustomStringConvertible {
    case cannotOpen(path: String)
    /// The file ends inside a blob header or blob.
    case truncated(offset: Int)
    /// A blob (or its header) that is not what the format says.
    case corruptBlob(offset: Int, reason: String)
    /// The header block requires a feature this reader does not implement.
    case unsupportedFeature(String)
    /// A blob compressed with a method this reader does not implement (lzma, lz4, zstd, bzip2).
    case unsupportedCompression(offset: Int, method: String)
    /// The first blob is not the `OSMHeader` block.
    case missingHeader

    public var description: String {
        switch self {
        case .cannotOpen(let path): return "cannot open \(path)"
        case .truncated(let offset): return "the file ends inside the blob at byte offset \(offset) (truncated file?)"
        case .corruptBlob(let offset, let reason): return "corrupt blob at byte offset \(offset): \(reason)"
        case .unsupportedFeature(let name): return "the file requires the feature \"\(name)\", which this reader does not support"
        case .unsupportedCompression(let offset, let method):
            return "the blob at byte offset \(offset) is compressed with \(method), which this reader does not support (zlib or raw only)"
        case .missingHeader: return "not an OSM PBF file: the first blob is not an OSMHeader"
        }
    }
}
