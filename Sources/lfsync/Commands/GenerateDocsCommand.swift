import Foundation

/// `lfsync __generate-docs DIR` (hidden): writes the man page and the
/// completion scripts under DIR. `make docs` runs it on the checkout, and the
/// drift test runs it on a scratch directory and compares the bytes with the
/// checked-in files, so they cannot fall behind the command model.
struct GenerateDocsCommand {
    let arguments: ParsedArguments

    /// The files written, relative to DIR, with their contents.
    static func documents(model: CommandModel = LFSyncCommands.model) -> [(path: String, text: String)] {
        let manual = ("man/lfsync.1", ManPageGenerator(model: model).render(date: ManPageGenerator.manualDate))
        let generator = CompletionScriptGenerator(model: model)
        return [manual] + Shell.allCases.map { ($0.scriptPath, generator.script(for: $0)) }
            + SystemdUnits.files.map { ("contrib/systemd/\($0.name)", $0.text) }
    }

    func run() throws -> ExitCode {
        guard arguments.positionals.count == 1, let directory = arguments.positionals.first else {
            throw UsageError(message: "__generate-docs takes one argument, the output directory", hint: "Usage: lfsync __generate-docs DIR")
        }
        let root = URL(fileURLWithPath: directory, isDirectory: true)
        for document in Self.documents() {
            let url = root.appendingPathComponent(document.path)
            do {
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                // Atomic, so an interrupted run never leaves a half-written file to be checked in.
                try Data(document.text.utf8).write(to: url, options: .atomic)
            } catch {
                throw CommandFailure(message: "cannot write \(url.path): \(error.localizedDescription)", exitCode: .ioError)
            }
            print(url.path)
        }
        return .success
    }
}
