import LFSyncContent
import LFSyncSystem

extension WireMessage {
    /// "Sync with me now": a pushing device asks the receiver to read its path versions
    /// (PathStateRequest) and apply them — edits, renames, and deletions if asked — taking
    /// the bytes it lacks with ChunkRequests, both to the asking device on this connection,
    /// which answers them for as long as its request is open (PROTOCOL.md, "Syncing").
    /// Answered by a `SyncReply` once applied.
    package struct SyncRequest: WireMessagePayload {
        static let messageType = WireMessageType.syncRequest
        /// `maxDeletions` that sets no limit.
        package static let unlimited = UInt32.max

        package struct Flags: OptionSet, Hashable, Sendable {
            package let rawValue: UInt8
            package init(rawValue: UInt8) { self.rawValue = rawValue }
            /// Apply this device's deletions (`push --delete`); without it they are recorded,
            /// and the files kept, unless the receiver mirrors this device on its own.
            package static let deletions = Flags(rawValue: 1 << 0)
            static let known: Flags = [.deletions]
        }

        package var requestID: UInt64
        package var flags: Flags
        /// Most deletions to apply; above it none is applied (rsync's `--max-delete`).
        package var maxDeletions: UInt32

        package init(requestID: UInt64, flags: Flags = [], maxDeletions: UInt32 = SyncRequest.unlimited) {
            self.requestID = requestID
            self.flags = flags
            self.maxDeletions = maxDeletions
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            try Self.checking { () throws(ByteReaderError) in
                guard flags.isSubset(of: .known) else { throw .invalidValue("sync flags \(flags.rawValue)") }
            }
            writer.write(requestID)
            writer.write(flags.rawValue)
            writer.write(maxDeletions)
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (requestID, flags, maxDeletions) = try Self.decoding { () throws(ByteReaderError) in
                let requestID = try reader.readUInt64()
                let flags = Flags(rawValue: try reader.readUInt8())
                guard flags.isSubset(of: .known) else { throw .invalidValue("sync flags \(flags.rawValue)") }
                return (requestID, flags, try reader.readUInt32())
            }
        }
    }

    /// What the receiver of a `SyncRequest` did.
    package struct SyncReply: WireMessagePayload {
        static let messageType = WireMessageType.syncReply
        package static let maxReasonBytes = 1000

        package enum Status: UInt8, Hashable, Sendable {
            /// Every version up to the sender's last change is applied (or was already seen).
            case synced = 0
            /// Applied what could be; `reason` says what is left for the next sync.
            case partial = 1
            /// Not taken: the sender is not trusted to push to this device unasked.
            case declined = 2
            /// Nothing applied: `reason` says why (the library looks unmounted, a disk error).
            case failed = 3
        }

        package struct Counts: Hashable, Sendable {
            /// Paths that now hold the sender's file (new or updated).
            package var taken: UInt32 = 0
            /// Files moved into the versions area for the sender's deletions.
            package var deleted: UInt32 = 0
            /// Concurrent changes: both kept, one under a conflict name.
            package var conflicts: UInt32 = 0
            /// Deletions recorded but not applied (the file kept).
            package var retained: UInt32 = 0
            /// Versions not applied this time (left for the next sync).
            package var deferred: UInt32 = 0
            /// Bytes fetched by ChunkRequest.
            package var bytesFetched: UInt64 = 0

            package init() {}

            static let wireLength = 5 * 4 + 8
        }

        package var requestID: UInt64
        package var status: Status
        package var counts: Counts
        package var reason: String?

        package init(requestID: UInt64, status: Status, counts: Counts = Counts(), reason: String? = nil) {
            self.requestID = requestID
            self.status = status
            self.counts = counts
            self.reason = reason
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            try Self.checking { () throws(ByteReaderError) in
                if let reason { try WireText.validate(reason, limit: Self.maxReasonBytes, field: "reason") }
            }
            writer.write(requestID)
            writer.write(status.rawValue)
            for value in [counts.taken, counts.deleted, counts.conflicts, counts.retained, counts.deferred] { writer.write(value) }
            writer.write(counts.bytesFetched)
            writer.writeOptionalWireText(reason)
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (requestID, status, counts, reason) = try Self.decoding { () throws(ByteReaderError) in
                let requestID = try reader.readUInt64()
                let rawStatus = try reader.readUInt8()
                guard let status = Status(rawValue: rawStatus) else { throw .invalidValue("sync status \(rawStatus)") }
                var counts = Counts()
                counts.taken = try reader.readUInt32()
                counts.deleted = try reader.readUInt32()
                counts.conflicts = try reader.readUInt32()
                counts.retained = try reader.readUInt32()
                counts.deferred = try reader.readUInt32()
                counts.bytesFetched = try reader.readUInt64()
                let reason = try reader.readOptionalWireText(limit: Self.maxReasonBytes, field: "reason")
                return (requestID, status, counts, reason)
            }
        }
    }
}
