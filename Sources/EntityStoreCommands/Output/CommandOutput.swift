import EntityStoreSQLite
import Foundation
import StoreCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the tool's commands write: the process's standard output and error, or, for a
/// command run inside another program with ``ParsableCommand/runCapturingOutput(_:)``,
/// buffers of that run's own.
///
/// Every line a command prints goes through here, so a run inside a program (a test, an
/// app embedding the commands) sees exactly what the process would have written, and
/// several such runs may go on at once on different threads.
final class CommandOutput: Sendable {
    /// The capture of the run on this task or thread, if any.
    @TaskLocal static var current: CommandOutput?

    /// The run's arguments: passwords typed in them are hidden in what it prints
    /// (``Redaction``), as the process's own arguments are.
    let arguments: [String]
    private let buffers = Lock<(output: Data, error: Data)>((Data(), Data()))

    init(arguments: [String]) {
        self.arguments = arguments
    }

    /// What the run wrote to standard output and to standard error.
    var captured: (output: Data, error: Data) { buffers.withLock { $0 } }

    /// Writes `data` to standard output, or to the current run's capture.
    /// - Throws: the system's error when standard output refuses it (a full disk, a
    ///   closed pipe).
    static func writeOutput(_ data: Data) throws(SystemError) {
        if let current {
            current.buffers.withLock { $0.output.append(data) }
        } else {
            try writeAll(data, to: STDOUT_FILENO)
        }
    }

    /// Writes `text` and `terminator` to standard output (as `print` does, which cannot
    /// be captured); a failure to write is ignored, as `print`'s is.
    static func print(_ text: String, terminator: String = "\n") {
        try? writeOutput(Data((text + terminator).utf8))
    }

    /// Writes `text` to standard error, or to the current run's capture; a failure to
    /// write is ignored (there is nowhere left to report it).
    static func writeError(_ text: String) {
        let data = Data(text.utf8)
        if let current {
            current.buffers.withLock { $0.error.append(data) }
        } else {
            try? writeAll(data, to: STDERR_FILENO)
        }
    }

    /// Whether standard output (or error) is a terminal: never while a run is captured.
    static func isTerminal(_ descriptor: Int32) -> Bool {
        current == nil && isatty(descriptor) == 1
    }

    /// The arguments whose passwords a printed line must not show.
    static var runArguments: [String]? { current?.arguments }

    private static func writeAll(_ data: Data, to descriptor: Int32) throws(SystemError) {
        // `withUnsafeBytes` rethrows untyped: the typed error is carried out by hand.
        let failure = data.withUnsafeBytes { bytes -> SystemError? in
            do throws(SystemError) { try FileDescriptor.write(bytes, to: descriptor) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }
}
