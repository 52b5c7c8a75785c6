#if canImport(Glibc)
import Glibc
#endif

/// The process's file mode creation mask, read without changing it.
///
/// `umask(2)` can only be read by setting it, which races with every other
/// thread creating files; Linux (4.7 and later) shows it in `/proc/self/status`
/// instead. Where that line is missing the conventional 022 is assumed.
package enum ProcessUmask {
    public static var current: UInt32 {
        // /proc files report size 0: read what comes, up to a bound.
        guard let file = try? ReadOnlyFile(path: "/proc/self/status"),
              let status = try? file.read(atOffset: 0, count: 16 << 10) else { return 0o022 }
        return parse(status) ?? 0o022
    }

    /// The octal value of the `Umask:` line of a `/proc/<pid>/status` text.
    package static func parse(_ status: [UInt8]) -> UInt32? {
        for line in status.split(separator: UInt8(ascii: "\n")) {
            let text = String(decoding: line, as: UTF8.self)
            guard text.hasPrefix("Umask:") else { continue }
            let digits = text.dropFirst("Umask:".count).filter { $0 != " " && $0 != "\t" }
            guard let value = UInt32(digits, radix: 8), value <= 0o777 else { return nil }
            return value
        }
        return nil
    }
}
