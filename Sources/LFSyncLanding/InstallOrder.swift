import LFSyncContent
import LFSyncCrypto
import LFSyncStore

/// How to land one asset: per placement, per file, where its bytes come from.
/// The receiving engine decides it (`IncomingOffers`); `LibraryImporter`
/// carries it out.
package struct InstallOrder: Sendable {
    package enum Source: Hashable, Sendable {
        /// The library already holds exactly this file at this path.
        case inPlace
        /// A copy of the staged content (others still need it).
        case copy(Hash256)
        /// The staged content itself (the last to need it).
        case take(Hash256)
    }

    package let offerID: UInt64
    package let asset: PlacedAsset
    /// `sources[placement][file]`, in the asset's canonical file order.
    package let sources: [[Source]]

    package init(offerID: UInt64, asset: PlacedAsset, sources: [[Source]]) {
        self.offerID = offerID
        self.asset = asset
        self.sources = sources
    }
}
