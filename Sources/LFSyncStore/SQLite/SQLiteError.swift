internal import CSQLite

/// A failure reported by SQLite (or by the thin layer around it), sorted into
/// the cases callers actually branch on.
///
/// Like `Errno`, the common result codes get names so callers can `catch` them
/// (`.busy` → another lfsync holds the database, retry later; `.full` → tell the
/// user about disk space; `.corrupt` → the state file is damaged), and everything
/// else keeps its raw code in `.other`. SQLite's own message is kept because it
/// names the table, column or constraint involved.
public enum SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `SQLITE_BUSY` / `SQLITE_LOCKED`: another connection held a lock for longer than the busy timeout.
    case busy(message: String)
    /// `SQLITE_CONSTRAINT*`: a UNIQUE, NOT NULL, CHECK or foreign key constraint was violated.
    case constraint(message: String)
    /// `SQLITE_CORRUPT` / `SQLITE_NOTADB`, or a schema version that makes no sense.
    case corrupt(message: String)
    /// `SQLITE_FULL`: the disk (or the database's size limit) is full.
    case full(message: String)
    /// `SQLITE_READONLY` / `SQLITE_PERM`: the file or its directory is not writable.
    case readOnly(message: String)
    /// `SQLITE_CANTOPEN`, or the directory for the database could not be created.
    case cannotOpen(message: String)
    /// `SQLITE_IOERR*`: the operating system reported an I/O error.
    case ioError(message: String)
    /// The database was written by a newer lfsync whose schema this build does not know.
    case schemaTooNew(found: Int32, supported: Int32)
    /// The store was closed; no further calls are possible.
    case closed
    /// Any other result code (`SQLITE_MISUSE`, `SQLITE_NOMEM`, `SQLITE_TOOBIG`, ...).
    case other(code: Int32, message: String)

    /// Sorts an (extended) SQLite result code into a case.
    package init(code: Int32, message: String) {
        switch code & 0xff {
        case SQLITE_BUSY, SQLITE_LOCKED: self = .busy(message: message)
        case SQLITE_CONSTRAINT: self = .constraint(message: message)
        case SQLITE_CORRUPT, SQLITE_NOTADB: self = .corrupt(message: message)
        case SQLITE_FULL: self = .full(message: message)
        case SQLITE_READONLY, SQLITE_PERM: self = .readOnly(message: message)
        case SQLITE_CANTOPEN: self = .cannotOpen(message: message)
        case SQLITE_IOERR: self = .ioError(message: message)
        default: self = .other(code: code, message: message)
        }
    }

    /// The error the connection `handle` last reported for result `code`.
    ///
    /// `sqlite3_errmsg` is read immediately, before anything else can overwrite it.
    package init(code: Int32, handle: OpaquePointer?) {
        let message: String
        if let handle, let text = sqlite3_errmsg(handle) {
            message = String(cString: text)
        } else if let text = sqlite3_errstr(code) {
            message = String(cString: text)
        } else {
            message = "SQLite error \(code)"
        }
        self.init(code: code, message: message)
    }

    /// Misuse of this wrapper itself (wrong parameter count, several statements
    /// passed to `prepare`): reported as `SQLITE_MISUSE` so it is still typed.
    package static func misuse(_ message: String) -> SQLiteError {
        .other(code: SQLITE_MISUSE, message: message)
    }

    /// The primary SQLite result code this case stands for; `nil` for errors
    /// that did not come from SQLite (`schemaTooNew`, `closed`).
    public var resultCode: Int32? {
        switch self {
        case .busy: SQLITE_BUSY
        case .constraint: SQLITE_CONSTRAINT
        case .corrupt: SQLITE_CORRUPT
        case .full: SQLITE_FULL
        case .readOnly: SQLITE_READONLY
        case .cannotOpen: SQLITE_CANTOPEN
        case .ioError: SQLITE_IOERR
        case let .other(code, _): code
        case .schemaTooNew, .closed: nil
        }
    }

    public var description: String {
        switch self {
        case let .busy(message): "database is locked by another process (\(message))"
        case let .constraint(message): "database constraint violated: \(message)"
        case let .corrupt(message): "database is damaged: \(message)"
        case let .full(message): "disk is full: \(message)"
        case let .readOnly(message): "database is not writable: \(message)"
        case let .cannotOpen(message): "cannot open database: \(message)"
        case let .ioError(message): "database I/O error: \(message)"
        case let .schemaTooNew(found, supported):
            "the state database has schema version \(found), but this lfsync knows only up to \(supported); upgrade lfsync"
        case .closed: "the database has been closed"
        case let .other(code, message): "SQLite error \(code): \(message)"
        }
    }
}
