import Foundation

/// The name of a temporary written beside a file `NAME`: `.NAME.tmp-` and eight
/// upper-case hexadecimal digits, in the same directory (so the final rename is atomic
/// and never crosses file systems). The snapshot writer and the command-line tool both
/// name their temporaries this way, so a run recognizes what a killed one left behind.
package enum TemporaryName {
    /// A fresh temporary name for the file `name`.
    package static func fresh(for name: String) -> String {
        ".\(name).tmp-\(UUID().uuidString.prefix(8))"
    }

    /// Whether `entry` is exactly the name of one of `name`'s temporaries.
    package static func isTemporary(_ entry: String, of name: String) -> Bool {
        let prefix = ".\(name).tmp-"
        guard entry.hasPrefix(prefix) else { return false }
        let suffix = entry.utf8.dropFirst(prefix.utf8.count)
        return suffix.count == 8 && suffix.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) }
    }
}
