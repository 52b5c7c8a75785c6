#if canImport(Glibc)
import Glibc
#endif
import LFSyncSystem

/// Which files a scan leaves out, from three places, in rising precedence
/// (the last matching rule decides, as in git): the built-in defaults for what
/// no photo library wants, the library's own `.lfsyncignore`, and the rules
/// given for this run (`--exclude-from`, then `--exclude`). A `!` rule in a
/// later place can take a file back from an earlier one.
public struct ScanExclusions: Sendable {
    /// `IgnoreRules.defaultPatterns` first; `--no-default-excludes` turns them off.
    public var usesDefaults: Bool
    /// Reads `<library>/.lfsyncignore` when there is one.
    public var readsLibraryIgnoreFile: Bool
    /// This run's own rules, after the library's.
    public var rules: IgnoreRules

    public init(usesDefaults: Bool = true, readsLibraryIgnoreFile: Bool = true, rules: IgnoreRules = IgnoreRules()) {
        self.usesDefaults = usesDefaults
        self.readsLibraryIgnoreFile = readsLibraryIgnoreFile
        self.rules = rules
    }

    /// Nothing left out: every regular file is scanned.
    public static let none = ScanExclusions(usesDefaults: false, readsLibraryIgnoreFile: false)

    /// An ignore file larger than this is refused rather than read whole.
    public static let maxIgnoreFileBytes = 1 << 20

    public enum Failure: Error, Sendable, CustomStringConvertible {
        case unreadable(path: String, SystemError)
        case tooLarge(path: String)
        case invalid(IgnoreRules.Failure)

        public var description: String {
            switch self {
            case let .unreadable(path, error): "cannot read \(path): \(error)"
            case let .tooLarge(path): "\(path) is larger than \(ScanExclusions.maxIgnoreFileBytes >> 20) MiB"
            case let .invalid(failure): "\(failure)"
            }
        }
    }

    /// The rules in force for the library at `rootPath`.
    public func effectiveRules(forLibraryAt rootPath: String) throws(Failure) -> IgnoreRules {
        var effective = usesDefaults ? IgnoreRules.defaults() : IgnoreRules()
        if readsLibraryIgnoreFile, let contents = try Self.libraryIgnoreFile(in: rootPath) {
            do { try effective.add(fileContents: contents, source: IgnoreRules.fileName) } catch { throw .invalid(error) }
        }
        effective.append(rules)
        return effective
    }

    /// Reads a rules file named on the command line (`--exclude-from FILE`).
    public static func readRules(fromFile path: String, into rules: inout IgnoreRules) throws(Failure) {
        let contents = try read(path) { open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
        do { try rules.add(fileContents: contents, source: path) } catch { throw .invalid(error) }
    }

    /// The library's `.lfsyncignore`, opened without following a symlink (a link
    /// could point at anything; the rules must be the library's own), or nil.
    private static func libraryIgnoreFile(in rootPath: String) throws(Failure) -> [UInt8]? {
        let path = rootPath + "/" + IgnoreRules.fileName
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0, errno == ENOENT { return nil }
        return try read(path) { fd }
    }

    private static func read(_ path: String, opening: () -> Int32) throws(Failure) -> [UInt8] {
        let fd = opening()
        guard fd >= 0 else { throw .unreadable(path: path, SystemError.current("open", path: path)) }
        let file = OwnedDescriptor(taking: fd)
        let status: FileStatus
        do { status = try file.status(path) } catch { throw .unreadable(path: path, error) }
        guard status.kind == .regular else { throw .unreadable(path: path, SystemError("open", path: path, errno: EINVAL)) }
        guard status.size <= UInt64(maxIgnoreFileBytes) else { throw .tooLarge(path: path) }
        var bytes = [UInt8](repeating: 0, count: Int(status.size))
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(fd, buffer.baseAddress.map { $0 + done }, buffer.count - done)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                if count < 0 { throw .unreadable(path: path, SystemError.current("read", path: path)) }
                break
            }
            done += count
        }
        return Array(bytes.prefix(done))
    }
}
