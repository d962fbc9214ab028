import Foundation

/// Runs this test binary again as a child, with only the Swift Testing tests matching
/// `filter` and `variable` set to "1" in its environment (the tests that must run alone,
/// or that must fail, are enabled by it); on a thread of its own. Returns the exit status
/// and everything the child printed.
public func runThisTestBinary(filter: String, setting variable: String) async throws -> (status: Int32, output: String) {
    let binary = URL(fileURLWithPath: CommandLine.arguments[0])
    return try await onOwnThread {
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--testing-library", "swift-testing", "--filter", filter]
        process.environment = ProcessInfo.processInfo.environment.merging([variable: "1"]) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
