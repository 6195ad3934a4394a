import CProj

/// One PROJ transformation between two CRSs, with the PROJ context that owns it.
///
/// PROJ contexts and the objects made in them must not be used by two threads at once, so each instance has
/// its own context and is used by one thread at a time: `CoordinateConverter` checks instances out of a pool
/// for the length of one batch. Both PROJ objects are freed in `deinit`.
final class ProjTransformation: @unchecked Sendable {
    // SAFETY: @unchecked Sendable because the pointers are only touched by the one thread that has checked this
    // instance out of `CoordinateConverter`'s pool (or that created it), never concurrently.
    private let context: OpaquePointer
    private let transformation: OpaquePointer
    let source: String
    let target: String
    /// Whether the source CRS is geographic (its x, y are longitude, latitude in degrees).
    let sourceIsGeographic: Bool

    init(source: String, target: String) throws(GeoError) {
        guard let context = proj_context_create() else { throw .conversionFailed("PROJ could not create a context") }
        proj_log_level(context, PJ_LOG_NONE)
        var transformation: OpaquePointer?
        var sourceIsGeographic = false
        do {
            sourceIsGeographic = try ProjTransformation.checkCRS(source, context: context)
            _ = try ProjTransformation.checkCRS(target, context: context)
            guard let raw = proj_create_crs_to_crs(context, source, target, nil) else {
                throw GeoError.conversionFailed(
                    "PROJ has no transformation from \(source) to \(target): \(ProjTransformation.lastError(context))"
                )
            }
            // Normalise to x = longitude/easting, y = latitude/northing whatever the authority's axis order.
            transformation = proj_normalize_for_visualization(context, raw)
            proj_destroy(raw)
            guard transformation != nil else {
                throw GeoError.conversionFailed("PROJ could not normalise the axis order: \(ProjTransformation.lastError(context))")
            }
        } catch let error as GeoError {
            proj_context_destroy(context)
            throw error
        } catch {
            proj_context_destroy(context)
            throw .conversionFailed("\(error)")
        }
        self.context = context
        self.transformation = transformation!
        self.source = source
        self.target = target
        self.sourceIsGeographic = sourceIsGeographic
    }

    deinit {
        proj_destroy(transformation)
        proj_context_destroy(context)
    }

    /// Transforms points in place. Points PROJ cannot transform come back as non-finite values.
    func transform(_ points: inout [XY], inverse: Bool = false) {
        guard !points.isEmpty else { return }
        let stride = MemoryLayout<XY>.stride
        points.withUnsafeMutableBufferPointer { buffer in
            // SAFETY: XY is two Doubles laid out x then y; the buffer is contiguous, so x and y pointers with a
            // stride of one XY walk exactly the buffer's elements, and PROJ writes no more than `count` of each.
            let base = UnsafeMutableRawPointer(buffer.baseAddress!)
            let x = base.assumingMemoryBound(to: Double.self)
            let y = (base + MemoryLayout<Double>.stride).assumingMemoryBound(to: Double.self)
            proj_errno_reset(transformation)
            _ = proj_trans_generic(transformation, inverse ? PJ_INV : PJ_FWD, x, stride, buffer.count, y, stride, buffer.count, nil, 0, 0, nil, 0, 0)
        }
    }

    /// Checks that `definition` names a CRS PROJ knows and tells whether it is geographic.
    private static func checkCRS(_ definition: String, context: OpaquePointer) throws(GeoError) -> Bool {
        guard let crs = proj_create(context, definition) else {
            throw .unknownCRS(definition)
        }
        defer { proj_destroy(crs) }
        guard proj_is_crs(crs) != 0 else { throw .unknownCRS(definition) }
        switch proj_get_type(crs) {
        case PJ_TYPE_GEOGRAPHIC_2D_CRS, PJ_TYPE_GEOGRAPHIC_3D_CRS, PJ_TYPE_GEOGRAPHIC_CRS:
            return true
        default:
            return false
        }
    }

    private static func lastError(_ context: OpaquePointer) -> String {
        let code = proj_context_errno(context)
        guard let message = proj_context_errno_string(context, code) else { return "error \(code)" }
        return String(cString: message)
    }
}
