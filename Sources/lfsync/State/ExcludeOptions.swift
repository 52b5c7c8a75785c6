import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// `--exclude PATTERN`, `--exclude-from FILE` and `--no-default-excludes`, the
/// same on every command that scans (push, scan, watch, pull, serve), in
/// gitignore's syntax. Rules apply in rising precedence: the built-in
/// defaults, the library's `.lfsyncignore`, every `--exclude-from` file, then
/// every `--exclude`, the last matching rule deciding.
enum ExcludeOptions {
    static let exclude = Option<String>(
        "exclude", valueName: "PATTERN",
        help: "Leave out files matching PATTERN (gitignore syntax; repeatable; !PATTERN takes a file back).")
    static let excludeFrom = Option<String>(
        "exclude-from", valueName: "FILE", help: "Read exclude patterns from FILE, one per line (gitignore syntax).", completion: .file)
    static let noDefaultExcludes = Flag(
        "no-default-excludes", help: "Do not leave out .DS_Store, ._*, Thumbs.db, desktop.ini, @eaDir/, .thumbnails/, .Trash-*/ by default.")

    static var specs: [OptionSpec] { [exclude.spec, excludeFrom.spec, noDefaultExcludes.spec] }

    /// The exclusions the command line asks for; a bad pattern or an unreadable
    /// file is a usage error naming it (exit 64).
    static func exclusions(from arguments: ParsedArguments) throws -> ScanExclusions {
        var rules = IgnoreRules()
        do {
            for file in try arguments.values(excludeFrom) { try ScanExclusions.readRules(fromFile: file, into: &rules) }
            for pattern in try arguments.values(exclude) { try rules.add(line: pattern, source: "--exclude") }
        } catch let failure as ScanExclusions.Failure {
            throw UsageError(message: "\(failure)", hint: "Patterns follow gitignore(5); see 'man lfsync', IGNORE RULES.")
        } catch let failure as IgnoreRules.Failure {
            throw UsageError(message: "\(failure)", hint: "Patterns follow gitignore(5); see 'man lfsync', IGNORE RULES.")
        }
        return ScanExclusions(usesDefaults: !arguments[noDefaultExcludes], rules: rules)
    }

    /// The same rules as gitignore lines, in precedence order, for a pull to hand to the
    /// serving side: the defaults, the library's `.lfsyncignore`, every `--exclude-from`
    /// file, then every `--exclude` (checked by `exclusions(from:)` first).
    static func patternLines(from arguments: ParsedArguments, library: URL) throws -> [String] {
        var lines = arguments[noDefaultExcludes] ? [] : IgnoreRules.defaultPatterns
        let ignoreFile = library.appendingPathComponent(IgnoreRules.fileName).path
        var files = FileManager.default.fileExists(atPath: ignoreFile) ? [ignoreFile] : []
        files += try arguments.values(excludeFrom)
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw UsageError(message: "cannot read \(file)", hint: "Patterns follow gitignore(5); see 'man lfsync', IGNORE RULES.")
            }
            // Split as bytes, as git does: a CRLF file loses one CR per line, a UTF-8 BOM is dropped
            // (a Swift String would take "\r\n" as one character and never split there).
            var bytes = Array(data)
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
            for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: true) {
                let text = String(decoding: line.last == 0x0D ? line.dropLast() : line, as: UTF8.self)
                if !text.isEmpty, !text.hasPrefix("#") { lines.append(text) }
            }
        }
        return lines + (try arguments.values(exclude))
    }
}
