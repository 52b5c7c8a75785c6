import Foundation
import LFSyncContent
import LFSyncStore
import LFSyncLanding

/// The offloaded rows of a library around a pull: which files are still missing (to be
/// fetched by name), and afterwards, which came back (their rows go).
enum RestoreOffloaded {
    /// The library's offloaded files that are not back yet; the rows of those that are
    /// (brought back some other way) are forgotten first.
    static func stillMissing(in library: URL, ledger: SyncStateStore) async throws -> [OffloadedFile] {
        let root = OffloadedFile.libraryKey(library)
        let rows = try await ledger.read { store throws(SQLiteError) in try store.offloaded(inLibrary: root) }
        guard !rows.isEmpty else { return [] }
        _ = try await forgetReturned(rows, in: library, ledger: ledger)
        let directory = try LibraryDirectory(path: root)
        return rows.filter { !isBack($0, in: directory) }
    }

    /// Forgets the rows whose file is in place again (a regular file of the recorded size);
    /// returns how many.
    @discardableResult
    static func forgetReturned(_ rows: [OffloadedFile], in library: URL, ledger: SyncStateStore) async throws -> Int {
        guard !rows.isEmpty else { return 0 }
        let directory = try LibraryDirectory(path: library.path)
        let back = rows.filter { isBack($0, in: directory) }.map(\.path)
        let root = OffloadedFile.libraryKey(library)
        try await ledger.write { store throws(SQLiteError) in try store.forgetOffloaded(inLibrary: root, paths: back) }
        return back.count
    }

    private static func isBack(_ row: OffloadedFile, in directory: LibraryDirectory) -> Bool {
        guard let path = try? LibraryPath.validate(row.path),
              let status = try? directory.root.statusOfEntry(named: path.string, path.description) else { return false }
        return status.kind == .regular && status.size == row.size
    }
}
