import Crypto
import Foundation
import Synchronization

/// Operators' and services' API keys with their scopes, read from a keys file that holds only SHA-256 hashes of
/// the keys — so the file can be read without revealing a key:
///
/// ```json
/// {"keys": [{"name": "ops", "sha256": "9f86d0…", "scopes": ["admin"]},
///           {"name": "moderation", "sha256": "…", "scopes": ["pins:write"]}]}
/// ```
///
/// `reload()` reads the file again (the server calls it on SIGHUP), so keys rotate without a restart; a file that
/// does not parse leaves the previous keys in force. The legacy `--api-key` is one more key, named `api-key`, with
/// the admin scope.
public final class KeyRing: Sendable {
    public struct Entry: Sendable, Equatable {
        public let name: String
        public let scopes: Set<Scope>
    }

    private let file: String?
    private let legacyKey: String?
    private let entries: Mutex<[String: Entry]>

    /// - Parameters:
    ///   - file: the keys file, or nil.
    ///   - legacyKey: the `--api-key` value, kept as an admin key.
    public init(file: String?, legacyKey: String?) throws(AccessConfigurationError) {
        self.file = file
        self.legacyKey = legacyKey
        entries = Mutex(try Self.read(file: file, legacyKey: legacyKey))
    }

    /// Only the legacy key (or none): cannot fail, there is no file to read.
    public init(legacyKey: String?) {
        file = nil
        self.legacyKey = legacyKey
        entries = Mutex(legacyKey.map { [Self.hash($0): Entry(name: "api-key", scopes: [.admin])] } ?? [:])
    }

    /// Whether any key is configured.
    public var isEmpty: Bool { entries.withLock { $0.isEmpty } }

    /// How many keys are configured.
    public var count: Int { entries.withLock { $0.count } }

    /// Reads the keys file again; throws (and keeps the keys in force) when it is missing or malformed.
    public func reload() throws(AccessConfigurationError) {
        let fresh = try Self.read(file: file, legacyKey: legacyKey)
        entries.withLock { $0 = fresh }
    }

    /// The key's entry, or nil. The lookup is by the key's SHA-256, so comparing takes the same time whatever the
    /// key shares with a valid one.
    public func entry(forKey key: String) -> Entry? {
        let hash = Self.hash(key)
        return entries.withLock { $0[hash] }
    }

    /// The lowercase hexadecimal SHA-256 of a key, as the keys file holds it.
    public static func hash(_ key: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: Array(key.utf8)) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    private static func read(file: String?, legacyKey: String?) throws(AccessConfigurationError) -> [String: Entry] {
        var entries: [String: Entry] = [:]
        if let legacyKey { entries[hash(legacyKey)] = Entry(name: "api-key", scopes: [.admin]) }
        guard let file else { return entries }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: file)) } catch {
            throw .unreadable(file, error.localizedDescription)
        }
        struct KeysFile: Decodable {
            struct Key: Decodable {
                let name: String
                let sha256: String
                let scopes: [String]
            }
            let keys: [Key]
        }
        let parsed: KeysFile
        do { parsed = try JSONDecoder().decode(KeysFile.self, from: data) } catch {
            throw .malformed(file, "expected {\"keys\": [{\"name\", \"sha256\", \"scopes\"}, …]}: \(error)")
        }
        for (index, key) in parsed.keys.enumerated() {
            let at = "keys[\(index)]"
            guard !key.name.isEmpty, key.name.count <= 100 else { throw .malformed(file, "\(at).name must be 1 to 100 characters") }
            let hash = key.sha256.lowercased()
            guard hash.count == 64, hash.allSatisfy(\.isHexDigit) else {
                throw .malformed(file, "\(at).sha256 must be 64 hexadecimal digits (the key's SHA-256, e.g. from poi keys new)")
            }
            var scopes: Set<Scope> = []
            for name in key.scopes {
                guard let scope = Scope(rawValue: name) else {
                    throw .malformed(
                        file,
                        "\(at).scopes: unknown scope \"\(name)\" (known: \(Scope.allCases.map(\.rawValue).joined(separator: ", ")))"
                    )
                }
                scopes.insert(scope)
            }
            guard !scopes.isEmpty else { throw .malformed(file, "\(at).scopes must name at least one scope") }
            guard entries[hash] == nil else { throw .malformed(file, "\(at): the same key appears twice") }
            entries[hash] = Entry(name: key.name, scopes: scopes)
        }
        return entries
    }
}

/// A configuration of access that cannot be used: named by file and rule.
public enum AccessConfigurationError: Error, Sendable, CustomStringConvertible {
    case unreadable(String, String)
    case malformed(String, String)

    public var description: String {
        switch self {
        case .unreadable(let file, let reason): "cannot read \(file): \(reason)"
        case .malformed(let file, let rule): "\(file): \(rule)"
        }
    }
}
