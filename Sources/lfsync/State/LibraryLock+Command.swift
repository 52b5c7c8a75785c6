import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncLanding
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// `serve` and `pull` receive into a library, and two receivers must never
/// share one (see `LibraryLock`): the second stops with the lock's exit code.
extension LibraryLock {
    static func forReceiving(into library: URL) throws -> LibraryLock {
        do { return try LibraryLock(libraryPath: library.path) } catch {
            switch error {
            case .held:
                throw CommandFailure(message: "\(error); stop it first, or try again later", exitCode: .temporaryFailure)
            case .unavailable:
                throw CommandFailure(message: "\(error)", exitCode: .ioError)
            }
        }
    }
}
