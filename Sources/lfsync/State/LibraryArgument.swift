/// One way to name a library on every command: its path, as the command's argument
/// (`lfsync push PATH`, `offload PATH`, `verify PATH`, `pull --from PEER PATH`,
/// `serve PATH`). The `--library DIR` option that `verify`, `pull` and `serve` once took
/// still works, with a note that it is deprecated (the man page says so too).
enum LibraryArgument {
    static let deprecationNote = "--library is deprecated: name the library as the command's argument"

    static func argument(name: String = "PATH", _ help: String, isOptional: Bool = true) -> ArgumentSpec {
        ArgumentSpec(name: name, help: help, isOptional: isOptional, completion: .directory)
    }

    /// The library the command was given, as PATH or as the deprecated `--library`; nil
    /// when neither. Both, naming different folders, is a usage error.
    static func path(_ arguments: ParsedArguments, legacy option: Option<String>, console: Console) throws -> String? {
        let positional = arguments.positionals.first
        let legacy = try arguments.value(option)
        if let legacy {
            if let positional, positional != legacy {
                throw UsageError(message: "two libraries given: '\(positional)' and --library '\(legacy)'", hint: "Name the library once, as the argument.")
            }
            console.note("\(deprecationNote): '\(legacy)'")
        }
        return positional ?? legacy
    }
}
