import Foundation
import Testing

/// The man page and the completion scripts are generated from the command
/// model (ARCHITECTURE.md, "Command line"). These tests keep the checked-in copies equal to what
/// the binary generates, and prove each file works in the program that reads
/// it: mandoc, groff and man for the page; real bash, zsh and fish for the
/// scripts. A missing program fails the test (never a silent skip): `make
/// test` installs them.
@Suite(.serialized) struct DocsAndCompletionsTests {
    static let regenerate = "run `lfsync __generate-docs .` (or make docs) to regenerate"
    static let documents = ["man/lfsync.1", "completions/lfsync.bash", "completions/_lfsync", "completions/lfsync.fish"]
    static let root = TestSupport.packageRoot

    // MARK: - Drift

    @Test func checkedInFilesMatchTheCommandModel() async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let output = try await LFSyncProcess.run(["__generate-docs", directory.path], home: directory.appendingPathComponent("home"))
            try #require(output.status == 0, "lfsync __generate-docs failed: \(output.stderr)")
            for path in Self.documents {
                let generated = try String(contentsOf: directory.appendingPathComponent(path), encoding: .utf8)
                let checkedIn = (try? String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)) ?? ""
                let upToDate = generated == checkedIn  // a Bool, so a failure prints the difference, not both files
                #expect(upToDate, "\(path) is out of date (\(Self.firstDifference(checkedIn, generated))): \(Self.regenerate)")
            }
        }
    }

    @Test func completionsCommandPrintsTheScriptAndRejectsOtherShells() async throws {
        try await TestSupport.withTemporaryDirectory { home in
            for (shell, path) in [("bash", "completions/lfsync.bash"), ("zsh", "completions/_lfsync"), ("fish", "completions/lfsync.fish")] {
                let output = try await LFSyncProcess.run(["completions", shell], home: home)
                #expect(output.status == 0, "\(shell): \(output.stderr)")
                let checkedIn = (try? String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)) ?? ""
                let same = output.stdout == checkedIn
                #expect(same, "`lfsync completions \(shell)` differs from \(path): \(Self.regenerate)")
            }
            let wrong = try await LFSyncProcess.run(["completions", "tcsh"], home: home)
            #expect(wrong.status == 64)
            #expect(wrong.stderr.contains("unsupported shell 'tcsh'"), "\(wrong.stderr)")
        }
    }

    // MARK: - Man page

    @Test func manPageIsCleanForMandocAndGroff() throws {
        let page = Self.root.appendingPathComponent("man/lfsync.1").path
        if let mandoc = Tool.require("mandoc", package: "mandoc") {
            let lint = try Tool.run(mandoc, ["-T", "lint", "-W", "warning", page])
            #expect(lint.status == 0 && lint.stdout.isEmpty && lint.stderr.isEmpty, "mandoc -T lint -W warning:\n\(lint.stdout)\(lint.stderr)")
        }
        if let groff = Tool.require("groff", package: "groff-base") {
            for device in [[], ["-Tutf8"]] {
                let check = try Tool.run(groff, ["-ww", "-z", "-man"] + device + [page])
                #expect(check.status == 0 && check.stderr.isEmpty, "groff -ww -z -man \(device.joined()):\n\(check.stderr)")
            }
        }
    }

    @Test func manRendersEveryCommand() async throws {
        guard let man = Tool.require("man", package: "man-db") else { return }
        let commands = try await Self.commandNames()
        let page = Self.root.appendingPathComponent("man/lfsync.1").path
        let rendered = try Tool.run(man, ["-l", page], environment: ["MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat", "LC_ALL": "C.UTF-8"])
        try #require(rendered.status == 0, "man -l failed: \(rendered.stderr)")
        let lines = Set(rendered.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "GLOBAL OPTIONS", "EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"] {
            #expect(lines.contains(section), "man page has no \(section) section")
        }
        for command in commands {
            // Its subsection heading, and its usage line.
            #expect(lines.contains(command), "man page has no section for '\(command)'")
            #expect(lines.contains { $0.hasPrefix("lfsync \(command)") }, "man page shows no usage for '\(command)'")
        }
        for variable in ["LFSYNC_HOME", "XDG_DATA_HOME", "NO_COLOR"] {
            #expect(lines.contains(variable), "ENVIRONMENT does not describe \(variable)")
        }
        for code in ["0", "1", "64", "69", "75", "77"] {
            #expect(lines.contains { $0.hasPrefix(code + " ") }, "EXIT STATUS does not describe \(code)")
        }
    }

    // MARK: - bash

    @Test func bashCompletesCommandsOptionsAndValues() async throws {
        guard let bash = Tool.require("bash", package: "bash") else { return }
        let script = Self.root.appendingPathComponent("completions/lfsync.bash").path
        let registered = try Tool.run(bash, ["--norc", "--noprofile", "-c", "source \"$1\" && complete -p lfsync", "_", script])
        #expect(registered.status == 0 && registered.stdout.contains("complete -F "), "complete -p lfsync: \(registered.stdout)\(registered.stderr)")

        // A caller that sets only COMP_WORDS=(lfsync pu) and COMP_CWORD=1, without COMP_LINE.
        let bare = try Tool.run(bash, ["--norc", "--noprofile", "-c", Self.bashDriver, "_", script, "", "1", "lfsync", "pu"])
        #expect(bare.stdout.split(separator: "\n") == ["push", "pull"], "COMP_WORDS=(lfsync pu): \(bare.stdout)\(bare.stderr)")

        let commands = try await Self.commandNames()
        try await Self.withFakeLFSync(peers: ["nas", "laptop", "my phone"]) { path in
            let cases: [(String, [String])] = [
                ("lfsync pu", ["push", "pull"]),
                ("lfsync ", commands),
                ("lfsync push --pro", ["--progress"]),
                ("lfsync push --progress ", ["auto", "plain", "json", "none"]),
                ("lfsync push --progress=p", ["plain"]),
                ("lfsync completions ", ["bash", "zsh", "fish"]),
                ("lfsync help ", commands),
                ("lfsync untrust ", ["nas", "laptop", #"my\ phone"#]),
                ("lfsync push ~/Pictures --to n", ["nas"]),
                ("lfsync trust X --address=nas.local:7878 --na", ["--name"]),
            ]
            for (line, expected) in cases {
                let offered = try Self.bash(bash, script, line, path: path)
                #expect(offered == expected, "bash: \(line)<TAB>")
            }
        }
        try await Self.withFakeLFSync(peers: ["ghost"], failing: true) { path in
            let offered = try Self.bash(bash, script, "lfsync untrust ", path: path)
            #expect(offered == [], "a failing `lfsync __complete peers` must offer nothing")
        }
        // Paths: bash-completion's _filedir when it is loaded (as in most
        // interactive shells), plain compgen when it is not.
        let bashCompletion = "/usr/share/bash-completion/bash_completion"
        let haveBashCompletion = FileManager.default.fileExists(atPath: bashCompletion)
        if !haveBashCompletion {
            Issue.record("\(bashCompletion) is missing: `make test` installs it (Debian package bash-completion)")
        }
        try await TestSupport.withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("Pictures"), withIntermediateDirectories: true)
            try Data().write(to: directory.appendingPathComponent("Pix.txt"))
            for preload in [""] + (haveBashCompletion ? [bashCompletion] : []) {
                let offered = try Self.bash(bash, script, "lfsync scan \(directory.path)/Pi", path: nil, preload: preload)
                #expect(offered == ["\(directory.path)/Pictures"], "directories only (preloaded: '\(preload)'): \(offered)")
            }
        }
    }

    /// Calls the function `complete -p lfsync` names, with COMP_* set as bash
    /// would (arguments: script, COMP_LINE, COMP_CWORD, COMP_WORDS...), after
    /// sourcing $LFSYNC_TEST_PRELOAD if set.
    static let bashDriver = #"""
        if [[ -n $LFSYNC_TEST_PRELOAD ]]; then source "$LFSYNC_TEST_PRELOAD" || exit 2; fi
        source "$1" || exit 3
        spec=$(complete -p lfsync) || exit 4
        function=${spec#*-F }
        function=${function%% *}
        COMP_LINE=$2 COMP_POINT=${#2} COMP_CWORD=$3
        COMP_WORDS=("${@:4}")
        COMPREPLY=()
        "$function" lfsync "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
        (( ${#COMPREPLY[@]} == 0 )) || printf '%s\n' "${COMPREPLY[@]}"
        """#

    static func bash(_ bash: String, _ script: String, _ line: String, path: String?, preload: String = "") throws -> [String] {
        let words = bashWords(line)
        var environment = ["LFSYNC_TEST_PRELOAD": preload]
        if let path { environment["PATH"] = path }
        let output = try Tool.run(bash, ["--norc", "--noprofile", "-c", bashDriver, "_", script, line, String(words.count - 1)] + words,
                                  environment: environment)
        #expect(output.status == 0 && output.stderr.isEmpty, "bash: \(line): \(output.stderr)")
        return output.stdout.split(separator: "\n").map(String.init)
    }

    /// COMP_WORDS for a line, split as readline does: at blanks, with runs of
    /// `=` and `:` (in the default COMP_WORDBREAKS) as words of their own.
    static func bashWords(_ line: String) -> [String] {
        var words: [String] = []
        var current = ""
        var currentIsBreak = false
        for character in line {
            if character == " " {
                if !current.isEmpty { words.append(current) }
                current = ""
            } else {
                let isBreak = character == "=" || character == ":"
                if !current.isEmpty, isBreak != currentIsBreak {
                    words.append(current)
                    current = ""
                }
                current.append(character)
                currentIsBreak = isBreak
            }
        }
        words.append(current)  // the word being completed, empty after a blank
        return words
    }

    // MARK: - fish

    @Test func fishCompletesCommandsOptionsAndValues() async throws {
        guard let fish = Tool.require("fish", package: "fish") else { return }
        let script = Self.root.appendingPathComponent("completions/lfsync.fish").path
        let syntax = try Tool.run(fish, ["--no-execute", script])
        #expect(syntax.status == 0, "fish -n: \(syntax.stderr)")
        try await Self.withFakeLFSync(peers: ["nas", "laptop", "my phone"]) { path in
            let cases: [(String, Set<String>)] = [
                ("lfsync pu", ["push", "pull"]),
                ("lfsync push --pro", ["--progress"]),
                ("lfsync push --progress ", ["auto", "plain", "json", "none"]),
                ("lfsync completions ", ["bash", "zsh", "fish"]),
                ("lfsync completions bash ", []),
                ("lfsync help s", ["scan", "serve", "status", "sync"]),
                ("lfsync untrust ", ["nas", "laptop", "my phone"]),
            ]
            for (line, expected) in cases {
                let offered = try Self.fish(fish, script, line, path: path)
                #expect(offered == expected, "fish: \(line)<TAB>")
            }
        }
        try await Self.withFakeLFSync(peers: ["ghost"], failing: true) { path in
            let offered = try Self.fish(fish, script, "lfsync untrust ", path: path)
            #expect(offered == [], "a failing `lfsync __complete peers` must offer nothing")
        }
    }

    static func fish(_ fish: String, _ script: String, _ line: String, path: String) throws -> Set<String> {
        let output = try Tool.run(fish, ["--no-config", "-c", "source $argv[1]; and complete -C $argv[2]", script, line], environment: ["PATH": path])
        #expect(output.status == 0 && output.stderr.isEmpty, "fish: \(line): \(output.stderr)")
        // Each line is the candidate, a tab, and its description.
        return Set(output.stdout.split(separator: "\n").map { String($0.split(separator: "\t", omittingEmptySubsequences: false)[0]) })
    }

    // MARK: - zsh

    /// zsh completion runs only inside the line editor, so the test drives a
    /// real interactive zsh on a pseudo-terminal (zsh/zpty), presses Tab, and
    /// reads what a wrapped `compadd` recorded: the matches zsh would list.
    @Test(arguments: ["source", "fpath"])
    func zshCompletesCommandsOptionsAndValues(mode: String) async throws {
        guard let zsh = Tool.require("zsh", package: "zsh") else { return }
        let script = Self.root.appendingPathComponent("completions/_lfsync").path
        let syntax = try Tool.run(zsh, ["-n", script])
        #expect(syntax.status == 0, "zsh -n: \(syntax.stderr)")
        let cases: [(String, Set<String>)] = [
            ("lfsync pu", ["push", "pull"]),
            ("lfsync push --pro", ["--progress"]),
            ("lfsync push --progress=", ["auto", "plain", "json", "none"]),
            ("lfsync completions ", ["bash", "zsh", "fish"]),
            ("lfsync help s", ["scan", "serve", "status", "sync"]),
            ("lfsync untrust ", ["nas", "laptop", "my phone"]),
        ]
        try await Self.withFakeLFSync(peers: ["nas", "laptop", "my phone"]) { path in
            try await TestSupport.withTemporaryDirectory { work in
                let offered = try Self.zsh(zsh, script, mode: mode, lines: cases.map(\.0), work: work, path: path)
                for (line, expected) in cases {
                    #expect(offered[line] == expected, "zsh (\(mode)): \(line)<TAB>")
                }
            }
        }
        try await Self.withFakeLFSync(peers: ["ghost"], failing: true) { path in
            try await TestSupport.withTemporaryDirectory { work in
                let offered = try Self.zsh(zsh, script, mode: mode, lines: ["lfsync untrust "], work: work, path: path)
                #expect(offered["lfsync untrust "] == [], "a failing `lfsync __complete peers` must offer nothing")
            }
        }
    }

    /// Arguments: mode (source|fpath), script, work directory, then the lines.
    /// Prints `line<TAB>match` for every match, and `line<TAB>` when there is none.
    static let zshDriver = #"""
        mode=$1 script=$2 work=$3
        shift 3
        zmodload zsh/zpty || exit 3
        hits=$work/hits
        zpty lfsync zsh -f -i
        zpty -w lfsync "PS1='> '; unsetopt zle_bracketed_paste 2>/dev/null; bindkey '^I' complete-word"
        if [[ $mode == fpath ]]; then
            mkdir -p $work/functions && cp $script $work/functions/_lfsync
            zpty -w lfsync "fpath=(${(q)work}/functions \$fpath); autoload -Uz compinit; compinit -u -D"
        else
            zpty -w lfsync "autoload -Uz compinit; compinit -u -D; source ${(q)script}"
        fi
        # Record every match (compadd -O matches without adding), then add as usual;
        # calls that already use -O, -A or -D are zsh's own bookkeeping.
        zpty -w lfsync "compadd() { if (( \${@[(I)-[OAD]]} )); then builtin compadd \"\$@\"; return; fi; local -a m; builtin compadd -O m \"\$@\"; (( \$#m )) && print -rl -- \$m >> ${(q)hits}; builtin compadd \"\$@\"; }"
        # The marker that completion finished; _main_complete empties comppostfuncs
        # after each completion, so the hook puts itself back.
        zpty -w lfsync "lfsync_done() { print -r -- '--done--' >> ${(q)hits}; comppostfuncs+=(lfsync_done); }; comppostfuncs=(lfsync_done)"
        for line in "$@"; do
            : >| $hits
            zpty -w -n lfsync "$line"$'\t'
            for i in {1..100}; do
                [[ -f $hits ]] && grep -q -- '^--done--$' $hits && break
                sleep 0.1
            done
            grep -q -- '^--done--$' $hits || { print -r -- "timed out: $line" >&2; exit 5; }
            found=0
            for match in ${(f)"$(<$hits)"}; do
                [[ $match == --done-- ]] && continue
                print -r -- "$line"$'\t'"$match"
                found=1
            done
            (( found )) || print -r -- "$line"$'\t'
            zpty -w -n lfsync $'\C-u'
        done
        zpty -d lfsync
        """#

    static func zsh(_ zsh: String, _ script: String, mode: String, lines: [String], work: URL, path: String) throws -> [String: Set<String>] {
        let output = try Tool.run("/usr/bin/timeout", ["120", zsh, "-f", "-c", zshDriver, "zsh", mode, script, work.path] + lines,
                                  environment: ["PATH": path, "TERM": "xterm"])
        #expect(output.status == 0 && output.stderr.isEmpty, "zsh driver (\(mode)): status \(output.status): \(output.stderr)")
        var offered: [String: Set<String>] = [:]
        for record in output.stdout.split(separator: "\n") {
            let fields = record.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 2 else { continue }
            offered[fields[0], default: []].formUnion(fields[1].isEmpty ? [] : [fields[1]])
        }
        return offered
    }

    // MARK: - Helpers

    /// The commands, as `lfsync help` lists them: an independent source, so a
    /// command missing from a generated file is noticed.
    static func commandNames() async throws -> [String] {
        try await TestSupport.withTemporaryDirectory { home in
            let help = try await LFSyncProcess.run(["help"], home: home)
            let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            guard let start = lines.firstIndex(of: "COMMANDS:") else {
                Issue.record("`lfsync help` lists no COMMANDS: \(help.stdout)")
                return []
            }
            // A command's line starts with two spaces; a wrapped abstract goes on, further in.
            return lines[(start + 1)...].prefix { !$0.isEmpty }.filter { !$0.hasPrefix("   ") }
                .compactMap { $0.split(separator: " ").first.map(String.init) }
        }
    }

    /// A stand-in `lfsync` first on PATH that answers `__complete peers`, so
    /// peer completion is tested without a state directory.
    static func withFakeLFSync(peers: [String], failing: Bool = false, _ body: (String) async throws -> Void) async throws {
        try await TestSupport.withTemporaryDirectory { directory in
            let fake = directory.appendingPathComponent("lfsync")
            let script = """
                #!/bin/sh
                [ "$1 $2" = "__complete peers" ] || exit 64
                printf '%s\\n' \(peers.map { "'\($0)'" }.joined(separator: " "))
                exit \(failing ? 1 : 0)

                """
            try Data(script.utf8).write(to: fake)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: fake.path)
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            try await body(directory.path + ":" + path)
        }
    }

    /// Where two texts first differ, for a failure message short enough to read.
    static func firstDifference(_ expected: String, _ actual: String) -> String {
        let old = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let new = actual.split(separator: "\n", omittingEmptySubsequences: false)
        let differing = zip(old, new).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        guard let index = differing ?? (old.count == new.count ? nil : min(old.count, new.count)) else {
            return "identical lines"
        }
        let was = index < old.count ? String(old[index]) : "<end of file>"
        let now = index < new.count ? String(new[index]) : "<end of file>"
        return "line \(index + 1): checked in \"\(was)\", generated \"\(now)\""
    }
}

/// An external program the tests drive, found on PATH.
private enum Tool {
    /// The program's path, or nil after recording a failure that says how to get it.
    static func require(_ name: String, package: String) -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        if let found = directories.map({ "\($0)/\(name)" }).first(where: FileManager.default.isExecutableFile(atPath:)) {
            return found
        }
        Issue.record("\(name) is not installed: `make test` installs it (Debian package \(package))")
        return nil
    }

    static func run(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:]) throws -> LFSyncProcess.Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = TestSupport.packageRoot
        var environment = ProcessInfo.processInfo.environment
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // stderr is drained on another thread, so neither pipe can fill and stall the child.
        let errors = ErrorDrain(err.fileHandleForReading)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.wait()
        process.waitUntilExit()
        return .init(status: process.terminationStatus,
                     stdout: String(decoding: stdout, as: UTF8.self),
                     stderr: String(decoding: stderr, as: UTF8.self))
    }
}

/// Reads a pipe to its end on a separate thread.
private final class ErrorDrain: @unchecked Sendable {
    // Written once by the reading thread before `done` is signalled, read after.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}
