import Foundation
import LocalFirstSync
import LFSyncSystem
import LFSyncCrypto
import LFSyncContent
import LFSyncStore
import LFSyncTransport
import LFSyncTCP
import LFSyncDiscovery

/// `lfsync init [--name NAME]`: idempotent set-up of identity and state.
struct InitCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    func run() throws -> ExitCode {
        try home.createIfNeeded()
        let existed = home.isInitialized
        let identity: DeviceIdentity
        do { identity = try DeviceIdentity.loadOrCreate(at: home.identityURL) } catch {
            throw CommandFailure(message: "cannot create the identity: \(error)", exitCode: .ioError)
        }
        var config = try DeviceConfig.load(from: home.configURL)
        if let name = try arguments.value(Self.name) {
            guard !name.isEmpty, name.utf8.count <= 64, !name.contains(where: { $0.isNewline || $0.asciiValue.map { $0 < 0x20 } == true }) else {
                throw UsageError(message: "a device name is 1–64 bytes of printable text", hint: nil)
            }
            config.name = name
        }
        try config.save(to: home.configURL)
        _ = try home.ledger()
        if arguments[LFSyncCommands.json] {
            console.result(try JSONOutput.render(IDReport(name: config.name, deviceID: identity.deviceID.description, stateDirectory: home.url.path)))
        } else {
            console.note(existed ? "already initialised in \(home.url.path)" : "initialised \(home.url.path)")
            console.result(identity.deviceID.description)
        }
        return .success
    }
}

struct IDReport: Encodable {
    var name: String
    var deviceID: String
    var stateDirectory: String
}

/// `lfsync id`: who this device is.
struct IDCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    func run() throws -> ExitCode {
        let identity = try home.identity()
        let config = try DeviceConfig.load(from: home.configURL)
        if arguments[LFSyncCommands.json] {
            console.result(try JSONOutput.render(IDReport(name: config.name, deviceID: identity.deviceID.description, stateDirectory: home.url.path)))
        } else {
            console.result("\(identity.deviceID)  \(config.name)")
        }
        return .success
    }
}

/// `lfsync trust DEVICE-ID [--name NAME] [--address HOST:PORT] [--auto-accept] [--allow-pull]`.
/// Name and address are kept from before unless given; the two permissions are
/// exactly what this run says, so running it again is also how one is taken back.
struct TrustCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    func run() throws -> ExitCode {
        let own = try home.identity()
        let id: DeviceID
        do { id = try DeviceID(parsing: arguments.positionals[0]) } catch {
            throw UsageError(message: "\(error)", hint: "Copy the Device ID from 'lfsync id' on the other device.")
        }
        guard id != own.deviceID else { throw UsageError(message: "that is this device's own ID", hint: nil) }
        if let address = try arguments.value(Self.address), PeerAddress(parsing: address) == nil {
            throw UsageError(message: "'\(address)' is not HOST:PORT", hint: "IPv6 addresses go in brackets: [fe80::1]:7878")
        }
        var config = try DeviceConfig.load(from: home.configURL)
        let existing = config.trusted(id)
        let name = try arguments.value(Self.name) ?? existing?.name ?? id.shortForm
        if let clash = config.peers.first(where: { $0.name == name && (try? DeviceID(parsing: $0.deviceID)) != id }) {
            throw UsageError(message: "the name '\(name)' is already used for \(clash.deviceID)", hint: "Choose another --name.")
        }
        config.peers.removeAll { (try? DeviceID(parsing: $0.deviceID)) == id }
        let autoAccept = arguments[Self.autoAccept], allowPull = arguments[Self.allowPull]
        let deletions = try arguments.value(Self.deletions) ?? existing?.deletions
        config.peers.append(.init(name: name, deviceID: id.description, address: try arguments.value(Self.address) ?? existing?.address,
                                  autoAccept: autoAccept, allowPull: allowPull, deletions: deletions))
        config.peers.sort { $0.name < $1.name }
        try config.save(to: home.configURL)
        let permissions = [autoAccept ? "accepting its offers without asking" : nil, allowPull ? "letting it pull" : nil,
                           deletions == .mirror ? "mirroring its deletions" : deletions == .keep ? "keeping every file it deletes" : nil].compactMap { $0 }
        console.note("trusting \(name) (\(id))" + permissions.map { ", " + $0 }.joined())
        return .success
    }
}

