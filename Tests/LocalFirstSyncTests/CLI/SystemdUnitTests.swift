import Foundation
import Testing

/// The systemd user units the README and the manual show (contrib/systemd/) work as
/// written: Tests/Systemd/units.sh verifies them with systemd-analyze and runs their
/// ExecStart lines, as systemd would, inside a network namespace of its own.
@Suite struct SystemdUnitTests {
    static let script = TestSupport.packageRoot.appendingPathComponent("Tests/Systemd/units.sh")
    static let units = TestSupport.packageRoot.appendingPathComponent("contrib/systemd")

    /// Why the script cannot run here, or nil.
    static let missingPrerequisite: String? = {
        guard geteuid() == 0 else { return "not root (a network namespace of its own needs it)" }
        for tool in ["systemd-analyze", "unshare", "ip", "bash"] where LabProcess.findInPath(tool) == nil {
            return "\(tool) is not installed"
        }
        guard LabProcess.namespacesWork() else { return "network namespaces do not work here" }
        return nil
    }()

    @Test(.enabled(if: missingPrerequisite == nil, "systemd unit check cannot run: \(missingPrerequisite ?? "")"), .timeLimit(.minutes(2)))
    func theUserUnitsWorkAsWritten() async throws {
        let (status, output) = try await LabProcess.runScript(
            interpreter: "/usr/bin/unshare",
            arguments: ["-n", "/bin/bash", Self.script.path, LFSyncProcess.binary.path, Self.units.path], logName: "lfsync-units")
        #expect(status == 0, "\(output)")
        #expect(output.contains("PASS"), "\(output)")
    }
}
