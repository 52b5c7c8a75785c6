import LFSyncCrypto

extension SQLiteStatement {
    /// A hash as its 32-byte blob, from the stack: one per chunk row written
    /// or looked up, where `hash.bytes` would allocate an array each time.
    package func bind(_ hash: Hash256, at index: Int32) throws(SQLiteError) {
        try hash.withUnsafeBytes { raw throws(SQLiteError) in try bind(blob: raw, at: index) }
    }
}
