import Foundation
import LFSyncContent
import LFSyncSystem

/// Which skipped files of a library were already reported, so that each is reported once:
/// a nightly push that prints the same "5 files skipped" every time teaches cron's mail to
/// be ignored. Kept beside the library's index in the state home (`<index>.skipped`): one
/// line per skipped path and reason; a file no longer skipped leaves the list.
struct SkipReport {
    let url: URL

    init(home: StateHome, library: URL) {
        url = URL(fileURLWithPath: home.libraryIndex(for: library).path + ".skipped")
    }

    /// Skipping by choice — a symbolic link is never followed, a FIFO or device never read,
    /// as rsync skips them without --links and --specials — is not a failure of the run; a
    /// file that could not be read is.
    static func isDeliberate(_ entry: SkippedEntry) -> Bool {
        entry.reason.contains("symbolic link") || entry.reason.contains("not a regular file")
    }

    /// The entries of `skipped` not reported before; the record becomes `skipped`.
    func newSinceLastReport(_ skipped: [SkippedEntry]) -> [SkippedEntry] {
        let lines = skipped.map { Self.line($0) }
        let before = Set(((try? String(contentsOf: url, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init))
        let news = zip(skipped, lines).filter { !before.contains($0.1) }.map(\.0)
        if Set(lines) != before {
            // Best effort: failing, the same files are reported again next time.
            try? DurableFile.write(Array(lines.sorted().joined(separator: "\n").utf8), to: url.path, mode: 0o600, placement: .replace)
        }
        return news
    }

    /// One entry as a line: its path (escaped, so no newline can split it) and its reason.
    private static func line(_ entry: SkippedEntry) -> String {
        PrintablePath.escape(entry.path.string) + "\t" + entry.reason.replacingOccurrences(of: "\n", with: " ")
    }
}
