import LFSyncContent
import LFSyncSystem

extension WireMessage {
    /// The chunks of one offered asset that the receiver still needs, per file.
    /// Files (and assets) it needs nothing of are simply not listed.
    package struct NeededChunks: Hashable, Sendable {
        package struct File: Hashable, Sendable {
            /// Position of the file in the asset's canonical file order.
            package var fileIndex: UInt16
            package var chunks: ChunkIndexSet

            package init(fileIndex: UInt16, chunks: ChunkIndexSet) {
                self.fileIndex = fileIndex
                self.chunks = chunks
            }
        }

        package var contentID: ContentID
        /// Strictly ascending by `fileIndex` (the initializer sorts).
        package var files: [File]

        package init(contentID: ContentID, files: [File]) {
            self.contentID = contentID
            self.files = files.sorted { $0.fileIndex < $1.fileIndex }
        }
    }
}

extension WireMessage.NeededChunks {
    /// Every chunk index is below this, the manifest chunk-count limit.
    package static let chunkIndexLimit = UInt32(FileManifest.Limits.maxChunkCount)
    /// 32-byte content ID + u16 file count.
    package static let minimumEncodedLength = 32 + 2

    package func encode(into writer: inout ByteWriter) {
        writer.write(contentID.hash)
        writer.write(UInt16(files.count))
        for file in files {
            writer.write(file.fileIndex)
            file.chunks.encode(into: &writer)
        }
    }

    package init(from reader: inout ByteReader) throws(ByteReaderError) {
        contentID = ContentID(hash: try reader.readHash())
        let count = Int(try reader.readUInt16())
        guard count <= Asset.Limits.maxFilesPerAsset else {
            throw .countOverLimit(count: count, limit: Asset.Limits.maxFilesPerAsset)
        }
        var files = [File]()
        files.reserveCapacity(count)
        for _ in 0..<count {
            let index = try reader.readUInt16()
            if let last = files.last, index <= last.fileIndex {
                throw .invalidValue("file indices not strictly ascending")
            }
            guard index < Asset.Limits.maxFilesPerAsset else { throw .invalidValue("file index \(index)") }
            files.append(File(fileIndex: index, chunks: try ChunkIndexSet(from: &reader, indexLimit: Self.chunkIndexLimit)))
        }
        self.files = files
    }

    package func validate() throws(ByteReaderError) {
        guard files.count <= Asset.Limits.maxFilesPerAsset else {
            throw .countOverLimit(count: files.count, limit: Asset.Limits.maxFilesPerAsset)
        }
        var previous: UInt16? = nil
        for file in files {
            guard file.fileIndex < Asset.Limits.maxFilesPerAsset else { throw .invalidValue("file index \(file.fileIndex)") }
            if let previous, file.fileIndex <= previous { throw .invalidValue("file indices not strictly ascending") }
            previous = file.fileIndex
            try file.chunks.validate(indexLimit: Self.chunkIndexLimit)
        }
    }
}
