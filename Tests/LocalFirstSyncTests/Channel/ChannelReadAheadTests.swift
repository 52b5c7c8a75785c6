import Foundation
import Testing
@testable import LocalFirstSync
@testable import LFSyncContent
@testable import LFSyncCrypto
@testable import LFSyncWire
@testable import LocalFirstSyncTesting

/// Read-ahead keeps order, stays within its byte budget, and ends cleanly.
@Suite(.timeLimit(.minutes(1))) struct ChannelReadAheadTests {
    static func chunk(_ index: UInt32) -> WireMessage {
        .chunk(.init(offerID: 1, contentID: ContentID(hash: Blake2b.hash([])), fileIndex: 0, chunkIndex: index,
                     payload: .raw([UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 64 << 10))))
    }

    @Test func deliversInOrderWithinItsBudget() async throws {
        let (client, server) = try await SecureChannelTests.channelPair(
            transport: InMemoryTransport(), listenOn: SecureChannelTests.memoryAddress(),
            initiator: .generate(), responder: .generate())
        let count: UInt32 = 40  // 2.5 MiB of chunk data
        let sending = Task {
            for index in 0..<count { try await client.send(Self.chunk(index)) }
            await client.close()
        }
        let readAhead = ChannelReadAhead(channel: server, byteLimit: 256 << 10)
        async let reading: Void = readAhead.run()
        // Nobody consumes yet: the reading side must stop near the budget.
        try await Task.sleep(for: .milliseconds(300))
        let readEarly = await server.bytesReceived
        #expect(readEarly < 1 << 20, "read \(readEarly) bytes ahead with a 256 KiB budget")

        var indices: [UInt32] = []
        while case let .success(incoming?) = await readAhead.next() {
            guard case let .chunk(chunk) = incoming.message, case let .raw(bytes) = chunk.payload else {
                Issue.record("unexpected \(incoming.message)")
                break
            }
            indices.append(chunk.chunkIndex)
            #expect(incoming.message == Self.chunk(chunk.chunkIndex), "chunk \(chunk.chunkIndex) arrived altered")
            #expect(incoming.frameLength > bytes.count)
        }
        #expect(indices == Array(0..<count))
        try await sending.value
        // After the end, further calls keep answering "end of stream".
        if case .success(.some) = await readAhead.next() { Issue.record("a message after the end") }
        await server.close()
        await reading
    }

    @Test func stopEndsAPendingNext() async throws {
        let (client, server) = try await SecureChannelTests.channelPair(
            transport: InMemoryTransport(), listenOn: SecureChannelTests.memoryAddress(),
            initiator: .generate(), responder: .generate())
        let readAhead = ChannelReadAhead(channel: server)
        async let reading: Void = readAhead.run()
        let waiting = Task { await readAhead.next() }
        try await Task.sleep(for: .milliseconds(50))
        readAhead.stop()
        guard case .success(nil) = await waiting.value else {
            Issue.record("stop() did not end the pending next()")
            return
        }
        await client.close()
        await server.close()
        // The read loop ends with the stop and the closed channel.
        await reading
    }
}
