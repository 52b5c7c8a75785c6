internal import CSQLite

/// Typed access to the row a statement is positioned on.
///
/// Valid only until the statement steps or resets again; the helpers on
/// `SQLiteStatement` hand it to a closure so it does not escape in practice.
/// Column indices start at 0, as in SQLite.
///
/// Readers never trap on what a damaged or hostile database holds: SQLite
/// converts between storage classes, NULL reads as 0 / `nil`, and text that is
/// not UTF-8 is repaired with U+FFFD.
package struct SQLiteRow {
    package let handle: OpaquePointer

    package var columnCount: Int32 { sqlite3_column_count(handle) }

    package func isNull(at column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    /// NULL reads as 0; use `isNull(at:)` or `optionalInt64(at:)` where that matters.
    package func int64(at column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    package func optionalInt64(at column: Int32) -> Int64? {
        isNull(at: column) ? nil : int64(at: column)
    }

    /// An unsigned value stored by bit pattern (see `SQLiteValue.integer(unsigned:)`).
    package func uint64(at column: Int32) -> UInt64 {
        UInt64(bitPattern: int64(at: column))
    }

    package func double(at column: Int32) -> Double {
        sqlite3_column_double(handle, column)
    }

    /// `nil` for NULL. Reads the explicit byte count, so embedded NULs survive.
    package func text(at column: Int32) -> String? {
        // Per the SQLite docs: fetch the pointer first, then the byte count.
        guard let pointer = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// `nil` for NULL; an empty blob reads as `[]` (SQLite returns a null pointer for it).
    package func blob(at column: Int32) -> [UInt8]? {
        withUnsafeBlob(at: column) { $0.map { Array($0) } }
    }

    /// Lends the column's bytes without copying them (`nil` for NULL), e.g. to
    /// build a `Hash256` straight from the page cache.
    package func withUnsafeBlob<R, E: Error>(at column: Int32, _ body: (UnsafeRawBufferPointer?) throws(E) -> R) throws(E) -> R {
        if isNull(at: column) { return try body(nil) }
        let pointer = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let pointer, count > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// The column as whatever storage class it has.
    package func value(at column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: .integer(int64(at: column))
        case SQLITE_FLOAT: .real(double(at: column))
        case SQLITE_TEXT: text(at: column).map(SQLiteValue.text) ?? .null
        case SQLITE_BLOB: blob(at: column).map(SQLiteValue.blob) ?? .null
        default: .null
        }
    }
}
