internal import CZstd
import LFSyncContent

/// A reusable, bounded zstd decompression context for Chunk payloads.
///
/// Decompression writes into a buffer of exactly the declared length and no
/// more: zstd's one-shot API (`ZSTD_decompressDCtx`) decodes straight into
/// that buffer — no window buffer is allocated, whatever the frame header
/// claims — and fails instead of writing past its end. A "decompression
/// bomb" therefore costs at most the declared length, itself capped by
/// `ChunkerConfiguration.absoluteMaxChunkSize`.
package struct ZstdDecompressor: ~Copyable {
    /// `ZSTD_error_dstSize_tooSmall` from zstd_errors.h (whose enum values are
    /// documented as stable); zstd returns error codes as `(size_t)-code`, which
    /// Swift (importing `size_t` as `Int`) sees as `-code`.
    private static let dstSizeTooSmall = 70
    /// `ZSTD_CONTENTSIZE_UNKNOWN` and `ZSTD_CONTENTSIZE_ERROR` (macros Swift does not import).
    private static let contentSizeUnknown = UInt64.max
    private static let contentSizeError = UInt64.max - 1

    private let context: OpaquePointer

    package init() {
        guard let context = ZSTD_createDCtx() else { fatalError("zstd: out of memory creating a decompression context") }
        self.context = context
    }

    deinit {
        ZSTD_freeDCtx(context)
    }

    /// Checks what can be checked from the frame header alone — exactly one
    /// frame, and a recorded content size (if any) equal to `declaredLength` —
    /// so lies are refused before any output buffer is allocated.
    package static func validateHeader(of input: [UInt8], declaredLength: Int) throws(WireError) {
        let (frameLength, contentSize) = input.withUnsafeBytes { source in
            (ZSTD_findFrameCompressedSize(source.baseAddress, source.count),
             ZSTD_getFrameContentSize(source.baseAddress, source.count))
        }
        guard ZSTD_isError(frameLength) == 0 else {
            throw .decompressionFailed(String(cString: ZSTD_getErrorName(frameLength)))
        }
        guard frameLength == input.count else {
            throw .decompressionFailed("\(input.count - frameLength) bytes after the zstd frame")
        }
        switch contentSize {
        case contentSizeError:
            throw .decompressionFailed("invalid zstd frame header")
        case contentSizeUnknown:
            return
        default:
            guard contentSize == UInt64(declaredLength) else {
                throw .decompressedSizeMismatch(declared: declaredLength, actual: Int(clamping: contentSize))
            }
        }
    }

    /// Decompresses `input`, which must expand to exactly `declaredLength` bytes.
    package func decompress(_ input: [UInt8], declaredLength: Int) throws(WireError) -> [UInt8] {
        guard declaredLength > 0, declaredLength <= Int(ChunkerConfiguration.absoluteMaxChunkSize) else {
            throw .decompressionFailed("declared length \(declaredLength) outside 1...\(ChunkerConfiguration.absoluteMaxChunkSize)")
        }
        try Self.validateHeader(of: input, declaredLength: declaredLength)
        var result = 0
        let output = [UInt8](unsafeUninitializedCapacity: declaredLength) { buffer, count in
            result = input.withUnsafeBytes { source in
                ZSTD_decompressDCtx(context, buffer.baseAddress, buffer.count, source.baseAddress, source.count)
            }
            count = ZSTD_isError(result) != 0 ? 0 : result
        }
        if ZSTD_isError(result) != 0 {
            if result == -Self.dstSizeTooSmall {
                throw .decompressedTooLarge(declared: declaredLength)
            }
            throw .decompressionFailed(String(cString: ZSTD_getErrorName(result)))
        }
        guard result == declaredLength else {
            throw .decompressedSizeMismatch(declared: declaredLength, actual: result)
        }
        return output
    }
}
