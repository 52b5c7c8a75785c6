import Dispatch
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery
#if canImport(Glibc)
import Glibc
#endif

/// A tiny DNS-SD client for the discovery lab: advertise in one network
/// namespace, browse in another, and print one line per event so a shell
/// script can wait for them.
///
///     lfsync-discovery-probe advertise NAME PORT DEVICE-ID [--service TYPE] [--version N]
///         prints "registered NAME", withdraws on SIGTERM/SIGINT, prints "withdrawn NAME"
///     lfsync-discovery-probe browse SECONDS [--service TYPE]
///         prints "found name=... id=... version=... host=... port=... addresses=a,b",
///         "lost name=..." or "unavailable reason=..." until SECONDS have passed
///
/// Exit status: 0 ok, 64 usage, 69 discovery unavailable, 70 other failure.
@main
struct DiscoveryProbe {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        let service = option("--service", in: &arguments) ?? "lfsync"
        let version = option("--version", in: &arguments).flatMap(UInt16.init) ?? 1
        let serviceType: DiscoveryServiceType
        do {
            serviceType = try DiscoveryServiceType(service)
        } catch {
            fail(64, "\(error)")
        }
        let discovery = DNSSDDiscovery(configuration: .init(serviceType: serviceType))
        switch arguments.first {
        case "advertise":
            guard arguments.count == 4, let port = UInt16(arguments[2]) else { usage() }
            let advertisement = ServiceAdvertisement(
                instanceName: arguments[1], port: port, deviceID: arguments[3], protocolVersion: version)
            await advertise(advertisement, with: discovery)
        case "browse":
            guard arguments.count == 2, let seconds = Int(arguments[1]), seconds > 0 else { usage() }
            await browse(for: .seconds(seconds), with: discovery)
        default:
            usage()
        }
    }

    static func advertise(_ advertisement: ServiceAdvertisement, with discovery: DNSSDDiscovery) async {
        let signals = terminationSignals()
        let handle: any AdvertisementHandle
        do {
            handle = try await discovery.advertise(advertisement)
        } catch {
            if case .unavailable = error { fail(69, "\(error)") }
            fail(70, "\(error)")
        }
        say("registered \(handle.registeredName)")
        for await _ in signals { break }
        await handle.cancel()
        say("withdrawn \(handle.registeredName)")
    }

    static func browse(for duration: Duration, with discovery: DNSSDDiscovery) async {
        let unavailable = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await event in discovery.events() {
                    switch event {
                    case let .found(peer):
                        say("found name=\(peer.instanceName) id=\(peer.deviceID ?? "-") "
                            + "version=\(peer.protocolVersion.map(String.init) ?? "-") host=\(peer.host) "
                            + "port=\(peer.port) addresses=\(peer.addresses.joined(separator: ","))")
                    case let .lost(name):
                        say("lost name=\(name)")
                    case let .unavailable(reason):
                        say("unavailable reason=\(reason)")
                        return true
                    }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: duration)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if unavailable { exit(69) }
    }

    /// SIGTERM and SIGINT as a stream, so the advertiser can withdraw before exiting.
    static func terminationSignals() -> AsyncStream<Int32> {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        let queue = DispatchQueue(label: "lfsync-discovery-probe.signals")
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { continuation.yield(signalNumber) }
            source.resume()
            sources.append(source)
        }
        let keepAlive = SignalSources(sources)
        continuation.onTermination = { _ in keepAlive.cancel() }
        return stream
    }

    static func option(_ name: String, in arguments: inout [String]) -> String? {
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
        let value = arguments[index + 1]
        arguments.removeSubrange(index...(index + 1))
        return value
    }

    /// One line per event, written at once (no buffering): a script is waiting for it.
    static func say(_ line: String) {
        StandardStream.write(line + "\n", to: 1)
    }

    static func fail(_ status: Int32, _ message: String) -> Never {
        StandardStream.write("lfsync-discovery-probe: \(message)\n", to: 2)
        exit(status)
    }

    static func usage() -> Never {
        fail(64, """
            usage: lfsync-discovery-probe advertise NAME PORT DEVICE-ID [--service TYPE] [--version N]
                   lfsync-discovery-probe browse SECONDS [--service TYPE]
            """)
    }
}

enum StandardStream {
    static func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else { return }
            offset += written
        }
    }
}

/// Keeps the signal sources alive while the stream is; Dispatch sources are
/// thread-safe, but not marked `Sendable`.
final class SignalSources: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]

    init(_ sources: [any DispatchSourceSignal]) {
        self.sources = sources
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
