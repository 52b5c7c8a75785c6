/// The systemd user services the README and the manual show, generated like
/// the manual (`contrib/systemd/`), so the files, the page and the command
/// lines they run cannot disagree; a test runs each unit's `ExecStart` as written.
enum SystemdUnits {
    static let binary = "/usr/local/bin/lfsync"

    struct Unit {
        var name: String
        var description: String
        var execStart: String
        var comments: [String]
        var service: [String]
    }

    static let serve = Unit(
        name: "lfsync-serve.service",
        description: "lfsync: receive photos and files from your own devices",
        execStart: "\(binary) serve %h/Pictures",
        comments: [
            "A systemd user service that receives from your other devices into ~/Pictures.",
            "Run 'lfsync init' and 'lfsync trust DEVICE-ID --auto-accept' first: with no terminal,",
            "serve declines everything it would have asked about.",
        ],
        service: [
            "# Received files get the sender's modes masked by this umask (0002: the household group may write too).",
            "UMask=0022",
            "# serve closes its connections and withdraws its advertisement on SIGTERM.",
            "KillSignal=SIGTERM",
            "TimeoutStopSec=30",
        ])

    static let watch = Unit(
        name: "lfsync-watch.service",
        description: "lfsync: send new photos to your other devices as soon as they settle",
        execStart: "\(binary) watch %h/Pictures --all",
        comments: [
            "A systemd user service that keeps every trusted device up to date with ~/Pictures.",
            "Trust the receiving devices first ('lfsync trust DEVICE-ID --address HOST:PORT'); each of",
            "them runs 'lfsync serve' and trusts this device with --auto-accept.",
        ],
        service: [
            "# On SIGTERM watch finishes the push in flight, then exits 0: give it time to.",
            "KillSignal=SIGTERM",
            "TimeoutStopSec=120",
        ])

    static let all = [serve, watch]

    static func text(of unit: Unit) -> String {
        let install = unit.name.replacingOccurrences(of: ".service", with: "")
        var lines = unit.comments.map { "# " + $0 }
        lines += [
            "# Install:  mkdir -p ~/.config/systemd/user && cp \(unit.name) ~/.config/systemd/user/",
            "#           systemctl --user daemon-reload && systemctl --user enable --now \(install)",
            "[Unit]",
            "Description=\(unit.description)",
            "Documentation=man:lfsync(1)",
            "After=network-online.target",
            "Wants=network-online.target",
            "",
            "[Service]",
            "Type=simple",
            "ExecStart=\(unit.execStart)",
        ]
        lines += unit.service
        lines += ["Restart=on-failure", "RestartSec=10", "", "[Install]", "WantedBy=default.target"]
        return lines.joined(separator: "\n") + "\n"
    }
}
