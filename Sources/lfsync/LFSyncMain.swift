import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// Entry point: parse, dispatch, and map every error to one printer and one exit code.
@main
struct LFSyncMain {
    static func main() async {
        MemoryTuning.keepLargeBuffersInHeap()
        let model = LFSyncCommands.model
        let parser = ArgumentParser(model: model)
        let exitCode: ExitCode
        let argv = Array(CommandLine.arguments.dropFirst())
        // Hidden helpers for completion scripts and doc generation; not part of the public model.
        if argv.first == "__complete" {
            exit(HiddenCommands.complete(Array(argv.dropFirst())).rawValue)
        }
        do {
            if argv.first == "__generate-docs" {
                exit(try GenerateDocsCommand(arguments: ParsedArguments(positionals: Array(argv.dropFirst()))).run().rawValue)
            }
            switch try parser.parse(argv) {
            case let .help(command):
                print(command.map { HelpFormatter(model: model).help(for: $0) } ?? HelpFormatter(model: model).overview())
                exitCode = .success
            case .version:
                print("lfsync \(LFSyncVersion.current)")
                exitCode = .success
            case let .run(command, arguments):
                exitCode = try await run(command, arguments, model: model)
            }
        } catch let error as UsageError {
            Console.writeError("lfsync: \(error.message)\n")
            if let hint = error.hint { Console.writeError("\(hint)\n") }
            exitCode = .usage
        } catch let failure as CommandFailure {
            Console.writeError("lfsync: \(failure.message)\n")
            exitCode = failure.exitCode
        } catch {
            Console.writeError("lfsync: \(error)\n")
            exitCode = .software
        }
        exit(exitCode.rawValue)
    }

    static func run(_ command: CommandSpec, _ arguments: ParsedArguments, model: CommandModel) async throws -> ExitCode {
        let console = Console(arguments: arguments)
        if let type = LFSyncCommands.runnable.first(where: { $0.spec.name == command.name }) {
            return try await type.init(arguments: arguments, console: console).run()
        }
        switch command.name {
        case "help":
            if let name = arguments.positionals.first {
                guard let target = model.command(named: name) else {
                    throw UsageError(message: "unknown command '\(name)'", hint: "Run 'lfsync help' for the list of commands.")
                }
                print(HelpFormatter(model: model).help(for: target))
            } else {
                print(HelpFormatter(model: model).overview())
            }
            return .success
        case "version":
            print("lfsync \(LFSyncVersion.current)")
            return .success
        default:
            throw CommandFailure(message: "command '\(command.name)' is not implemented", exitCode: .software)
        }
    }
}
