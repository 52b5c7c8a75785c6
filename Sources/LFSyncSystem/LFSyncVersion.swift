/// The version printed by `lfsync --version` and sent in Hello messages.
package enum LFSyncVersion {
    public static let current = "0.1.0"
}
