import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// A test client for the multi-device lab: a trusted device gone bad. It speaks
/// the real protocol over real TCP and sends what ARCHITECTURE.md, "Receiver safety" says a receiver
/// must survive, one scenario per connection, and prints one line per scenario
/// with what the peer under test answered. It writes nothing itself; the lab
/// checks the receiver's disk.
///
///     lfsync-hostile-peer id --key FILE
///         prints the Device ID of FILE's key (created if missing), to trust it on the target
///     lfsync-hostile-peer attack --key FILE --connect HOST:PORT --outside DIR
///                                [--peer DEVICE-ID] [--symlink NAME] [SCENARIO...]
///         runs the scenarios (all by default) and prints "refused|BREACH|FAILED NAME DETAIL"
///     lfsync-hostile-peer list
///     lfsync-hostile-peer flood --connect HOST:PORT [--count N] [--hold SECONDS]
///         N bare TCP connections at once, held, then dropped
///     lfsync-hostile-peer hold --connect HOST:PORT [--silent N] [--key FILE --peer ID] [--trickle-every S] [--limit S]
///         N silent connections (and, with a trusted key, one that trickles a byte every S s); prints how long each was held
///     lfsync-hostile-peer cancel-flood --key FILE --connect HOST:PORT [--peer ID] [--count N] [--chunks C]
///         N times: offer a new file of C MiB, send all but its last chunk, Cancel
///     lfsync-hostile-peer stalled-receiver --key FILE --listen HOST:PORT
///         accepts one connection and its offer, then swallows everything and answers nothing
///     lfsync-hostile-peer false-holder --key FILE --listen HOST:PORT [--mode claim|no-proof|silent|hang-up]
///         accepts connections until killed; answers holding checks with made-up proofs (claim),
///         without proofs, never, or by hanging up
///
/// Exit status: 0 every scenario refused, 1 a scenario got through or went unanswered,
/// 64 usage, 70 could not reach the target.
@main
struct HostilePeer {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        let command = arguments.isEmpty ? "" : arguments.removeFirst()
        switch command {
        case "list":
            HostileScenario.allCases.forEach { say($0.rawValue) }
        case "id":
            let identity = loadIdentity(&arguments)
            say("\(identity.deviceID)")
        case "attack":
            let identity = loadIdentity(&arguments)
            guard let target = option("--connect", in: &arguments).flatMap(PeerAddress.init(parsing:)) else {
                usage("--connect HOST:PORT is required")
            }
            guard let outside = option("--outside", in: &arguments), outside.hasPrefix("/") else {
                usage("--outside DIR (absolute) is required")
            }
            let peer = option("--peer", in: &arguments).map { text -> DeviceID in
                guard let id = try? DeviceID(parsing: text) else { usage("--peer: not a Device ID: \(text)") }
                return id
            }
            let setting = HostileScenario.Setting(outside: outside, symlinkName: option("--symlink", in: &arguments) ?? "linked")
            var scenarios: [HostileScenario] = []
            for name in arguments {
                guard let scenario = HostileScenario(rawValue: name) else { usage("unknown scenario \(name)") }
                scenarios.append(scenario)
            }
            let ok = await attack(target, as: identity, expecting: peer, setting: setting,
                                  scenarios: scenarios.isEmpty ? HostileScenario.allCases : scenarios)
            exit(ok ? 0 : 1)
        case "flood":
            let target = requiredTarget(&arguments)
            let count = option("--count", in: &arguments).flatMap(Int.init) ?? 300
            let hold = option("--hold", in: &arguments).flatMap(Int.init) ?? 2
            say(await HostileLoad.flood(target, count: count, hold: .seconds(hold)))
        case "hold":
            let trickle = arguments.contains("--key") ? loadIdentity(&arguments) : nil
            let target = requiredTarget(&arguments)
            let silent = option("--silent", in: &arguments).flatMap(Int.init) ?? 50
            let every = option("--trickle-every", in: &arguments).flatMap(Int.init) ?? 3
            let limit = option("--limit", in: &arguments).flatMap(Int.init) ?? 90
            let peer = option("--peer", in: &arguments).flatMap { try? DeviceID(parsing: $0) }
            say(await HostileLoad.hold(target, silent: silent, trickle: trickle, expecting: peer,
                                       trickleEvery: .seconds(every), limit: .seconds(limit)))
        case "cancel-flood":
            let identity = loadIdentity(&arguments)
            let target = requiredTarget(&arguments)
            let peer = option("--peer", in: &arguments).flatMap { try? DeviceID(parsing: $0) }
            let count = option("--count", in: &arguments).flatMap(Int.init) ?? 20
            let chunks = option("--chunks", in: &arguments).flatMap(Int.init) ?? 8
            do {
                say(try await HostileLoad.cancelFlood(target, as: identity, expecting: peer, count: count, chunks: max(2, chunks)))
            } catch {
                fail(70, "cancel flood: \(error)")
            }
        case "stalled-receiver":
            let identity = loadIdentity(&arguments)
            guard let address = option("--listen", in: &arguments).flatMap(PeerAddress.init(parsing:)) else {
                usage("--listen HOST:PORT is required")
            }
            do {
                say(try await HostileLoad.stalledReceiver(on: address, as: identity) { say("listening\t\($0)") })
            } catch {
                fail(70, "stalled receiver: \(error)")
            }
        case "false-holder":
            let identity = loadIdentity(&arguments)
            guard let address = option("--listen", in: &arguments).flatMap(PeerAddress.init(parsing:)) else {
                usage("--listen HOST:PORT is required")
            }
            guard let mode = HostileHolder(rawValue: option("--mode", in: &arguments) ?? "claim") else {
                usage("--mode must be one of \(HostileHolder.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            do {
                try await mode.serve(on: address, as: identity, ready: { say("listening\t\($0)") }, report: { say($0) })
            } catch {
                fail(70, "false holder: \(error)")
            }
        default:
            usage(command.isEmpty ? "no command" : "unknown command \(command)")
        }
    }

