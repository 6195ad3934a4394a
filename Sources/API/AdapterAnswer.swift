import HTTPTypes

/// An answer in a compatible service's own wire format (AMap, Nominatim, Photon): status, content type and body.
/// The adapters answer their errors in this shape too, never as problem+json.
public struct AdapterAnswer: Sendable {
    public var status: HTTPResponse.Status
    public var contentType: String
    public var body: [UInt8]

    static func json(_ body: [UInt8], status: HTTPResponse.Status = .ok) -> AdapterAnswer {
        AdapterAnswer(status: status, contentType: "application/json", body: body)
    }
}
