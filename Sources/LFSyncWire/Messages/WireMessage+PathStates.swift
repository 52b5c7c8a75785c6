import LFSyncContent
import LFSyncCrypto
import LFSyncSystem

extension WireMessage {
    /// Asks a peer for the versions of its library's paths that changed after change `since`
    /// of its history `historyID` (PROTOCOL.md, "Path versions"): what a device applies to
    /// sync with it. Answered by a `PathStateReport`.
    package struct PathStateRequest: WireMessagePayload {
        static let messageType = WireMessageType.pathStateRequest

        package var requestID: UInt64
        /// The history the asker read from before (0: none); another one is answered from its start.
        package var historyID: UInt64
        package var since: UInt64
        /// At most this many entries in the answer (1 … `PathStateReport.maxEntries`).
        package var maxEntries: UInt32

        package init(requestID: UInt64, historyID: UInt64, since: UInt64, maxEntries: UInt32 = UInt32(PathStateReport.maxEntries)) {
            self.requestID = requestID
            self.historyID = historyID
            self.since = since
            self.maxEntries = maxEntries
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            try Self.checking { () throws(ByteReaderError) in try Self.validate(maxEntries) }
            writer.write(requestID)
            writer.write(historyID)
            writer.write(since)
            writer.write(maxEntries)
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (requestID, historyID, since, maxEntries) = try Self.decoding { () throws(ByteReaderError) in
                let values = (try reader.readUInt64(), try reader.readUInt64(), try reader.readUInt64(), try reader.readUInt32())
                try Self.validate(values.3)
                return values
            }
        }

        static func validate(_ maxEntries: UInt32) throws(ByteReaderError) {
            guard maxEntries >= 1, maxEntries <= PathStateReport.maxEntries else {
                throw .countOverLimit(count: Int(maxEntries), limit: PathStateReport.maxEntries)
            }
        }
    }

    /// The answer to a `PathStateRequest`: the changed paths' versions in the order the
    /// answering device made or learnt them, up to change `through`; `more` when further
    /// changes follow (ask again from `through`).
    package struct PathStateReport: WireMessagePayload {
        static let messageType = WireMessageType.pathStateReport
        /// Entries in one report.
        package static let maxEntries = 4096
        /// What an answering device puts in one report at most (chunk lists included), well
        /// under the frame limit.
        package static let byteBudget = 8 << 20

        package enum Status: UInt8, Hashable, Sendable {
            case answered = 0
            /// Not answered: the asker may not read this device's library.
            case refused = 1
        }

        package var requestID: UInt64
        package var status: Status
        /// The answering library's history (0 when refused).
        package var historyID: UInt64
        /// The change the entries run to (the last entry's, or where the history stands).
        package var through: UInt64
        package var more: Bool
        package var entries: [PathStateEntry]

        package init(requestID: UInt64, status: Status, historyID: UInt64, through: UInt64, more: Bool, entries: [PathStateEntry]) {
            self.requestID = requestID
            self.status = status
            self.historyID = historyID
            self.through = through
            self.more = more
            self.entries = entries
        }

        package static func refused(_ requestID: UInt64) -> PathStateReport {
            PathStateReport(requestID: requestID, status: .refused, historyID: 0, through: 0, more: false, entries: [])
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            try Self.checking { () throws(ByteReaderError) in try Self.validate(status: status, through: through, more: more, entries) }
            writer.write(requestID)
            writer.write(status.rawValue)
            writer.write(historyID)
            writer.write(through)
            writer.writeWireBool(more)
            writer.write(UInt32(entries.count))
            for entry in entries { entry.encode(into: &writer) }
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (requestID, status, historyID, through, more, entries) = try Self.decoding { () throws(ByteReaderError) in
                let requestID = try reader.readUInt64()
                let rawStatus = try reader.readUInt8()
                guard let status = Status(rawValue: rawStatus) else { throw .invalidValue("path state status \(rawStatus)") }
                let historyID = try reader.readUInt64()
                let through = try reader.readUInt64()
                let more = try reader.readWireBool(field: "more")
                let count = try reader.readCount(limit: Self.maxEntries)
                guard count <= reader.remaining / PathStateEntry.minimumWireLength else {
                    throw .truncated(needed: count * PathStateEntry.minimumWireLength, available: reader.remaining)
                }
                var entries: [PathStateEntry] = []
                entries.reserveCapacity(count)
                for _ in 0..<count { entries.append(try PathStateEntry(from: &reader)) }
                try Self.validate(status: status, through: through, more: more, entries)
                return (requestID, status, historyID, through, more, entries)
            }
        }

        /// Entries in ascending change order, each path once, none after `through`; a refusal
        /// carries nothing.
        static func validate(status: Status, through: UInt64, more: Bool, _ entries: [PathStateEntry]) throws(ByteReaderError) {
            guard entries.count <= maxEntries else { throw .countOverLimit(count: entries.count, limit: maxEntries) }
            if status == .refused, !entries.isEmpty || more { throw .invalidValue("a refused path state report with entries") }
            var paths = Set<RelativePath>()
            var previous: UInt64 = 0
            for entry in entries {
                guard entry.seq > previous else { throw .invalidValue("path state entries not in ascending change order") }
                guard entry.seq <= through else { throw .invalidValue("a path state entry after the report's last change") }
                guard paths.insert(entry.path).inserted else {
                    throw .invalidValue("path reported twice: \(PrintablePath.escape(entry.path.string))")
                }
                previous = entry.seq
            }
        }
    }

