/// Names lfsync reserves inside a library folder.
package enum LibraryLayout {
    /// `<library>/.lfsync/`: staging for incoming files; never scanned or synced.
    public static let stateDirectoryName = ".lfsync"
}
