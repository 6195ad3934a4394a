import Hummingbird
import NIOCore

/// Hummingbird's basic context plus the client's address, which the write rate limits are kept by, and who the
/// request proved to be.
public struct AppRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer of the connection (nil in router tests, which have no socket).
    public let remoteAddress: SocketAddress?
    /// Who the request proved to be, for the request log.
    public let caller = CallerRecord()

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
