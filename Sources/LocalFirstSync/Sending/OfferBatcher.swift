import LFSyncContent
import LFSyncWire

/// Cuts what a push sends into offers: each content once with all its
/// placements, in batches small enough to answer quickly and to keep both
/// sides' memory bounded, whatever the size of the library.
///
/// A batch closes at `targetFiles` placed files or `targetBytes` of encoded
/// offer, whichever comes first. A content whose placements alone exceed the
/// offer limits (fifty thousand empty files are one content) is split into
/// several assets of the same content in successive offers; the sender then
/// counts it synced only when every part is receipted. A content whose
/// manifest cannot fit one offer at all (a file of several hundred thousand
/// chunks) is not offered: it comes back in `unofferable` with the reason.
struct OfferBatcher {
    struct Result {
        var batches: [[PlacedAsset]]
        var unofferable: [(asset: PlacedAsset, reason: String)]
    }

    var targetFiles = 1024
    var targetBytes = 1 << 20
    var maxPlacedFiles = WireMessage.Offer.maxPlacedFiles
    var maxAssets = WireMessage.Offer.maxAssets
    var maxPayloadLength = WireProtocol.maxPayloadLength

    func batches(of assets: [PlacedAsset]) -> Result {
        var result = Result(batches: [], unofferable: [])
        var current: [PlacedAsset] = []
        var currentIDs = Set<ContentID>()
        var files = 0, bytes = WireMessage.Offer.headerLength
        func close() {
            guard !current.isEmpty else { return }
            result.batches.append(current)
            current = []
            currentIDs = []
            files = 0
            bytes = WireMessage.Offer.headerLength
        }
        for whole in assets {
            let parts: [PlacedAsset]
            do { parts = try split(whole) } catch {
                result.unofferable.append((whole, error.reason))
                continue
            }
            for part in parts {
                let length = part.wireLength
                // The same content twice in one offer is not allowed: it goes to the next one.
                if currentIDs.contains(part.contentID)
                    || current.count == maxAssets
                    || files + part.placedFileCount > maxPlacedFiles
                    || bytes + length > maxPayloadLength {
                    close()
                }
                current.append(part)
                currentIDs.insert(part.contentID)
                files += part.placedFileCount
                bytes += length
                if files >= targetFiles || bytes >= targetBytes { close() }
            }
        }
        close()
        return result
    }

    struct Unofferable: Error {
        var reason: String
    }

    /// The content as one asset, or its placements spread over several when
    /// they exceed one offer's limits.
    private func split(_ asset: PlacedAsset) throws(Unofferable) -> [PlacedAsset] {
        let fixed = WireMessage.Offer.headerLength + asset.contentWireLength
        let largestPlacement = asset.placements.map(PlacedAsset.wireLength(of:)).max() ?? 0
        guard fixed + largestPlacement <= maxPayloadLength else {
            throw Unofferable(reason: "its manifest needs \(fixed + largestPlacement) bytes, over the offer limit of \(maxPayloadLength)")
        }
        if asset.placedFileCount <= maxPlacedFiles, fixed + asset.wireLength - asset.contentWireLength <= maxPayloadLength {
            return [asset]
        }
        // Parts of the usual batch size: each then travels in an offer of its own.
        let filesPerPart = max(1, min(maxPlacedFiles, targetFiles) / asset.files.count)
        let bytesPerPart = max(min(maxPayloadLength, targetBytes), fixed + largestPlacement)
        var parts: [PlacedAsset] = []
        var placements: [Asset] = []
        var length = fixed
        for placement in asset.placements {
            let placementLength = PlacedAsset.wireLength(of: placement)
            if !placements.isEmpty, placements.count == filesPerPart || length + placementLength > bytesPerPart {
                if let part = PlacedAsset(placements: placements) { parts.append(part) }
                placements = []
                length = fixed
            }
            placements.append(placement)
            length += placementLength
        }
        if let part = PlacedAsset(placements: placements) { parts.append(part) }
        return parts
    }
}
