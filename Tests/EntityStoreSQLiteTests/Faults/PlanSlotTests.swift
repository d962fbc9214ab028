@testable import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import Testing

/// The fault layer holds a bounded number of armed plans. Arming one more must be
/// refused: a plan silently dropped would never strike, and every run under it would
/// pass untested. The check fills every slot, so it runs in a child process of this test
/// binary, where no other test arms plans meanwhile.
@Suite("Fault plans beyond the layer's slots")
struct PlanSlotTests {
    static let probeVariable = "ENTITYSTORE_PLAN_SLOT_PROBE"

    /// Runs only in the child: fills every slot, expects the next plan to be refused, and
    /// checks that the first plan still strikes.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[Self.probeVariable] != nil))
    func planSlotProbe() throws {
        try FaultInjection.install()
        try withTemporaryDirectory { root in
            let base = (root.path as NSString).resolvingSymlinksInPath
            var directories: [String] = []
            var refused: (any Error)?
            for index in 0..<1_000 {
                let directory = base + "/plan-\(index)"
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
                do {
                    try FaultInjection.arm(directory: directory, mode: .kill, at: 0)
                    directories.append(directory)
                } catch {
                    refused = error
                    break
                }
            }
            #expect(directories.count == 256, "armed \(directories.count) plans")
            let refusal = try #require(refused, "no plan was refused")
            #expect("\(refusal)".contains("256 plans are armed at once"), "\(refusal)")
            // The first plan was not dropped: its first operation (creating the file) is struck.
            #expect(throws: (any Error).self) {
                let connection = try SQLiteConnection(path: directories[0] + "/a.sqlite", mode: .readWriteCreate)
                try connection.execute("CREATE TABLE t (x)")
            }
            #expect(FaultInjection.disarm(directory: directories[0]).struck)
            for directory in directories.dropFirst() { FaultInjection.disarm(directory: directory) }
            // A freed slot can be armed again.
            try FaultInjection.arm(directory: base + "/plan-\(directories.count)", mode: .kill, at: 0)
            FaultInjection.disarm(directory: base + "/plan-\(directories.count)")
        }
    }

    @Test("arming more plans than the layer holds is refused, and no armed plan is dropped")
    func refusedBeyondTheSlots() async throws {
        let (status, output) = try await runThisTestBinary(filter: "planSlotProbe", setting: Self.probeVariable)
        #expect(status == 0, "\(output.suffix(3_000))")
        #expect(output.contains("planSlotProbe"), "the probe did not run: \(output.suffix(3_000))")
    }
}