/// `lfsync untrust DEVICE-ID|NAME`.
struct UntrustCommand {
    let arguments: ParsedArguments
    let console: Console
    let home = StateHome()

    func run() throws -> ExitCode {
        let own = try home.identity()
        var config = try DeviceConfig.load(from: home.configURL)
        let target = try PeerResolver(config: config, localDeviceID: own.deviceID).resolve(arguments.positionals[0], allowingSelf: true)
        guard let trusted = target.trusted else {
            throw CommandFailure(message: "'\(arguments.positionals[0])' is not a trusted device", exitCode: .usage)
        }
        config.peers.removeAll { $0.deviceID == trusted.deviceID }
        try config.save(to: home.configURL)
        console.note("no longer trusting \(trusted.name) (\(trusted.deviceID))")
        return .success
    }
}

extension InitCommand: LFSyncCommand {
    static let name = Option<String>("name", valueName: "NAME", help: "The name other devices see (default: the host name).")

    static let spec = CommandSpec(
        name: "init",
        abstract: "Create this device's identity and state (safe to run again)",
        discussion: "Creates the identity key (mode 0600) and the state directory, and prints the Device ID other devices use to trust this one. Running it again changes nothing but the name, if given.",
        options: [name.spec, LFSyncCommands.json.spec],
        examples: ["lfsync init --name laptop"]
    )
}

extension IDCommand: LFSyncCommand {
    static let spec = CommandSpec(
        name: "id",
        abstract: "Print this device's Device ID and name",
        options: [LFSyncCommands.json.spec],
        examples: ["lfsync id", "lfsync id --json"]
    )
}

extension TrustCommand: LFSyncCommand {
    static let name = Option<String>("name", valueName: "NAME", help: "A name to refer to the device by (default: its short ID).")
    static let address = Option<String>("address", valueName: "HOST:PORT", help: "Where to reach it when discovery cannot find it.")
    static let autoAccept = Flag("auto-accept", help: "Accept its offers without asking.")
    static let allowPull = Flag("allow-pull", help: "Let it pull everything this device serves (not implied by --auto-accept).")
    static let deletions = Option<DeviceConfig.TrustedPeer.Deletions>(
        "deletions", valueName: "POLICY",
        help: "What its deletions do here: asked (applied when its push says --delete; the default), mirror (always applied) or keep (never: an archive).",
        expected: "asked, mirror or keep") { DeviceConfig.TrustedPeer.Deletions(rawValue: $0) }

    static let spec = CommandSpec(
        name: "trust",
        abstract: "Trust a device by its Device ID",
        discussion: "A trusted device may connect without a question. With --auto-accept its offers are also accepted without asking, which is what unattended (cron) pushes to this device need. With --allow-pull it may pull: be offered everything this device serves that it lacks, including what other devices sent here. The two are separate, and neither implies the other. A device trusted with --auto-accept may also sync with this one: its edits replace the files they descend from (the replaced version kept in .lfsync/versions), and its deletions are applied as --deletions says. Trusting a device again keeps its name, address and deletion policy unless given, and sets both permissions to exactly what that run says.",
        options: [
            name.spec,
            address.spec,
            autoAccept.spec,
            allowPull.spec,
            deletions.spec,
        ],
        arguments: [ArgumentSpec(name: "DEVICE-ID", help: "The Device ID printed by 'lfsync id' on that device.")],
        examples: ["lfsync trust ABCDEFG-HIJKLMN-... --name laptop --auto-accept",
                   "lfsync trust ABCDEFG-HIJKLMN-... --name nas --address nas.local:7878 --allow-pull"]
    )
}

extension UntrustCommand: LFSyncCommand {
    static let spec = CommandSpec(
        name: "untrust",
        abstract: "Stop trusting a device",
        arguments: [ArgumentSpec(name: "PEER", help: "Name or Device ID (or a unique prefix).", completion: .peer)],
        examples: ["lfsync untrust nas"]
    )
}
