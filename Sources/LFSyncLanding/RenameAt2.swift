#if canImport(Glibc)
import Glibc
#endif
import LFSyncSystem

/// `renameat2`, looked up once. Swift cannot see glibc's wrapper (it is behind
/// `_GNU_SOURCE`) nor call the variadic `syscall`, so it is found with `dlsym`; glibc has
/// had it since 2.28. Nil where it is missing.
enum RenameAt2 {
    typealias Function = @convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32

    /// `RENAME_NOREPLACE` from `<linux/fs.h>`: part of the kernel ABI.
    static let noReplace: UInt32 = 1
    /// `RENAME_EXCHANGE`, likewise.
    static let exchange: UInt32 = 2

    static let function: Function? = {
        guard let program = dlopen(nil, RTLD_NOW), let symbol = dlsym(program, "renameat2") else { return nil }
        return unsafeBitCast(symbol, to: Function.self)
    }()
}

/// Swaps two directory entries in one atomic step (`renameat2(RENAME_EXCHANGE)`): both
/// names exist before and after, so nothing is ever unlinked or overwritten.
enum RenameExchange {
    enum Outcome {
        case exchanged
        /// No `renameat2`, or a file system that cannot exchange: nothing moved.
        case unsupported
        case failed(SystemError)
    }

    static func exchange(_ first: String, in firstDirectory: OwnedDescriptor, with second: String, in secondDirectory: OwnedDescriptor) -> Outcome {
        guard let renameat2 = RenameAt2.function else { return .unsupported }
        while first.withCString({ from in
            second.withCString { to in renameat2(firstDirectory.rawValue, from, secondDirectory.rawValue, to, RenameAt2.exchange) }
        }) != 0 {
            switch errno {
            case EINTR: continue
            case ENOSYS, EINVAL, EOPNOTSUPP: return .unsupported
            default: return .failed(SystemError.current("rename"))
            }
        }
        return .exchanged
    }
}
