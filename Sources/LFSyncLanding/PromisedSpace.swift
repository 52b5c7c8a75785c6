import Synchronization

/// Bytes that accepted transfers still have to write into a library's file
/// system. Free space is measured when an offer is planned, but its chunks
/// land later: without this count, every offer of a push would be judged
/// against the same free space, each accepted, and the disk found full only
/// while writing (a failed asset where a refusal up front was possible).
///
/// Each `IncomingFile` promises the bytes it still lacks once its offer is
/// accepted and gives them back as they are written, or all at once when it
/// goes (finished, failed or dropped).
package final class PromisedSpace: Sendable {
    private let bytes = Mutex<UInt64>(0)

    package init() {}

    /// Bytes promised and not yet written.
    package var total: UInt64 { bytes.withLock { $0 } }

    func promise(_ count: UInt64) {
        bytes.withLock { $0 = $0.addingReportingOverflow(count).overflow ? .max : $0 + count }
    }

    func release(_ count: UInt64) {
        bytes.withLock { $0 -= min($0, count) }
    }
}