    /// One path's version in a `PathStateReport`: for a file, what it takes to build it —
    /// its size, time and mode, and its chunk list (whose hash is the file hash) — or, when
    /// the chunk list is not at hand (the file is offloaded there), its file hash alone.
    package struct PathStateEntry: Hashable, Sendable {
        package enum Content: Hashable, Sendable {
            case deleted
            case file(FileManifest)
            /// A file known by its hash: applied only from bytes the asker has.
            case fileHash(Hash256, size: UInt64, modificationTimeNs: Int64, mode: UInt16)
        }

        package var seq: UInt64
        package var path: RelativePath
        package var vector: VersionVector
        package var changedAt: Int64
        package var changedBy: UInt64
        package var content: Content

        package init(seq: UInt64, path: RelativePath, vector: VersionVector, changedAt: Int64, changedBy: UInt64, content: Content) {
            self.seq = seq
            self.path = path
            self.vector = vector
            self.changedAt = changedAt
            self.changedBy = changedBy
            self.content = content
        }

        /// The version this entry describes.
        package var version: PathVersion {
            let body: PathVersion.Content = switch content {
            case .deleted: .deleted
            case let .file(manifest): .file(manifest.fileHash)
            case let .fileHash(hash, _, _, _): .file(hash)
            }
            return PathVersion(content: body, vector: vector, changedAt: changedAt, changedBy: changedBy)
        }

        /// seq, an empty path, times and device, an empty vector's count, a deletion's kind.
        static let minimumWireLength = 8 + 2 + 8 + 8 + 2 + 1

        /// Exactly what `encode(into:)` writes.
        package var wireLength: Int {
            let body = switch content {
            case .deleted: 0
            case let .file(manifest): 8 + 8 + 2 + 4 + manifest.chunks.count * 36
            case .fileHash: 32 + 8 + 8 + 2
            }
            return Self.minimumWireLength + path.utf8Count + vector.entries.count * 16 + body
        }

        func encode(into writer: inout ByteWriter) {
            writer.write(seq)
            writer.writeString(path.string)
            writer.write(changedAt)
            writer.write(changedBy)
            writer.write(UInt16(vector.entries.count))
            writer.write(contentsOf: vector.encoded())
            switch content {
            case .deleted:
                writer.write(UInt8(0))
            case let .file(manifest):
                writer.write(UInt8(1))
                writer.write(manifest.size)
                writer.write(manifest.modificationTimeNs)
                writer.write(UInt16(truncatingIfNeeded: manifest.permissions & 0o7777))
                writer.write(UInt32(manifest.chunks.count))
                for chunk in manifest.chunks {
                    writer.write(chunk.length)
                    writer.write(chunk.hash)
                }
            case let .fileHash(hash, size, time, mode):
                writer.write(UInt8(2))
                writer.write(hash)
                writer.write(size)
                writer.write(time)
                writer.write(mode & 0o7777)
            }
        }

        init(from reader: inout ByteReader) throws(ByteReaderError) {
            seq = try reader.readUInt64()
            guard seq > 0 else { throw .invalidValue("path state entry at change 0") }
            path = RelativePath(try reader.readString(limit: FileManifest.Limits.maxPathBytes))
            guard !path.string.isEmpty else { throw .invalidValue("path state entry without a path") }
            changedAt = try reader.readInt64()
            changedBy = try reader.readUInt64()
            let count = Int(try reader.readUInt16())
            guard count >= 1, count <= VersionVector.maxEntries else { throw .countOverLimit(count: count, limit: VersionVector.maxEntries) }
            guard let vector = VersionVector(encoded: try reader.readSlice(count * 16)) else {
                throw .invalidValue("version vector not in device order, or with a zero counter")
            }
            self.vector = vector
            let kind = try reader.readUInt8()
            switch kind {
            case 0:
                content = .deleted
            case 1:
                let size = try reader.readUInt64()
                let time = try reader.readInt64()
                let mode = try Self.readMode(&reader)
                let chunks = try FileManifest.readChunkList(from: &reader, size: size)
                content = .file(FileManifest(path: path, size: size, modificationTimeNs: time,
                                             derivedFileHash: ContentHash.file(chunks: chunks), chunks: chunks, permissions: UInt32(mode)))
            case 2:
                let hash = try reader.readHash()
                content = .fileHash(hash, size: try reader.readUInt64(), modificationTimeNs: try reader.readInt64(), mode: try Self.readMode(&reader))
            default:
                throw .invalidValue("path state kind \(kind)")
            }
        }

        private static func readMode(_ reader: inout ByteReader) throws(ByteReaderError) -> UInt16 {
            let mode = try reader.readUInt16()
            guard mode & ~0o7777 == 0 else { throw .invalidValue("file mode \(String(mode, radix: 8)) has bits beyond 0o7777") }
            return mode
        }
    }
}
