import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// Per-peer progress on stderr: one line per peer, redrawn in place on a
/// terminal; plain lines or JSON lines when asked; nothing otherwise.
final class ProgressRenderer: @unchecked Sendable {
    enum Mode: String, CaseIterable, Sendable { case auto, plain, json, none }

    private let mode: Mode
    private let useColor: Bool
    private let started = Date()
    /// The latest update per peer, in `order`.
    private var latest: [String: TransferUpdate] = [:]
    private var order: [String] = []
    private var drawn = 0
    private var lastDraw = Date.distantPast
    private var lastPlain: [String: Int] = [:]

    init(mode: Mode, console: Console) {
        if mode == .auto {
            self.mode = console.stderrIsTerminal && console.verbosity != .quiet ? .auto : .none
        } else {
            self.mode = console.verbosity == .quiet ? .none : mode
        }
        useColor = console.useColor
    }

    /// Called for every update (one per chunk sent): lines are formatted only
    /// when something is written, so a quiet or throttled display costs nothing.
    func show(_ update: TransferUpdate) {
        guard mode != .none else { return }
        let name = update.peer.name
        if latest[name] == nil { order.append(name) }
        latest[name] = update
        let progress = update.progress
        switch mode {
        case .none:
            return
        case .json:
            let object: [String: Any] = ["event": "progress", "peer": name, "deviceID": update.peer.deviceID.description,
                                         "bytesDone": progress.bytesDone, "bytesTotal": progress.bytesTotal,
                                         "assetsDone": progress.assetsDone, "assetsTotal": progress.assetsTotal,
                                         "state": "\(update.state)", "time": JSONOutput.timestamp(Date())]
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                Console.writeError(String(decoding: data, as: UTF8.self) + "\n")
            }
        case .plain:
            // A line per peer per 10 % (and at the end), so logs stay readable.
            let decile = update.state.isFinal ? 11 : Int(progress.fractionCompleted * 10)
            if lastPlain[name] != decile {
                lastPlain[name] = decile
                Console.writeError(line(for: update) + "\n")
            }
        case .auto:
            guard update.state.isFinal || Date().timeIntervalSince(lastDraw) > 0.1 else { return }
            lastDraw = Date()
            var output = drawn > 0 ? "\u{1B}[\(drawn)A" : ""
            for peer in order {
                output += "\r\u{1B}[2K" + (latest[peer].map(line(for:)) ?? "") + "\n"
            }
            drawn = order.count
            Console.writeError(output)
        }
    }

    private func line(for update: TransferUpdate) -> String {
        let progress = update.progress
        let elapsed = max(0.001, Date().timeIntervalSince(started))
        let rate = Double(progress.bytesDone) / elapsed
        let remaining = progress.bytesTotal > progress.bytesDone ? Double(progress.bytesTotal - progress.bytesDone) / max(rate, 1) : 0
        let state: String = switch update.state {
        case .offering: "waiting for an answer"
        case .transferring: String(format: "%3.0f%%  %@ / %@  %@/s  ETA %@", progress.fractionCompleted * 100,
                                   ByteCountText.format(progress.bytesDone), ByteCountText.format(progress.bytesTotal),
                                   ByteCountText.format(UInt64(rate)), Self.duration(remaining))
        case .completed: "done: \(progress.assetsDone) assets confirmed, \(ByteCountText.format(progress.bytesDone)) sent"
        case let .declined(reason): "declined: \(reason)"
        case let .failed(reason): "failed: \(reason)"
        case .cancelled: "cancelled: \(progress.assetsDone) assets confirmed, the rest left for another time"
        }
        return "\(update.peer.name.padding(toLength: 14, withPad: " ", startingAt: 0)) \(state)"
    }

    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds < 360_000 else { return "--:--" }
        let total = Int(seconds.rounded())
        return String(format: "%d:%02d", total / 60, total % 60)
    }
}
