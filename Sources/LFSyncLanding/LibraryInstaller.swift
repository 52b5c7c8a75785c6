#if canImport(Glibc)
import Glibc
#endif
import LFSyncContent
import LFSyncCrypto
import LFSyncSystem
import LFSyncStore

/// Moves the staged files of one asset into the library, never overwriting
/// anything (ARCHITECTURE.md, "Receiver safety").
///
/// Per file: parent directories are opened or created through the library
/// descriptor (`O_NOFOLLOW` at every step), then the staged file is renamed
/// into place with `RENAME_NOREPLACE` — the check that the name is free and
/// taking it are one atomic step, so a file appearing meanwhile is never
/// clobbered. When the name is taken, identical content counts as already
/// installed; different content (or a directory, symlink, FIFO…) gets the
/// file stored beside it under a `ConflictName`. The directories that gained
/// entries are fsynced before `install` returns, so a reported install
/// survives power loss (file data was made durable before: `StagedFile.prepareForInstall`,
/// or the group's `StagingArea.syncFileSystem`).
///
/// **All or nothing — in-process.** If a later file of the asset fails, the
/// files this call already moved are renamed back to their staging names
/// (only if the name still holds the very inode we put there) and
/// directories it created are removed if empty; the `StagedFile`s stay
/// valid for another attempt. If something blocks that, the error is
/// `.partiallyInstalled`, listing what stayed. A *crash* mid-install is not
/// atomic: files already renamed stay in the library, the rest stay staged
/// and `StagingArea.recoverInterruptedFiles()` turns them back into complete
/// partials; offering the asset again then finds the installed files as
/// `.alreadyPresent` and completes the rest without a transfer.
package struct LibraryInstaller: Sendable {
    package let staging: StagingArea
    let strategy: NoReplaceRename.Strategy

    package init(staging: StagingArea) {
        self.init(staging: staging, strategy: .best)
    }

    /// Called right after each rename into the library, before the check that
    /// follows it: tests play there another program that renames its own file
    /// over the name.
    let afterRename: (@Sendable (_ name: String, _ directory: OwnedDescriptor) -> Void)?

    /// Tests force the fallback rename mechanisms with `strategy`.
    init(staging: StagingArea, strategy: NoReplaceRename.Strategy,
         afterRename: (@Sendable (_ name: String, _ directory: OwnedDescriptor) -> Void)? = nil) {
        self.staging = staging
        self.strategy = strategy
        self.afterRename = afterRename
    }

    /// A file this call moved into the library, with what undoing it needs.
    private struct Placed {
        let directory: OwnedDescriptor
        let name: String
        let staged: StagedFile
        /// The file we renamed into place: a rollback moves back only this one.
        let identity: FileIdentity
        let path: LibraryPath
    }

    /// The directories opened for a group of installs, by parent path: a
    /// folder of 500 photos is walked from the library root once, not 500
    /// times. Emptied whenever an install rolls back, since the rollback may
    /// remove a directory it created. Held for one group only (its
    /// descriptors, one per folder the group touches, close with it).
    package final class DirectoryCache {
        /// By parent path, compared by bytes (see `PathComponentsKey`).
        fileprivate var directories: [PathComponentsKey: OwnedDescriptor] = [:]

        package init() {}
    }

    /// Installs one asset's files, in order; results are in the same order.
    /// - Parameter syncingDirectories: fsync the directories that gained entries before
    ///   returning. A caller that installs many assets and then syncs the whole file
    ///   system once (`StagingArea.syncFileSystem`) passes false.
    /// - Precondition: every `StagedFile` came from this installer's staging area.
    /// - Parameter cache: directories already opened by earlier installs of the same group.
    /// - Parameter conflictTag: what names a conflict copy of these files (`ConflictName`):
    ///   the asset's content ID, so that every file of one asset stored beside another gets
    ///   the same suffix; by default each file's own hash.
    package func install(
        _ files: [(StagedFile, LibraryPath)], syncingDirectories: Bool = true, cache: DirectoryCache? = nil, conflictTag: Hash256? = nil
    ) throws(ReceiveError) -> [InstalledFile] {
        var statuses: [FileStatus?] = []
        return try install(files, syncingDirectories: syncingDirectories, cache: cache, conflictTag: conflictTag, statuses: &statuses)
    }

    /// As above, and `statuses` gets, for each file in order, the status of the
    /// file it renamed into place, taken through its directory's descriptor
    /// right after the rename (the rename set its ctime); nil for a file that
    /// was already present.
    package func install(
        _ files: [(StagedFile, LibraryPath)], syncingDirectories: Bool = true, cache: DirectoryCache? = nil, conflictTag: Hash256? = nil,
        statuses: inout [FileStatus?]
    ) throws(ReceiveError) -> [InstalledFile] {
        statuses = []
        var results: [InstalledFile] = []
        var placed: [Placed] = []
        var created: [(parent: OwnedDescriptor, name: String)] = []
        var toSync: [(identity: FileIdentity, directory: OwnedDescriptor)] = []
        var duplicates: [StagedFile] = []

        func syncLater(_ directory: OwnedDescriptor) throws(ReceiveError) {
            guard syncingDirectories else { return }
            let status = try ReceiveError.system { () throws(SystemError) in try directory.status("directory") }
            let identity = FileIdentity(status)
            if !toSync.contains(where: { $0.identity == identity }) {
                toSync.append((identity, directory))
            }
        }

        do {
            for (staged, path) in files {
                precondition(staged.staging === staging, "a staged file from another staging area")
                let directory: OwnedDescriptor
                let key = cache.map { _ in PathComponentsKey(path.parentComponents) }
                if let key, let cached = cache?.directories[key] {
                    directory = cached
                } else {
                    let walk = try staging.library.openDirectory(path.parentComponents, create: true)
                    created += walk.created
                    for entry in walk.created { try syncLater(entry.parent) }
                    directory = walk.directory
                    if let key { cache?.directories[key] = directory }
                }
                let (outcome, status) = try place(staged, at: path, in: directory, conflictTag: conflictTag ?? staged.fileHash, placed: &placed)
                switch outcome {
                case .alreadyPresent:
                    duplicates.append(staged)
                case .installed, .conflictRenamed:
                    try syncLater(directory)
                }
                statuses.append(status)
                results.append(outcome)
            }
            for entry in toSync where syncingDirectories {
                try ReceiveError.system { () throws(SystemError) in try entry.directory.sync("directory") }
            }
        } catch {
            cache?.directories = [:]
            let stayed = rollBack(placed, createdDirectories: created)
            if stayed.isEmpty { throw error }
            throw .partiallyInstalled(installed: stayed, cause: error)
        }
        // Only now: a rolled-back asset must still have every staged file.
        for staged in duplicates { try? staged.discard() }
        return results
    }

    /// Tries the name, then its conflict names, each with a no-replace rename.
    /// - Returns: the outcome, and the status of the file renamed into place
    ///   (nil when it was already present).
    ///
    /// Right after a rename, the new name is looked up: its status (the rename
    /// set its ctime) is what the index records, and it must be the very file
    /// that was verified, of its size — a staged name replaced meanwhile (only
    /// a process of this user could) is moved back out at once. A staged file
    /// is looked up before the rename (it must be the verified file) and after
    /// it (the name must still lead there).
    private func place(
        _ staged: StagedFile, at path: LibraryPath, in directory: OwnedDescriptor, conflictTag: Hash256, placed: inout [Placed]
    ) throws(ReceiveError) -> (InstalledFile, FileStatus?) {
        let stagingDirectory = staging.directory
        // The staged name must lead to the verified file before the rename, not only after
        // it: a rollback moves back only what lfsync verified it put there, so whatever else
        // a rename moved would stay in the library.
        let source = try ReceiveError.system { () throws(SystemError) in
            try stagingDirectory.statusOfEntry(named: staged.name, staged.displayPath)
        }
        guard let source, source.kind == .regular, source.size == staged.size, staged.identity?.isSame(as: source) ?? true else {
            throw .stagedFileMissing(fileHash: staged.fileHash)
        }
        let expected = staged.identity ?? FileIdentity(source)

        // The conflict names only once the name is taken: most files land at their own.
        var names = [path.name]
        var attempt = 0
        while attempt < names.count {
            defer { attempt += 1 }
            let name = names[attempt]
            let target = attempt == 0 ? path : path.replacingName(with: name)
            let strategy = strategy
            let outcome: NoReplaceRename.Outcome
            do {
                outcome = try NoReplaceRename.rename(
                    staged.name, in: stagingDirectory, to: name, in: directory, what: target.description, strategy: strategy)
            } catch {
                if error.errno == ENOENT { throw .stagedFileMissing(fileHash: staged.fileHash) }
                throw .system(error)
            }
            switch outcome {
            case .renamed:
                afterRename?(name, directory)
                let status = try? directory.statusOfEntry(named: name, target.description)
                // A rollback moves back only the file lfsync verified and renamed: if another
                // program renamed its own file over the name meanwhile, that file is its own.
                placed.append(Placed(directory: directory, name: name, staged: staged, identity: expected, path: target))
                guard let status, status.kind == .regular, expected.isSame(as: status), status.size == staged.size else {
                    throw .stagedFileMissing(fileHash: staged.fileHash)
                }
                return (attempt == 0 ? .installed(path) : .conflictRenamed(original: path, storedAs: target), status)
            case .destinationExists:
                if try holds(staged, named: name, in: directory, display: target.description) { return (.alreadyPresent(target), nil) }
                if attempt == 0 { names += ConflictName.candidates(for: path.name, tag: conflictTag) }
            }
        }
        throw .destinationOccupied(path.description)
    }

    /// Whether `name` is a regular file with exactly the staged content. Only
    /// a regular file is opened (a device node or FIFO could block or have
    /// side effects), without following a symlink.
    private func holds(_ staged: StagedFile, named name: String, in directory: OwnedDescriptor, display: String) throws(ReceiveError) -> Bool {
        let existing = try ReceiveError.system { () throws(SystemError) in try directory.statusOfEntry(named: name, display) }
        guard let existing, existing.kind == .regular, existing.size == staged.size else { return false }
        let fd = openat(directory.rawValue, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ELOOP || errno == ENOENT { return false }  // swapped under us
            throw .system(SystemError.current("open", path: display))
        }
        let file = OwnedDescriptor(taking: fd)
        return try ReceiveError.system { () throws(SystemError) in
            let status = try file.status(display)
            guard status.kind == .regular, status.size == staged.size else { return false }
            return try staged.hasSameBytes(as: file, display)
        }
    }

    /// Moves what this call placed back to staging, newest first, and removes
    /// the directories it created if they are empty again.
    /// - Returns: the library paths that could not be moved back.
    private func rollBack(_ placed: [Placed], createdDirectories: [(parent: OwnedDescriptor, name: String)]) -> [String] {
        var stayed: [String] = []
        for file in placed.reversed() {
            // Only our inode: if someone replaced the file meanwhile, it is theirs, and
            // nothing of ours is left there to move.
            guard let current = try? file.directory.statusOfEntry(named: file.name, file.path.description),
                  file.identity.isSame(as: current)
            else { continue }
            guard (try? NoReplaceRename.rename(
                file.name, in: file.directory, to: file.staged.name, in: staging.directory,
                what: file.staged.displayPath, strategy: strategy)) == .renamed
            else {
                stayed.append(file.path.description)
                continue
            }
        }
        for directory in createdDirectories.reversed() {
            unlinkat(directory.parent.rawValue, directory.name, AT_REMOVEDIR)
        }
        return stayed
    }
}
