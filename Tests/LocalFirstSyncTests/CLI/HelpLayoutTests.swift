import Foundation
import Testing

/// Every command's `--help`, as a person reads it in an 80-column terminal: no line wider,
/// and every option's label whole on its line, followed by two spaces or nothing — a long
/// label (`--rescan-interval SECONDS`) once ran into its description (`SECOWhen inotify…`).
@Suite struct HelpLayoutTests {
    static let width = 80

    @Test func everyCommandsHelpFitsEightyColumnsWithWholeOptionLabels() async throws {
        try await TestSupport.withTemporaryDirectory { home in
            let commands = try await DocsAndCompletionsTests.commandNames()
            #expect(commands.count >= 15, "\(commands)")
            // An option's line: its label, then two spaces and help, or nothing (help on the next line).
            let label = try Regex(#"^  (-[A-Za-z], |    )--[a-z][a-z0-9-]*( [A-Z][A-Z0-9:\[\],.=-]*(\.\.\.)?\]?)?(  +\S.*)?$"#)
            for command in [""] + commands {
                let output = try await LFSyncProcess.run(command.isEmpty ? ["--help"] : [command, "--help"], home: home)
                #expect(output.status == 0, "\(command): \(output.stderr)")
                var section = ""
                for line in output.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
                    if line.hasSuffix(":"), line.first?.isUppercase == true { section = String(line); continue }
                    if section != "EXAMPLES:" {
                        #expect(line.count <= Self.width, "lfsync \(command) --help: a line of \(line.count) columns: \(line)")
                    }
                    if section.hasSuffix("OPTIONS:"), line.hasPrefix("  -") || line.hasPrefix("      --") {
                        #expect((try? label.wholeMatch(in: String(line))) != nil, "lfsync \(command) --help: an option label run into its help: \(line)")
                    }
                }
            }
        }
    }

    @Test func aLongLabelGetsALineOfItsOwn() async throws {
        try await TestSupport.withTemporaryDirectory { home in
            let help = try await LFSyncProcess.run(["watch", "--help"], home: home).stdout
            let lines = help.split(separator: "\n").map(String.init)
            let index = try #require(lines.firstIndex { $0.hasPrefix("      --rescan-interval") })
            #expect(lines[index] == "      --rescan-interval SECONDS")
            #expect(lines[index + 1].hasPrefix(String(repeating: " ", count: 28) + "When inotify"), "\(lines[index + 1])")
        }
    }
}
