/// One step of schema evolution: the SQL that takes a database from version
/// `version - 1` to `version`. Shipped steps are never edited, only appended.
struct Migration: Sendable {
    package let version: Int32
    package let name: String
    package let sql: String
}

/// An ordered list of migrations keyed by `PRAGMA user_version`.
///
/// `user_version` lives in the database header and changes transactionally, so
/// the schema change and the version bump commit together: a crash mid-way
/// leaves the old schema at the old version, never a half-migrated file.
struct Migrations: Sendable {
    package let steps: [Migration]

    /// The steps must be numbered 1, 2, 3, ... in order; anything else is a
    /// programming error caught by the first test that opens a database.
    package init(_ steps: [Migration]) {
        for (index, step) in steps.enumerated() {
            precondition(step.version == Int32(index + 1), "migration \(step.name) must have version \(index + 1)")
        }
        self.steps = steps
    }

    package var latestVersion: Int32 { steps.last?.version ?? 0 }

    /// Brings `database` up to `latestVersion`; a database already there is left
    /// untouched, so calling this on every open is cheap and idempotent.
    ///
    /// Runs under `BEGIN IMMEDIATE` and reads the version inside it, so two
    /// processes opening the same new file cannot both run step 1.
    ///
    /// - Returns: the versions before and after.
    /// - Throws: `.schemaTooNew` for a database written by a newer lfsync (we
    ///   must not guess what its tables mean, let alone write to them), and
    ///   `.corrupt` for a negative version.
    @discardableResult
    package func apply(to database: SQLiteDatabase) throws(SQLiteError) -> (from: Int32, to: Int32) {
        try database.transaction { () throws(SQLiteError) in
            let current = try database.userVersion()
            guard current >= 0 else { throw .corrupt(message: "negative schema version \(current)") }
            guard current <= latestVersion else { throw .schemaTooNew(found: current, supported: latestVersion) }
            for step in steps where step.version > current {
                try database.execute(step.sql)
                try database.setUserVersion(step.version)
            }
            return (current, latestVersion)
        }
    }
}
