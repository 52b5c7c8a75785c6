import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// `--bwlimit RATE`, in rsync's units: what a run sends (`push`, `watch`, `serve`), or what
/// it receives (`pull`, which paces its reading so that TCP slows the sender).
enum BandwidthOption {
    /// nil inside: `--bwlimit 0`, no limit (as in rsync).
    static let limit = option(direction: "Send")

    /// `pull`'s: the same option, limiting what it receives.
    static let receiveLimit = option(direction: "Receive")

    private static func option(direction: String) -> Option<TransferRate?> {
        Option<TransferRate?>(
            "bwlimit", valueName: "RATE",
            help: "\(direction) at most RATE for the whole run, shared by every peer (KiB/s; K, M, G suffixes as rsync; 0 = no limit).",
            expected: "a rate such as 500 (KiB/s), 800K, 2.5M, 1G or 10MB; 0 for no limit, at least 512 bytes/s"
        ) { text in
            do { return .some(try TransferRate.parse(text)) } catch { return nil }
        }
    }

    /// One budget for the run, or nil without a limit.
    static func budget(from arguments: ParsedArguments) throws -> BandwidthBudget? {
        // The two options are one `--bwlimit`: the value is read by name.
        guard let rate = try arguments.value(limit) ?? nil else { return nil }
        return BandwidthBudget(rate: rate)
    }
}
