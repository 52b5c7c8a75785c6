import LFSyncContent
import LFSyncCrypto
import LFSyncSystem

extension WireMessage {
    /// The answer to a `HoldingCheck`: one entry per content asked about, in the same
    /// order, and nothing about any other content — or a refusal, to a device this one
    /// does not trust.
    package struct HoldingReport: WireMessagePayload {
        static let messageType = WireMessageType.holdingReport

        package enum Answer: Hashable, Sendable {
            /// Not here (never was, or gone).
            case notHeld
            /// Here, and its bytes matched its hashes when last checked: at `verifiedAt`
            /// (Unix milliseconds; now, for a check with proof, which re-read them). With
            /// proof: the keyed hash of its bytes under the asker's nonce.
            case heldVerified(verifiedAt: Int64, proof: Hash256?)
            /// It was here, but its files changed since (edited, or damaged on disk).
            case heldChanged
        }

        package var requestID: UInt64
        /// Nil: refused (the asker is not trusted here).
        package var answers: [Answer]?

        package init(requestID: UInt64, answers: [Answer]?) {
            self.requestID = requestID
            self.answers = answers
        }

        func encode(into writer: inout ByteWriter) throws(WireError) {
            writer.write(requestID)
            guard let answers else {
                writer.write(UInt8(1))
                return
            }
            try Self.checking { () throws(ByteReaderError) in
                guard !answers.isEmpty, answers.count <= HoldingCheck.maxContents else {
                    throw .countOverLimit(count: answers.count, limit: HoldingCheck.maxContents)
                }
            }
            writer.write(UInt8(0))
            writer.write(UInt16(answers.count))
            for answer in answers {
                switch answer {
                case .notHeld:
                    writer.write(UInt8(0))
                case let .heldVerified(verifiedAt, proof):
                    writer.write(UInt8(proof == nil ? 1 : 2))
                    writer.write(UInt64(bitPattern: verifiedAt))
                    if let proof { writer.write(proof) }
                case .heldChanged:
                    writer.write(UInt8(3))
                }
            }
        }

        init(from reader: inout ByteReader) throws(WireError) {
            (requestID, answers) = try Self.decoding { () throws(ByteReaderError) in
                let requestID = try reader.readUInt64()
                switch try reader.readUInt8() {
                case 0: break
                case 1: return (requestID, nil)
                case let other: throw ByteReaderError.invalidValue("holding report status \(other)")
                }
                let count = Int(try reader.readUInt16())
                guard count >= 1, count <= HoldingCheck.maxContents else {
                    throw .countOverLimit(count: count, limit: HoldingCheck.maxContents)
                }
                var answers: [Answer] = []
                answers.reserveCapacity(count)
                for _ in 0..<count {
                    switch try reader.readUInt8() {
                    case 0: answers.append(.notHeld)
                    case 1: answers.append(.heldVerified(verifiedAt: Int64(bitPattern: try reader.readUInt64()), proof: nil))
                    case 2:
                        let verifiedAt = Int64(bitPattern: try reader.readUInt64())
                        answers.append(.heldVerified(verifiedAt: verifiedAt, proof: try reader.readHash()))
                    case 3: answers.append(.heldChanged)
                    case let other: throw ByteReaderError.invalidValue("holding answer \(other)")
                    }
                }
                return (requestID, Optional(answers))
            }
        }
    }
}
