import Dispatch
import Foundation
import LFSyncSystem

/// Waits for SIGINT or SIGTERM, so `serve` can withdraw its advertisement
/// and close connections cleanly instead of dying mid-write.
enum SignalWaiter {
    static func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let queue = DispatchQueue(label: "lfsync.signals")
            let once = AtomicFlag()
            var sources: [DispatchSourceSignal] = []
            for signalNumber in [SIGINT, SIGTERM] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
                source.setEventHandler {
                    if once.claim() { continuation.resume(returning: signalNumber) }
                }
                source.resume()
                sources.append(source)
            }
            // The sources must outlive this scope.
            SignalSources.keep(sources)
        }
    }
}

/// Holds the signal sources for the life of the process.
private enum SignalSources {
    nonisolated(unsafe) private static var kept: [DispatchSourceSignal] = []
    private static let lock = NSLock()

    static func keep(_ sources: [DispatchSourceSignal]) {
        lock.withLock { kept += sources }
    }
}
