import BundledData
import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// An osmChange file (OSM API 0.6; what replication publishes every minute): objects created, modified and deleted, in
/// the file's order. Each object is given whole, as it is after the change (a modified way with all its node ids and
/// tags), so a later action on the same object replaces an earlier one.
public struct OSMChange: Sendable {
    public enum Action: String, Sendable { case create, modify, delete }

    public enum Object: Sendable, Equatable {
        case node(OSMNode)
        case way(OSMWay)
        case relation(OSMRelation)

        /// "node 42", "way 7": how messages name it.
        public var name: String {
            switch self {
            case .node(let n): "node \(n.id)"
            case .way(let w): "way \(w.id)"
            case .relation(let r): "relation \(r.id)"
            }
        }
    }

    public struct Entry: Sendable {
        public let action: Action
        public let object: Object
        /// Where the object starts in the file (what errors name).
        public let line: Int
    }

    public var entries: [Entry] = []
    /// The newest `timestamp` attribute of the file's objects (ISO 8601 as written), if any has one.
    public var newestTimestamp: String?

    public init() {}

    /// Reads `path`: plain XML, or gzip-compressed (told by its first bytes, whatever its name).
    /// - Throws: `OSMChangeError` naming the file, and the line for malformed content (a truncated `.gz` is one).
    public static func read(_ path: String, name: String? = nil) throws(OSMChangeError) -> OSMChange {
        let name = name ?? (path as NSString).lastPathComponent
        let bytes: [UInt8]
        do { bytes = try GzipFile.read(path) } catch { throw OSMChangeError(file: name, line: nil, reason: error.description) }
        return try parse(Data(bytes), name: name)
    }

    /// Parses osmChange XML; `name` is what errors call the file.
    public static func parse(_ data: Data, name: String) throws(OSMChangeError) -> OSMChange {
        let parser = XMLParser(data: data)
        let reader = Reader(name: name, parser: parser)
        parser.delegate = reader
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        let parsed = parser.parse()
        if let error = reader.error { throw error }
        guard parsed else {
            let reason = parser.parserError.map { ($0 as NSError).localizedDescription } ?? "not well-formed XML"
            throw OSMChangeError(file: name, line: parser.lineNumber, reason: "malformed XML (\(reason))")
        }
        guard reader.sawRoot else { throw OSMChangeError(file: name, line: nil, reason: "not an osmChange file (no <osmChange> element)") }
        guard reader.closedRoot else {
            throw OSMChangeError(file: name, line: parser.lineNumber, reason: "malformed XML (the file ends before </osmChange>: cut short?)")
        }
        return reader.change
    }

    /// The SAX reader: objects are gathered as their elements open and close.
    private final class Reader: NSObject, XMLParserDelegate {
        let name: String
        unowned let parser: XMLParser
        var change = OSMChange()
        var error: OSMChangeError?
        var sawRoot = false
        var closedRoot = false
        var action: Action?
        // The object being read.
        var kind: String?
        var id: Int64 = 0
        var line = 0
        var latitude: Double?
        var longitude: Double?
        var tags: [OSMTag] = []
        var refs: [Int64] = []
        var members: [OSMRelation.Member] = []

        init(name: String, parser: XMLParser) { (self.name, self.parser) = (name, parser) }

        func fail(_ reason: String) {
            guard error == nil else { return }
            error = OSMChangeError(file: name, line: parser.lineNumber, reason: reason)
            parser.abortParsing()
        }

        func parser(
            _ parser: XMLParser,
            didStartElement element: String,
            namespaceURI: String?,
            qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            switch element {
            case "osmChange":
                sawRoot = true
                if let version = attributes["version"], version != "0.6" { fail("osmChange version \(version) (only 0.6 is read)") }
            case "create", "modify", "delete":
                guard sawRoot, kind == nil else { return fail("<\(element)> outside <osmChange> or inside an object") }
                action = Action(rawValue: element)
            case "node", "way", "relation":
                guard action != nil, kind == nil else { return fail("<\(element)> outside <create>, <modify> or <delete>") }
                guard let text = attributes["id"], let id = Int64(text) else { return fail("<\(element)> without a numeric id") }
                (kind, self.id, line) = (element, id, parser.lineNumber)
                (tags, refs, members) = ([], [], [])
                (latitude, longitude) = (nil, nil)
                if let stamp = attributes["timestamp"], stamp > (change.newestTimestamp ?? "") { change.newestTimestamp = stamp }
                if element == "node" && action != .delete {
                    guard let lat = attributes["lat"].flatMap(Double.init), (-90...90).contains(lat),
                        let lon = attributes["lon"].flatMap(Double.init), (-180...180).contains(lon)
                    else { return fail("node \(id) has no valid lat and lon (-90…90, -180…180)") }
                    (latitude, longitude) = (lat, lon)
                }
            case "tag":
                guard kind != nil else { return fail("<tag> outside an object") }
                guard let k = attributes["k"], let v = attributes["v"] else { return fail("\(kind!) \(id): <tag> without k and v") }
                tags.append(OSMTag(key: k, value: v))
            case "nd":
                guard kind == "way" else { return fail("<nd> outside a way") }
                guard let ref = attributes["ref"].flatMap(Int64.init) else { return fail("way \(id): <nd> without a numeric ref") }
                refs.append(ref)
            case "member":
                guard kind == "relation" else { return fail("<member> outside a relation") }
                let type: OSMRelation.MemberType? =
                    switch attributes["type"] {
                    case "node": .node
                    case "way": .way
                    case "relation": .relation
                    default: nil
                    }
                guard let type, let ref = attributes["ref"].flatMap(Int64.init) else {
                    return fail("relation \(id): <member> without a type (node, way, relation) and a numeric ref")
                }
                members.append(OSMRelation.Member(type: type, ref: ref, role: attributes["role"] ?? ""))
            default:
                // <bounds> and other elements outside objects carry nothing an import keeps.
                break
            }
        }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            switch element {
            case "create", "modify", "delete": action = nil
            case "osmChange": closedRoot = true
            case "node", "way", "relation":
                guard let action, kind == element else { return }
                let object: Object =
                    switch element {
                    case "node": .node(OSMNode(id: id, latitude: latitude ?? 0, longitude: longitude ?? 0, tags: tags))
                    case "way": .way(OSMWay(id: id, refs: refs, tags: tags))
                    default: .relation(OSMRelation(id: id, members: members, tags: tags))
                    }
                change.entries.append(Entry(action: action, object: object, line: line))
                kind = nil
            default: break
            }
        }
    }
}

/// Why a change file could not be read or applied: the file, and the line or object.
public struct OSMChangeError: Error, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int?
    public let reason: String

    public init(file: String, line: Int?, reason: String) { (self.file, self.line, self.reason) = (file, line, reason) }

    public var description: String { line.map { "\(file):\($0): \(reason)" } ?? "\(file): \(reason)" }
}
