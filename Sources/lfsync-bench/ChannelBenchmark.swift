import Dispatch
import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncDiscovery
import LFSyncTCP
import LFSyncWire

/// Encrypted channel throughput over loopback TCP, against single-core
/// encryption with the cipher the channel negotiates (AES-256-GCM where the
/// processor has AES instructions, else ChaCha20-Poly1305) on the same bytes,
/// in the same run.
///
/// The reference encrypts the payload in the channel's own message size
/// (65519 plaintext bytes) through the public Noise cipher state, so it is
/// the raw primitive with nothing lfsync-specific around it.
struct ChannelBenchmark {
    let totalMiB: Int
    let repetitions: Int

    func run() async throws {
        let chunkSize = 1 << 20
        let chunkCount = totalMiB
        var generator = SplitMix64(seed: 5)
        // A few distinct incompressible chunks, reused: the bytes differ per message, the generator does not dominate.
        let chunks = (0..<8).map { _ in generator.bytes(chunkSize) }
        let totalBytes = Double(chunkCount * chunkSize)

        var primitive: [Double] = []
        var channel: [Double] = []
        for _ in 0..<repetitions {
            primitive.append(try Self.encryptOnly(chunks: chunks, count: chunkCount))
            channel.append(try await Self.overLoopback(chunks: chunks, count: chunkCount))
        }
        primitive.sort()
        channel.sort()
        let primitiveRate = totalBytes / primitive[primitive.count / 2] / 1e9
        let channelRate = totalBytes / channel[channel.count / 2] / 1e9
        print("payload: \(totalMiB) MiB in 1 MiB Chunk messages; \(repetitions) repetitions, median")
        print("")
        print("| measurement | GB/s | ratio |")
        print("|---|---|---|")
        let cipher = NoiseCipher.usable.first ?? .chaChaPoly
        print(String(format: "| %@ encrypt, 1 core, 65519-byte messages | %.3f | 1.00 |",
                     cipher == .aesGCM ? "AES-256-GCM" : "ChaCha20-Poly1305", primitiveRate))
        print(String(format: "| lfsync secure channel over loopback TCP (encrypt + send + receive + decrypt + decode) | %.3f | **%.2f** |",
                     channelRate, channelRate / primitiveRate))
    }

    static func encryptOnly(chunks: [[UInt8]], count: Int) throws -> Double {
        let cipher = NoiseCipher.usable.first ?? .chaChaPoly
        var initiator = try NoiseHandshake(pattern: .nn, role: .initiator, cipher: cipher)
        var responder = try NoiseHandshake(pattern: .nn, role: .responder, cipher: cipher)
        _ = try responder.readMessage(try initiator.writeMessage())
        _ = try initiator.readMessage(try responder.writeMessage())
        var transport = try initiator.split()
        let piece = FrameEncoder.maxPlaintextPerMessage
        let started = DispatchTime.now()
        var sink = 0
        for index in 0..<count {
            let chunk = chunks[index % chunks.count]
            var offset = 0
            while offset < chunk.count {
                let end = min(chunk.count, offset + piece)
                sink &+= try transport.encrypt(Array(chunk[offset..<end])).count
                offset = end
            }
        }
        guard sink > 0 else { throw BenchmarkError("nothing encrypted") }
        return Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
    }

    static func overLoopback(chunks: [[UInt8]], count: Int) async throws -> Double {
        let transport = TCPTransport()
        let listener = try await transport.listen(on: PeerAddress(host: "127.0.0.1", port: 0))
        let server = DeviceIdentity.generate()
        let client = DeviceIdentity.generate()
        async let accepted = SecureChannel.accept(over: try await listener.accept(), identity: server)
        let sender = try await SecureChannel.initiate(
            over: try await transport.connect(to: listener.localAddress, timeout: .seconds(5)),
            identity: client, expectedPeer: server.deviceID)
        let receiver = try await accepted
        let started = DispatchTime.now()
        async let received: Int = {
            var bytes = 0
            for _ in 0..<count {
                guard case let .chunk(chunk)? = try await receiver.receive() else { throw BenchmarkError("stream ended early") }
                bytes += try chunk.payload.decoded().count
            }
            return bytes
        }()
        let contentID = ContentID(files: [])
        for index in 0..<count {
            try await sender.send(.chunk(.init(
                offerID: 1, contentID: contentID, fileIndex: 0, chunkIndex: UInt32(index),
                payload: .raw(chunks[index % chunks.count]))))
        }
        guard try await received == count * chunks[0].count else { throw BenchmarkError("bytes lost") }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        await sender.close()
        await receiver.close()
        await listener.close()
        return seconds
    }
}
