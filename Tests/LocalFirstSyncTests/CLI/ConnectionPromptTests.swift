import Foundation
import Testing

/// What `lfsync serve` asks at its terminal when a device it does not trust
/// connects: the full Device ID, "unknown" said plainly, and a warning when
/// the device uses the name of a trusted one. Run under a pseudo-terminal, so
/// serve asks exactly as it would a person.
@Suite(.timeLimit(.minutes(3))) struct ConnectionPromptTests {
    typealias Device = PushServeTests.Device

    /// `lfsync serve` with its stdin and stderr on a pseudo-terminal.
    final class InteractiveServer {
        let process = Process()
        let terminal: PseudoTerminal
        private(set) var address = ""

        init(_ device: Device) async throws {
            terminal = try PseudoTerminal()
            process.executableURL = LFSyncProcess.binary
            process.arguments = ["serve", device.library.path, "--listen", "127.0.0.1:0", "--no-advertise"]
            var environment = ProcessInfo.processInfo.environment
            environment["LFSYNC_HOME"] = device.home.path
            environment["NO_COLOR"] = "1"
            process.environment = environment
            process.standardInput = terminal.secondary
            process.standardError = terminal.secondary
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            terminal.childStarted()
            guard try await terminal.wait(for: "not advertising") else {
                stop()
                throw PseudoTerminal.Failure(description: "serve did not start: \(terminal.output)")
            }
            let text = terminal.output
            guard let range = text.range(of: "listening on ") else { throw PseudoTerminal.Failure(description: text) }
            address = String(text[range.upperBound...].prefix { $0 != " " })
        }

        func stop() {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
            terminal.close()
        }
    }

    @Test func unknownDeviceIsNamedAsSuchWithItsFullIDAndWarnedAboutWhenItBorrowsATrustedName() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let nas = try Device("nas", in: root), phone = try Device("phone", in: root)
            let impostor = try Device("impostor", in: root), tablet = try Device("tablet", in: root)
            #expect(try await nas.run(["init", "--name", "nas"]).status == 0)
            #expect(try await phone.run(["init", "--name", "Alice's phone"]).status == 0)
            // The same name as a person reads it: other letter case, a curly apostrophe, a
            // zero-width space and a double space.
            let borrowed = "alice\u{2019}s\u{200B}  phone"
            #expect(try await impostor.run(["init", "--name", borrowed]).status == 0)
            #expect(try await tablet.run(["init", "--name", "Bob's tablet"]).status == 0)
            let phoneID = try await phone.deviceID(), impostorID = try await impostor.deviceID(), tabletID = try await tablet.deviceID()
            #expect(try await nas.run(["trust", phoneID, "--name", "Alice's phone", "--auto-accept"]).status == 0)

            let server = try await InteractiveServer(nas)
            defer { server.stop() }
            let terminal = server.terminal
            for device in [impostor, tablet] {
                #expect(try await device.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
                try TestSupport.write(Array("from \(device.name)\n".utf8), to: device.library.appendingPathComponent("\(device.name).txt"))
            }

            // The impostor claims the trusted phone's name (spelt differently): the question says so.
            var start = terminal.output.count
            async let impostorPush = impostor.run(["push", impostor.library.path, "--to", "nas"])
            let asked = try await terminal.wait(for: "Accept? [y/N]", after: start)
            #expect(asked, "serve did not ask: \(terminal.output)")
            var question = String(terminal.output.dropFirst(start))
            #expect(question.contains("An unknown device wants to connect"), "\(question)")
            #expect(question.contains("It calls itself: \"\(borrowed)\""), "\(question)")
            #expect(question.contains("Its Device ID:   \(impostorID)"), "the full ID must be shown: \(question)")
            #expect(question.contains(
                "WARNING: this device calls itself \"\(borrowed)\", the name of a trusted device, but its Device ID is different"
                + " (the trusted \"Alice's phone\" is \(phoneID))"), "\(question)")
            terminal.type("n\n")
            let declined = try await impostorPush
            #expect(declined.status == 77, "\(declined.stderr)")
            #expect(try await terminal.wait(for: "declined connection from unknown device \"\(borrowed)\" (\(impostorID))", after: start))
            #expect(try EngineHarness.tree(nas.library).isEmpty)

            // An unknown device with a name of its own: unknown, full ID, and no warning.
            start = terminal.output.count
            async let tabletPush = tablet.run(["push", tablet.library.path, "--to", "nas"])
            #expect(try await terminal.wait(for: "Accept? [y/N]", after: start), "serve did not ask: \(terminal.output)")
            question = String(terminal.output.dropFirst(start))
            #expect(question.contains("An unknown device wants to connect") && question.contains(tabletID), "\(question)")
            #expect(!question.contains("WARNING"), "\(question)")
            terminal.type("n\n")
            #expect(try await tabletPush.status == 77)
        }
    }

    /// Answering "y" at both of serve's questions — the connection of an unknown device, then
    /// its offer — lets the push through: exit 0, the file in the library.
    @Test func answeringYesAtBothPromptsLetsThePushThrough() async throws {
        try await TestSupport.withTemporaryDirectory { root in
            let nas = try Device("nas", in: root), tablet = try Device("tablet", in: root)
            #expect(try await nas.run(["init", "--name", "nas"]).status == 0)
            #expect(try await tablet.run(["init", "--name", "Bob's tablet"]).status == 0)
            let server = try await InteractiveServer(nas)
            defer { server.stop() }
            let terminal = server.terminal
            #expect(try await tablet.run(["trust", nas.deviceID(), "--name", "nas", "--address", server.address]).status == 0)
            try TestSupport.write(Array("from the tablet\n".utf8), to: tablet.library.appendingPathComponent("tablet.txt"))

            let start = terminal.output.count
            async let push = tablet.run(["push", tablet.library.path, "--to", "nas"])
            #expect(try await terminal.wait(for: "Accept? [y/N]", after: start), "serve did not ask: \(terminal.output)")
            let connectionAsked = terminal.output.count
            terminal.type("y\n")
            #expect(try await terminal.wait(for: "offers 1 file", after: connectionAsked), "no offer question: \(terminal.output)")
            #expect(try await terminal.wait(for: "Accept? [y/N]", after: connectionAsked), "the offer was not asked about: \(terminal.output)")
            terminal.type("y\n")
            let pushed = try await push
            #expect(pushed.status == 0, "\(pushed.stderr)")
            #expect(try EngineHarness.tree(nas.library)["tablet.txt"] == Data("from the tablet\n".utf8))
            #expect(try await terminal.wait(for: "accepted", after: connectionAsked))
        }
    }
}
