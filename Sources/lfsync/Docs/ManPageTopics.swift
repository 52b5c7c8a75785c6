import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// The manual's sections on behaviour that spans commands: ignore rules, file
/// modes, bandwidth limits and running as a service. The lists in them come
/// from the code (the default patterns, the unit files), so they cannot drift.
extension ManPageGenerator {
    func topics() -> [String] {
        ignoreRules() + fileModes() + bandwidthLimits() + runningContinuously()
    }

    private var toolName: String { Roff.literal(model.toolName) }

    private func ignoreRules() -> [String] {
        var lines = [
            ".SH IGNORE RULES",
            "\(Roff.bold("push")), \(Roff.bold("watch")), \(Roff.bold("scan")), \(Roff.bold("pull")) and \(Roff.bold("serve")) leave files out by rules in the syntax of \(Roff.bold("gitignore"))(5), followed exactly, matched on the bytes of each path relative to the library folder.",
            "The rules come from four places, in rising precedence, and the last rule that matches a path decides (a rule starting with ! takes a path back):",
            "the built-in defaults; the library's own \(Roff.italic(Roff.literal(IgnoreRules.fileName))) in its top folder; every \(Roff.bold("\\-\\-exclude\\-from")) \(Roff.italic("FILE")), in order; every \(Roff.bold("\\-\\-exclude")) \(Roff.italic("PATTERN")), in order.",
            "A folder that is excluded is not entered, so nothing below it can be taken back (as in git).",
            "What is left out is counted and listed as excluded (\(Roff.bold("scan \\-\\-json")) key \(Roff.bold("excluded")), \(Roff.bold("push \\-v"))), apart from files that could not be read.",
            "A pull applies the serving device's rules when it scans and then the puller's own, which it sends with its request, so excluded files never cross the link.",
            "One deliberate difference from git: a pattern git would silently never match (a trailing lone backslash, an unterminated [) is an error here.",
            ".PP",
            "The defaults, switched off with \(Roff.bold("\\-\\-no\\-default\\-excludes")):",
            ".RS",
        ]
        for pattern in IgnoreRules.defaultPatterns {
            lines += [".TP", Roff.bold(Roff.literal(pattern)), Roff.line(Roff.prose(Self.defaultReason[pattern] ?? ""))]
        }
        lines += [".RE"]
        return lines
    }

    static let defaultReason: [String: String] = [
        ".DS_Store": "Finder's folder settings (macOS).",
        "._*": "AppleDouble files: resource forks macOS writes beside files on non-Apple disks.",
        "Thumbs.db": "Explorer's thumbnail cache (Windows).",
        "desktop.ini": "Explorer's folder settings (Windows).",
        "@eaDir/": "Synology DSM's thumbnail and index folders.",
        ".thumbnails/": "Thumbnail caches of Linux desktops and Android.",
        ".Trash-*/": "Desktop trash folders on removable disks.",
        ".lfsync/": "lfsync's own state in a library (never sent in any case).",
    ]

    private func fileModes() -> [String] {
        [
            ".SH FILE MODES",
            "A file \(toolName) receives gets the permission bits it had on the sending device, masked by the receiving process's umask, as \(Roff.bold("rsync")) gives new files without \(Roff.bold("\\-\\-perms")):",
            "a 0644 photo lands 0644 under umask 022 and 0640 under 027. Setuid, setgid and sticky bits never come from a peer.",
            "A folder \(toolName) creates gets 0777 masked by the umask, as \(Roff.bold("mkdir")) makes one (a setgid parent still passes its group on).",
            "\(Roff.bold("serve \\-\\-chmod")) changes the sender's bits first, in \(Roff.bold("rsync"))'s \(Roff.bold("\\-\\-chmod")) syntax (D for folders, F for files; for example Dg+s,ug+w,Fo\\-w or D2775,F664); the umask still applies, so a NAS set-up pairs it with UMask=0002 in its unit.",
            "A file already in place keeps its mode. The staging area and the state directory stay private (0700 and 0600) whatever these say.",
        ]
    }

    private func bandwidthLimits() -> [String] {
        [
            ".SH BANDWIDTH LIMITS",
            "\(Roff.bold("\\-\\-bwlimit")) \(Roff.italic("RATE")) on \(Roff.bold("push")), \(Roff.bold("watch")) and \(Roff.bold("serve")) caps what the run sends; on \(Roff.bold("pull")) what it receives (reading slower makes TCP slow the sender).",
            "The units are \(Roff.bold("rsync"))'s: a plain number is KiB per second; K, M and G (or KiB, MiB, GiB) are powers of 1024, KB, MB and GB powers of 1000; a fraction is allowed (1.5M); 0 means no limit; the least is 512 bytes per second.",
            "One budget is shared by every peer of the run: pushing to two peers at 2M gives them about 1M each, not 2M each. Handshakes and replies count against it too.",
        ]
    }

    private func runningContinuously() -> [String] {
        var lines = [
            ".SH RUNNING CONTINUOUSLY",
            "\(Roff.bold("\(toolName) watch")) on the device that takes the photos and \(Roff.bold("\(toolName) serve")) on the ones that keep them run well as \(Roff.bold("systemd")) user services.",
            "Both stop cleanly on SIGTERM, and both apply \(Roff.bold("trust")) and \(Roff.bold("untrust")) without a restart.",
            "Each push of a watch holds the same lock as \(Roff.bold("push \\-\\-batch")): a cron batch push that starts during one exits 75 and a watch push waits for a batch push to end, so the two never send at once; with a watch running, the cron job is not needed.",
            "These units (also in \(Roff.italic("contrib/systemd/")) of the source) go in \(Roff.italic("~/.config/systemd/user/")):",
        ]
        for (name, text) in SystemdUnits.files {
            lines += [".PP", Roff.italic(Roff.literal(name)), ".PP", ".nf", ".RS 4"]
            lines += text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map {
                $0.isEmpty ? ".sp" : Roff.line(Roff.literal(String($0)))
            }
            lines += [".RE", ".fi"]
        }
        lines += [".PP", "Then: \(Roff.bold("systemctl \\-\\-user enable \\-\\-now lfsync\\-watch")) (or lfsync\\-serve, or lfsync\\-push.timer for a nightly push instead of a watch), and \(Roff.bold("loginctl enable\\-linger")) so they run while nobody is logged in."]
        return lines
    }
}
