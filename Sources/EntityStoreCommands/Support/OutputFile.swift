import Foundation

/// Writes command output atomically: to a temporary file beside the target, renamed
/// over it only when complete. An existing target is never replaced without `force`,
/// and a failed run leaves no partial file.
enum OutputFile {
    /// Refuses an existing output unless `force`.
    static func checkWritable(_ path: String, force: Bool) throws {
        if FileManager.default.fileExists(atPath: path), !force {
            throw CommandFailure("'\(path)' already exists; pass --force to replace it")
        }
        let directory = (path as NSString).deletingLastPathComponent
        let parent = directory.isEmpty ? "." : directory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandFailure("'\(path)': the directory '\(parent)' does not exist")
        }
    }

    /// Writes `data` to `path` atomically.
    static func write(_ data: Data, to path: String, force: Bool) throws {
        try checkWritable(path, force: force)
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CommandFailure("'\(path)': cannot write: \(error.localizedDescription)")
        }
    }
}
