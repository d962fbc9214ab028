import ArgumentParser

/// A failure the tool reports as one line on standard error with exit status 1: bad
/// data or a bad file, as opposed to bad usage (the argument parser's own status).
public struct CommandFailure: Error, CustomStringConvertible {
    /// The line to print, naming the file, table, record or field at fault.
    public let message: String

    /// A failure with `message`, made one printable line: passwords hidden (it may quote
    /// a URL), control characters escaped (names and values from the input may hold
    /// any), and at most a few hundred characters (a library error may quote a whole SQL
    /// statement or record).
    public init(_ message: String) {
        // Redacted before the cut, which could leave a password without the `@` that marks it.
        self.message = Echo.capped(Redaction.redacted(message))
    }

    public var description: String { message }
}

/// Runs `body`, turning library errors into a ``CommandFailure`` with a clear message.
func reportingFailures<R>(_ context: String? = nil, _ body: () throws -> R) throws -> R {
    do {
        return try body()
    } catch let error as CommandFailure {
        throw error
    } catch let error as ExitCode {
        throw error
    } catch let error as ValidationError {
        throw error
    } catch {
        let prefix = context.map { "\($0): " } ?? ""
        throw CommandFailure(prefix + String(describing: error))
    }
}
