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
        /// `oneshot` for a run that ends (the nightly push), `simple` for a daemon.
        var type = "simple"
        /// Started by its timer, not by itself.
        var installed = true
    }

    /// A `.timer` unit that starts the service of the same name.
    struct Timer {
        var name: String
        var description: String
        var comments: [String]
        var timer: [String]
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

    static let sync = Unit(
        name: "lfsync-sync.service",
        description: "lfsync: keep ~/Pictures in sync with your other devices",
        execStart: "\(binary) sync %h/Pictures --all",
        comments: [
            "One service per device that keeps ~/Pictures the same on every trusted device: it receives",
            "(as lfsync-serve does) and sends what changes here (as lfsync-watch does), edits and renames",
            "included. Every device trusts the others with --auto-accept; add --delete to the command",
            "line for deletions to travel (each replaced or deleted file is kept in .lfsync/versions).",
            "Run it instead of lfsync-serve and lfsync-watch, not beside them.",
        ],
        service: [
            "UMask=0022",
            "# On SIGTERM it finishes the push in flight, then closes its connections: give it time to.",
            "KillSignal=SIGTERM",
            "TimeoutStopSec=120",
        ])

    static let push = Unit(
        name: "lfsync-push.service",
        description: "lfsync: send what your other devices lack, once",
        execStart: "\(binary) push --batch --all %h/Pictures",
        comments: [
            "One push of ~/Pictures to every trusted device, started each night by lfsync-push.timer.",
            "--batch: no prompt, a lock against overlapping runs, nothing printed on success, and an",
            "exit status that says what happened (the journal and 'systemctl --user status' show it).",
        ],
        service: [],
        type: "oneshot",
        installed: false)

    static let pushTimer = Timer(
        name: "lfsync-push.timer",
        description: "lfsync: push ~/Pictures every night",
        comments: [
            "Starts lfsync-push.service every night at 02:30, or at the next boot when the machine was off.",
        ],
        timer: ["OnCalendar=*-*-* 02:30", "Persistent=true"])

    static let all = [serve, watch, sync, push]

    /// Every unit file, by name: the services, then the timer.
    static var files: [(name: String, text: String)] {
        all.map { ($0.name, text(of: $0)) } + [(pushTimer.name, text(of: pushTimer))]
    }

    /// No `network-online.target`: a user session has none (that target belongs to the
    /// system manager), and lfsync waits for its peers itself.
    static func text(of unit: Unit) -> String {
        let install = unit.name.replacingOccurrences(of: ".service", with: "")
        var lines = unit.comments.map { "# " + $0 }
        if unit.installed {
            lines += [
                "# Install:  mkdir -p ~/.config/systemd/user && cp \(unit.name) ~/.config/systemd/user/",
                "#           systemctl --user daemon-reload && systemctl --user enable --now \(install)",
            ]
        } else {
            lines += ["# Install it with its timer (see \(install).timer)."]
        }
        lines += [
            "[Unit]",
            "Description=\(unit.description)",
            "Documentation=man:lfsync(1)",
            "",
            "[Service]",
            "Type=\(unit.type)",
            "ExecStart=\(unit.execStart)",
        ]
        lines += unit.service
        if unit.installed {
            lines += ["Restart=on-failure", "RestartSec=10", "", "[Install]", "WantedBy=default.target"]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func text(of timer: Timer) -> String {
        let service = timer.name.replacingOccurrences(of: ".timer", with: ".service")
        var lines = timer.comments.map { "# " + $0 }
        lines += [
            "# Install:  mkdir -p ~/.config/systemd/user && cp \(timer.name) \(service) ~/.config/systemd/user/",
            "#           systemctl --user daemon-reload && systemctl --user enable --now \(timer.name)",
            "[Unit]",
            "Description=\(timer.description)",
            "Documentation=man:lfsync(1)",
            "",
            "[Timer]",
        ]
        lines += timer.timer
        lines += ["", "[Install]", "WantedBy=timers.target"]
        return lines.joined(separator: "\n") + "\n"
    }
}