    static func attack(_ target: PeerAddress, as identity: DeviceIdentity, expecting peer: DeviceID?,
                       setting: HostileScenario.Setting, scenarios: [HostileScenario]) async -> Bool {
        var ok = true
        for scenario in scenarios {
            let clock = ContinuousClock()
            let start = clock.now
            let verdict: String
            let detail: String
            do {
                let answer = try await scenario.run(setting) { other in
                    try await HostileConnection.open(to: target, as: other ?? identity, expecting: peer)
                }
                verdict = answer.isRefusal ? "refused" : "BREACH"
                detail = answer.summary
                if !answer.isRefusal { ok = false }
            } catch let error as HostilePeerError {
                if case .notAccepted = error { fail(70, "\(error)") }
                verdict = "FAILED"
                detail = "\(error)"
                ok = false
            } catch {
                // The target hanging up while we were still sending is a refusal too.
                verdict = "refused"
                detail = "connection ended while sending: \(error)"
            }
            let seconds = (clock.now - start) / .milliseconds(1) / 1000
            say([verdict, scenario.rawValue, String(format: "%.1fs", seconds), oneLine(detail)].joined(separator: "\t"))
        }
        return ok
    }

    static func requiredTarget(_ arguments: inout [String]) -> PeerAddress {
        guard let target = option("--connect", in: &arguments).flatMap(PeerAddress.init(parsing:)) else {
            usage("--connect HOST:PORT is required")
        }
        return target
    }

    static func loadIdentity(_ arguments: inout [String]) -> DeviceIdentity {
        guard let path = option("--key", in: &arguments) else { usage("--key FILE is required") }
        do {
            return try DeviceIdentity.loadOrCreate(at: URL(fileURLWithPath: path))
        } catch {
            fail(70, "cannot use key \(path): \(error)")
        }
    }

    static func option(_ name: String, in arguments: inout [String]) -> String? {
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
        let value = arguments[index + 1]
        arguments.removeSubrange(index...index + 1)
        return value
    }

    /// Keeps a hostile peer's text from breaking the lab's table.
    static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : Character($0) }.prefix(200))
    }

    /// Unbuffered, so the lab sees each verdict as it happens.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func usage(_ problem: String) -> Never {
        fail(64, "\(problem)\nusage: lfsync-hostile-peer id --key FILE\n       lfsync-hostile-peer attack --key FILE --connect HOST:PORT --outside DIR [--peer ID] [--symlink NAME] [SCENARIO...]\n       lfsync-hostile-peer list\n       lfsync-hostile-peer flood|hold|cancel-flood|stalled-receiver|false-holder ... (see the source)")
    }

    static func fail(_ status: Int32, _ message: String) -> Never {
        FileHandle.standardError.write(Data("lfsync-hostile-peer: \(message)\n".utf8))
        exit(status)
    }
}
