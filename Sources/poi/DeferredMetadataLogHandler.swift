import Logging

/// swift-log's `StreamLogHandler` on standard error, with the metadata kept as it is set and written out only when a
/// line is logged. `StreamLogHandler` formats its whole metadata again each time a key is set, and Hummingbird sets
/// one (`hb.request.id`) on every request that reaches the router, so that a request that logs nothing paid for the
/// text of a line (1.4 % of a pin write's CPU: RESULTS.md, "Pin writes: what the router's path costs"). The lines
/// are the same: the kept metadata goes to `StreamLogHandler` as the line's own, which it merges and formats as its
/// own (`StreamLogHandler.prepareMetadata`).
struct DeferredMetadataLogHandler: LogHandler {
    private var stream: StreamLogHandler
    var metadata: Logger.Metadata = [:]

    init(label: String, metadataProvider: Logger.MetadataProvider?) {
        stream = StreamLogHandler.standardError(label: label, metadataProvider: metadataProvider)
    }

    var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty { event.metadata = metadata.merging(event.metadata ?? [:]) { _, explicit in explicit } }
        stream.log(event: event)
    }
}

extension DeferredMetadataLogHandler {
    /// Makes it the process's handler, once (swift-log allows one bootstrap a process).
    static let bootstrap: Void = LoggingSystem.bootstrap { label in
        DeferredMetadataLogHandler(label: label, metadataProvider: LoggingSystem.metadataProvider)
    }
}
