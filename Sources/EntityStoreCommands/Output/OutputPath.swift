import EntityStoreSQLite

/// An output path split into the directory that holds it and its name: writers put their
/// temporaries into that directory (so the final rename stays on one file system) under
/// names made from that name.
struct OutputPath {
    /// The path as given, less trailing slashes ("photos/" is "photos").
    let path: String
    /// The directory holding the output; "." for a bare name.
    let directory: String
    /// The last path component.
    let name: String

    /// Splits `given`. A directory output (`isDirectory`) may end with a slash; a file
    /// output may not, and neither may be ".", ".." or "/", which name no entry a rename
    /// could replace.
    /// - Throws: ``CommandFailure`` for such a path.
    init(_ given: String, isDirectory: Bool) throws(CommandFailure) {
        var path = Substring(given)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        if path.count < given.count, !isDirectory {
            throw CommandFailure("'\(given)': the output is a file; give its name without a trailing slash")
        }
        let name: Substring
        if let slash = path.lastIndex(of: "/") {
            name = path[path.index(after: slash)...]
            let parent = path[..<slash]
            directory = parent.isEmpty ? "/" : String(parent)
        } else {
            name = path
            directory = "."
        }
        guard !name.isEmpty, name != ".", name != ".." else {
            throw CommandFailure("'\(given)': name the output itself, not '.', '..' or '/'")
        }
        self.path = String(path)
        self.name = String(name)
    }

    /// Checks that the directory exists, then what is at the path (the path itself: a
    /// symbolic link, even a dangling one, counts as an existing output).
    /// - Returns: what is there, or nil.
    /// - Throws: ``CommandFailure`` when the directory is missing, or the path exists
    ///   and `force` is false.
    func existing(force: Bool) throws(CommandFailure) -> FileInfo? {
        let parent: FileInfo?
        do { parent = try FileInfo.following(directory) } catch {
            throw CommandFailure("'\(path)': the directory '\(directory)': \(error)")
        }
        guard parent?.kind == .directory else {
            throw CommandFailure("'\(path)': the directory '\(directory)' does not exist")
        }
        let info: FileInfo?
        do { info = try FileInfo.at(path) } catch { throw CommandFailure("'\(path)': \(error)") }
        if info != nil, !force {
            throw CommandFailure("'\(path)' already exists; pass --force to replace it")
        }
        return info
    }
}
