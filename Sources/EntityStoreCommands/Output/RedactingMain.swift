import ArgumentParser
import Foundation

extension ParsableCommand {
    /// Parses the process's arguments and runs the command, as `main()`, but with no
    /// password in what it prints for a failure: the argument parser's own messages
    /// ("Unexpected argument '…'") quote arguments as typed.
    public static func mainRedactingPasswords() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                // Help and version text: the tool's own, which quotes no argument.
                if !message.isEmpty { print(message) }
            } else if !message.isEmpty {
                FileHandle.standardError.write(Data((Redaction.redacted(message) + "\n").utf8))
            }
            Foundation.exit(code.rawValue)
        }
    }
}
