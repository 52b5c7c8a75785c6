#if canImport(Glibc)
import Glibc
#endif
import LFSyncContent
import LFSyncSystem
import LFSyncStore

/// `<library>/.lfsync/<area>/<stamp>/<path>`: where lfsync keeps the bytes of a file it
/// replaced (`damaged`: what `verify --repair` healed), so that no act of lfsync ever
/// destroys bytes the user did not ask to lose. Outside every scan (the scanner never
/// enters `.lfsync`); only the user clears it.
///
/// Every folder is opened through the library's descriptor without following symlinks,
/// created private (0700) as the staging area is.
package enum KeptCopies {
    /// What `verify --repair` replaced.
    package static let damagedArea = "damaged"

    /// The folder and name under which a copy of `path` is kept, folders created.
    package static func place(for path: LibraryPath, area: String, stamp: String,
                              in library: LibraryDirectory) throws(ReceiveError) -> (directory: OwnedDescriptor, name: String) {
        var directory = library.root
        var display = ""
        for component in [LibraryLayout.stateDirectoryName, area, stamp] + Array(path.parentComponents) {
            display += display.isEmpty ? component : "/" + component
            (directory, _) = try library.openChildDirectory(of: directory, named: component, create: 0o700, displayPath: PrintablePath.escape(display))
        }
        return (directory, path.name)
    }

    /// The library-relative text of where `place(for:area:stamp:in:)` keeps `path`.
    package static func displayPath(of path: RelativePath, area: String, stamp: String) -> String {
        "\(LibraryLayout.stateDirectoryName)/\(area)/\(stamp)/\(path.string)"
    }
}
