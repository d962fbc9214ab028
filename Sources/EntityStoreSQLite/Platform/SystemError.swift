#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call's `errno`, described the way a message line needs it.
package struct SystemError: Error, CustomStringConvertible {
    /// The `errno` value, for example `ELOOP`.
    package let code: Int32

    /// The current `errno`.
    package init() { code = errno }

    package init(_ code: Int32) { self.code = code }

    /// `strerror`'s sentence starting in lower case, to follow "'PATH': " in a line
    /// ("too many levels of symbolic links").
    package var description: String {
        let text = String(cString: strerror(code))
        guard let first = text.first else { return "error \(code)" }
        // Keep acronyms ("I/O error") as they are; lower only a capitalized word.
        let second = text.dropFirst().first
        return second?.isLowercase == true ? first.lowercased() + text.dropFirst() : text
    }
}
