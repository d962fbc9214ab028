import ArgumentParser
import Foundation

/// What a command run inside a program wrote, and its exit status.
public struct CapturedRun: Sendable {
    /// The exit status the process would have had (0 on success).
    public let status: Int32
    /// What it wrote to standard output.
    public let output: Data
    /// What it wrote to standard error.
    public let error: Data
}

extension ParsableCommand {
    /// Parses the process's arguments and runs the command, as `main()`, but with no
    /// password in what it prints for a failure: the argument parser's own messages
    /// ("Unexpected argument '…'") quote arguments as typed.
    public static func mainRedactingPasswords() {
        let status = runRedactingPasswords(nil)
        Foundation.exit(status)
    }

    /// Parses `arguments` and runs the command inside this process, as
    /// ``mainRedactingPasswords()`` would in a process of its own, with what it writes to
    /// standard output and error captured instead. Runs may go on at once on several
    /// threads, with two exceptions: a command that reads standard input (`shell`) reads
    /// this process's, and one that replaces an existing snapshot file (`--force`) narrows
    /// the process's umask while it writes (so that the new file is never more widely
    /// readable than the old): run those one at a time. A run holds the calling thread
    /// until it ends (a PostgreSQL command waits for its connection's work there), so call
    /// it from a thread of your own rather than from a task on the cooperative pool, with a
    /// main thread's stack (8 MiB) for deeply nested input. The library's commands print
    /// through the capture; a command of the app's own that calls `print` still writes to
    /// the process's standard output.
    public static func runCapturingOutput(_ arguments: [String]) -> CapturedRun {
        let capture = CommandOutput(arguments: arguments)
        let status = CommandOutput.$current.withValue(capture) { runRedactingPasswords(arguments) }
        let (output, error) = capture.captured
        return CapturedRun(status: status, output: output, error: error)
    }

    /// Runs the command for `arguments` (the process's when nil) and returns its exit status.
    private static func runRedactingPasswords(_ arguments: [String]?) -> Int32 {
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            return 0
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                // Help and version text: the tool's own, which quotes no argument.
                if !message.isEmpty { CommandOutput.print(message) }
            } else if !message.isEmpty {
                CommandOutput.writeError(Redaction.redacted(message) + "\n")
            }
            return code.rawValue
        }
    }
}
