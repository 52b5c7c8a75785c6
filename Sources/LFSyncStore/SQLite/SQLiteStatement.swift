internal import CSQLite

/// A prepared statement: compile SQL once, then bind, step and reset it for
/// every row — the difference between 100k inserts in milliseconds and in
/// seconds.
///
/// Owned by the `SQLiteDatabase` that prepared it and used on that
/// connection's serial executor only (not `Sendable`). It must not outlive its
/// database; the connection is closed with `sqlite3_close_v2`, so even a
/// statement that does is finalized safely.
package final class SQLiteStatement {
    package let handle: OpaquePointer
    package let sql: String

    package init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// `SQLITE_TRANSIENT` is a C macro (`(sqlite3_destructor_type)-1`) that Swift
    /// cannot import. It tells SQLite to copy bound text and blobs before the
    /// bind call returns, which is what makes binding Swift buffers (valid only
    /// inside `withUnsafeBytes`) safe. Computed, so it is no global state.
    private static var transient: sqlite3_destructor_type {
        unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    }

    package var parameterCount: Int32 { sqlite3_bind_parameter_count(handle) }

    // MARK: Binding (indices start at 1, as in SQLite)

    package func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    /// Also what an integer literal picks among the overloads.
    package func bind(_ value: Int, at index: Int32) throws(SQLiteError) {
        try bind(Int64(value), at: index)
    }

    package func bind(_ value: Double, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_double(handle, index, value))
    }

    /// Binds with an explicit byte length, so embedded NULs survive and no
    /// `strlen` runs.
    package func bind(_ value: String, at index: Int32) throws(SQLiteError) {
        var text = value
        let result = text.withUTF8 { utf8 -> Int32 in
            // A nil base address would bind NULL, not the empty string.
            guard let base = utf8.baseAddress, !utf8.isEmpty else {
                return sqlite3_bind_text(handle, index, "", 0, Self.transient)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) { chars in
                sqlite3_bind_text64(handle, index, chars, UInt64(utf8.count), Self.transient, UInt8(SQLITE_UTF8))
            }
        }
        try check(result)
    }

    package func bind(_ value: [UInt8], at index: Int32) throws(SQLiteError) {
        try check(value.withUnsafeBytes { bindBlob($0, at: index) })
    }

    /// A blob from memory lent for this call (SQLite copies it): a value
    /// built on the stack need not become an array first.
    package func bind(blob raw: UnsafeRawBufferPointer, at index: Int32) throws(SQLiteError) {
        try check(bindBlob(raw, at: index))
    }

    private func bindBlob(_ raw: UnsafeRawBufferPointer, at index: Int32) -> Int32 {
        // A nil base address would bind NULL, not an empty blob.
        guard let base = raw.baseAddress, !raw.isEmpty else { return sqlite3_bind_zeroblob(handle, index, 0) }
        return sqlite3_bind_blob64(handle, index, base, UInt64(raw.count), Self.transient)
    }

    package func bindNull(at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, index))
    }

    func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        switch value {
        case .null: try bindNull(at: index)
        case let .integer(integer): try bind(integer, at: index)
        case let .real(real): try bind(real, at: index)
        case let .text(text): try bind(text, at: index)
        case let .blob(blob): try bind(blob, at: index)
        }
    }

    /// Resets the statement and binds `values` to parameters 1...n. The count
    /// must match exactly: a missing parameter would silently be NULL.
    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        guard values.count == Int(parameterCount) else {
            throw .misuse("statement takes \(parameterCount) parameters, \(values.count) given: \(sql)")
        }
        reset()
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    // MARK: Stepping

    /// Advances to the next row: the row, or `nil` when the statement is done.
    /// The row is only valid until the next `step` or `reset`.
    @discardableResult
    func step() throws(SQLiteError) -> SQLiteRow? {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return SQLiteRow(handle: handle)
        case SQLITE_DONE: return nil
        default:
            let error = SQLiteError(code: result, handle: sqlite3_db_handle(handle))
            reset()
            throw error
        }
    }

    /// Rewinds so the statement can run again; bindings are kept.
    ///
    /// Every helper below resets when it is done, because a SELECT left
    /// mid-way keeps its read snapshot open and stops WAL checkpoints.
    /// (`sqlite3_reset` repeats the last step's error, which was already thrown.)
    package func reset() {
        sqlite3_reset(handle)
    }

    package func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    /// Runs a statement that returns no rows (or whose rows are not wanted)
    /// with the current bindings, then resets it.
    package func run() throws(SQLiteError) {
        defer { reset() }
        while try step() != nil {}
    }

    /// Binds `values`, runs to completion and resets.
    func execute(_ values: [SQLiteValue] = []) throws(SQLiteError) {
        try bind(values)
        try run()
    }

    /// Binds `values` and calls `body` for each row; resets afterwards, also
    /// when `body` throws.
    func forEachRow(
        _ values: [SQLiteValue] = [], _ body: (SQLiteRow) throws(SQLiteError) -> Void
    ) throws(SQLiteError) {
        try bind(values)
        defer { reset() }
        while let row = try step() {
            try body(row)
        }
    }

    /// Binds `values` and maps every row.
    func rows<T>(_ values: [SQLiteValue] = [], _ transform: (SQLiteRow) throws(SQLiteError) -> T) throws(SQLiteError) -> [T] {
        var result = [T]()
        try forEachRow(values) { row throws(SQLiteError) in result.append(try transform(row)) }
        return result
    }

    /// Binds `values` and maps the first row, if any.
    func firstRow<T>(_ values: [SQLiteValue] = [], _ transform: (SQLiteRow) throws(SQLiteError) -> T) throws(SQLiteError) -> T? {
        try bind(values)
        defer { reset() }
        guard let row = try step() else { return nil }
        return try transform(row)
    }

    private func check(_ result: Int32) throws(SQLiteError) {
        guard result == SQLITE_OK else { throw SQLiteError(code: result, handle: sqlite3_db_handle(handle)) }
    }
}
