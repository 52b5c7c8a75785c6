import Foundation
import LocalFirstSync

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
        if let name = arguments.value("name") {
            guard !name.isEmpty, name.utf8.count <= 64, !name.contains(where: { $0.isNewline || $0.asciiValue.map { $0 < 0x20 } == true }) else {
                throw UsageError(message: "a device name is 1–64 bytes of printable text", hint: nil)
            }
            config.name = name
        }
        try config.save(to: home.configURL)
        _ = try home.ledger()
        if arguments.flag("json") {
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
        if arguments.flag("json") {
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
        if let address = arguments.value("address"), PeerAddress(parsing: address) == nil {
            throw UsageError(message: "'\(address)' is not HOST:PORT", hint: "IPv6 addresses go in brackets: [fe80::1]:7878")
        }
        var config = try DeviceConfig.load(from: home.configURL)
        let existing = config.trusted(id)
        let name = arguments.value("name") ?? existing?.name ?? id.shortForm
        if let clash = config.peers.first(where: { $0.name == name && (try? DeviceID(parsing: $0.deviceID)) != id }) {
            throw UsageError(message: "the name '\(name)' is already used for \(clash.deviceID)", hint: "Choose another --name.")
        }
        config.peers.removeAll { (try? DeviceID(parsing: $0.deviceID)) == id }
        let autoAccept = arguments.flag("auto-accept"), allowPull = arguments.flag("allow-pull")
        config.peers.append(.init(name: name, deviceID: id.description, address: arguments.value("address") ?? existing?.address,
                                  autoAccept: autoAccept, allowPull: allowPull))
        config.peers.sort { $0.name < $1.name }
        try config.save(to: home.configURL)
        let permissions = [autoAccept ? "accepting its offers without asking" : nil, allowPull ? "letting it pull" : nil].compactMap { $0 }
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
        let target = try PeerResolver(config: config, localDeviceID: own.deviceID).resolve(arguments.positionals[0])
        guard let trusted = target.trusted else {
            throw CommandFailure(message: "'\(arguments.positionals[0])' is not a trusted device", exitCode: .usage)
        }
        config.peers.removeAll { $0.deviceID == trusted.deviceID }
        try config.save(to: home.configURL)
        console.note("no longer trusting \(trusted.name) (\(trusted.deviceID))")
        return .success
    }
}
