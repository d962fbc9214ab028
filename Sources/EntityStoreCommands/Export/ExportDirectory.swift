import EntityStore
import EntityStoreSQLite
import Foundation

/// An ndjson or CSV export: a directory of `<table>.ndjson` or `<table>.csv` files and a
/// marker file, `.entity-store-export`, whose first line is `entity-store ndjson export`
/// (for either format). The marker is how a later `export --force` knows the directory is
/// one it may replace: it replaces only a directory holding the marker and nothing but
/// `.ndjson` and `.csv` files, and deletes only those.
///
/// A new export is built beside the output under a temporary name (see ``Temporaries``)
/// and swapped in whole, so the path always holds a complete export, the old or the new.
enum ExportDirectory {
    static let markerName = ".entity-store-export"
    static let markerLine = "entity-store ndjson export"
    static let markerText = """
        \(markerLine)
        This directory was written by `entity-store export --format ndjson` (or csv). \
        `export --force` replaces a directory only if it holds this file and nothing but .ndjson and .csv files.

        """

    /// What an existing export holds: its own information and the permission bits of
    /// its files by name, kept for their replacements.
    struct Existing {
        let info: FileInfo
        let permissions: [String: mode_t]
    }

    /// Checks that `output` may be written: its directory exists, and nothing is at the
    /// path, or (with `force`) a previous export is.
    /// - Returns: the previous export, if any.
    /// - Throws: ``CommandFailure`` naming the path and why it is refused.
    static func check(_ output: OutputPath, force: Bool) throws(CommandFailure) -> Existing? {
        guard let info = try output.existing(force: force) else { return nil }
        guard info.kind == .directory else {
            throw CommandFailure("'\(output.path)' is \(info.kind.rawValue), not a previous ndjson export; --force replaces only a directory written by `export --format ndjson`")
        }
        let opened: FileDescriptor
        do { opened = try FileDescriptor.reading(output.path, followingLinks: false) } catch {
            throw CommandFailure("'\(output.path)': \(error)")
        }
        switch contents(of: opened) {
        case .failure(let error):
            throw CommandFailure("'\(output.path)': \(error)")
        case .success(let contents) where !contents.hasMarker:
            throw CommandFailure("'\(output.path)' is a directory without the '\(markerName)' marker of an ndjson export; --force replaces only a directory written by `export --format ndjson`")
        case .success(let contents) where !contents.foreign.isEmpty:
            let names = contents.foreign.prefix(3).map { "'\($0)'" }.joined(separator: ", ")
            let more = contents.foreign.count > 3 ? " and \(contents.foreign.count - 3) more" : ""
            throw CommandFailure("'\(output.path)' holds \(names)\(more), which export did not write; remove them or choose another output")
        case .success(let contents):
            return Existing(info: info, permissions: contents.files)
        }
    }

    /// The format of an export directory's files.
    enum FileFormat {
        /// One JSON object per line.
        case ndjson
        /// A header row, then one row per record (see ``CSVWriter``).
        case csv

        var fileExtension: String {
            switch self {
            case .ndjson: ".ndjson"
            case .csv: ".csv"
            }
        }
    }

    /// One table to export: its records, and its fields in the order CSV columns follow.
    struct TableExport {
        let name: String
        let fields: [String]
        let records: [DynamicRecord]
    }

    /// Writes one `<table>.ndjson` (or `.csv`) per table into a new directory beside `output`, then
    /// puts it at `output`: a rename that refuses an existing path, or with a previous
    /// export there, an atomic exchange of the two (a rename aside then a rename in
    /// where the file system cannot exchange), after which the previous one is deleted.
    /// A failure before the swap removes the new directory and leaves the path as it was.
    /// - Parameter exchange: the atomic exchange (tests pass one that is never possible).
    /// - Throws: ``CommandFailure``.
    static func write(
        _ tables: [TableExport], format: FileFormat = .ndjson, to output: OutputPath, force: Bool,
        exchange: (String, String) throws(SystemError) -> Bool = FileCalls.exchange
    ) throws(CommandFailure) {
        let previous = try check(output, force: force)
        Temporaries.removeStale(for: output)
        let temporary = Temporaries.path(for: output)
        do {
            try FileCalls.makeDirectory(temporary)
        } catch {
            throw CommandFailure("'\(output.path)': cannot create '\(temporary)': \(error)")
        }
        let directory = try lockedDirectory(temporary, output: output)
        do {
            // The marker first, so a killed run's directory is known as an export's.
            try writeFile(markerName, in: temporary, permissions: previous?.permissions[markerName]) { sink throws(SystemError) in
                try sink.append(markerText)
            }
            for table in tables {
                let name = table.name + format.fileExtension
                try writeFile(name, in: temporary, permissions: previous?.permissions[name]) { sink throws(SystemError) in
                    switch format {
                    case .ndjson:
                        for record in table.records { try sink.append(record.jsonValue.serialized() + "\n") }
                    case .csv:
                        let writer = CSVWriter(fields: table.fields)
                        try sink.append(writer.header)
                        for record in table.records { try sink.append(writer.row(record)) }
                    }
                }
            }
            if let previous { try directory.setPermissions(previous.info.permissions) }
            try directory.sync()
        } catch {
            _ = removeExport(at: temporary, opened: directory)
            throw CommandFailure("'\(output.path)': cannot write: \(error)")
        }
        if let previous {
            try replace(output, with: temporary, previous: previous, directory: directory, exchange: exchange)
        } else {
            do {
                try FileCalls.renameNoReplace(temporary, to: output.path, isDirectory: true)
            } catch {
                _ = removeExport(at: temporary, opened: directory)
                if error.code == EEXIST || error.code == ENOTEMPTY {
                    throw CommandFailure("'\(output.path)' appeared while exporting; pass --force to replace it")
                }
                throw CommandFailure("'\(output.path)': cannot move the export into place: \(error)")
            }
        }
        try? FileCalls.syncDirectory(output.directory)
    }

    /// Swaps the complete new export at `temporary` with the previous one at `output`,
    /// then deletes the previous one. At every moment the path holds one complete export.
    private static func replace(
        _ output: OutputPath, with temporary: String, previous: Existing, directory: borrowing FileDescriptor,
        exchange: (String, String) throws(SystemError) -> Bool
    ) throws(CommandFailure) {
        let old: FileDescriptor
        switch lockedPrevious(output, previous: previous) {
        case .success(let opened): old = opened
        case .failure(let error):
            _ = removeExport(at: temporary, opened: directory)
            throw CommandFailure("'\(output.path)' changed while exporting (\(error)); nothing was replaced")
        }
        let moved: String
        do {
            if try exchange(temporary, output.path) {
                moved = temporary
            } else {
                // No atomic exchange here: for the moment between the two renames the
                // path is empty, with the old export at `moved` and the new at `temporary`.
                moved = Temporaries.path(for: output)
                try FileCalls.rename(output.path, to: moved)
                do { try FileCalls.rename(temporary, to: output.path) } catch {
                    try? FileCalls.rename(moved, to: output.path)
                    throw error
                }
            }
        } catch {
            _ = removeExport(at: temporary, opened: directory)
            throw CommandFailure("'\(output.path)': cannot move the export into place: \(error)")
        }
        // What moved out must be the export that was checked; if something else had
        // taken its place meanwhile, it goes back and nothing is deleted.
        guard let info = try? FileInfo.at(moved), info.isSameFile(as: previous.info) else {
            _ = try? FileCalls.exchange(moved, output.path)
            throw CommandFailure("'\(output.path)' changed while exporting; nothing was deleted")
        }
        try? FileCalls.syncDirectory(output.directory)
        if !removeExport(at: moved, opened: old) {
            var standardError = StandardError()
            print("warning: the previous export, moved to '\(Echo.escaped(moved))', could not be deleted completely", to: &standardError)
        }
    }

    /// Opens the new directory `temporary` and locks it, removing it on failure. The lock
    /// is held until the directory is renamed or removed: a concurrent run sees it in use.
    private static func lockedDirectory(_ temporary: String, output: OutputPath) throws(CommandFailure) -> FileDescriptor {
        do throws(SystemError) {
            let directory = try FileDescriptor.reading(temporary, followingLinks: false)
            try directory.lock()
            return directory
        } catch {
            try? FileCalls.removeDirectory(temporary)
            throw CommandFailure("'\(output.path)': cannot create '\(temporary)': \(error)")
        }
    }

    /// Opens and locks the previous export at `output`, checking it is the one checked
    /// before. The lock is held while it is moved and deleted: a concurrent run sees it
    /// in use.
    private static func lockedPrevious(_ output: OutputPath, previous: Existing) -> Result<FileDescriptor, SystemError> {
        do throws(SystemError) {
            let old = try FileDescriptor.reading(output.path, followingLinks: false)
            guard try old.info().isSameFile(as: previous.info) else { throw SystemError(ESTALE) }
            // A lock held for a moment is waited for (up to a second): a process spawned
            // meanwhile holds a copy of the previous run's descriptor until its exec
            // closes it. A concurrent export holds it longer and is reported.
            for _ in 0..<50 {
                if try old.tryLock() { return .success(old) }
                usleep(20_000)
            }
            guard try old.tryLock() else { throw SystemError(EBUSY) }
            return .success(old)
        } catch {
            return .failure(error)
        }
    }

    /// Creates `name` in `directory` and fills it through `body`, in chunks, then syncs it.
    private static func writeFile(
        _ name: String, in directory: String, permissions: mode_t?, _ body: (inout Sink) throws(SystemError) -> Void
    ) throws(SystemError) {
        let file = try FileDescriptor.creating((directory as NSString).appendingPathComponent(name), permissions: permissions)
        var sink = Sink(file: file)
        try body(&sink)
        try sink.flush()
        try sink.file.sync()
    }

    /// A write buffer: whole tables are never held as one string.
    private struct Sink: ~Copyable {
        let file: FileDescriptor
        var buffer: [UInt8] = []

        init(file: consuming FileDescriptor) {
            self.file = file
            buffer.reserveCapacity(1 << 20)
        }

        mutating func append(_ text: String) throws(SystemError) {
            buffer.append(contentsOf: text.utf8)
            if buffer.count >= 1 << 20 { try flush() }
        }

        mutating func flush() throws(SystemError) {
            try file.write(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }

    /// What a directory holds, sorted into what an export writes and the rest.
    struct Contents {
        /// Whether the marker is there.
        var hasMarker = false
        /// Whether an empty file has the marker's name: a run killed as it created it.
        var hasEmptyMarker = false
        /// The marker and the `.ndjson` and `.csv` regular files, with their permission bits.
        var files: [String: mode_t] = [:]
        /// Every other entry.
        var foreign: [String] = []
    }

    /// Sorts the entries of the open directory `directory`. The marker counts only as a
    /// regular file whose first line is ``markerLine``.
    static func contents(of directory: borrowing FileDescriptor) -> Result<Contents, SystemError> {
        var contents = Contents()
        let entries: [String?]
        do { entries = try FileCalls.entries(of: directory) } catch { return .failure(error) }
        for entry in entries {
            guard let name = entry else {
                contents.foreign.append("a name that is not UTF-8")
                continue
            }
            let info: FileInfo?
            do { info = try FileInfo.at(name, in: directory) } catch { return .failure(error) }
            guard let info, info.kind == .regular else {
                contents.foreign.append(name)
                continue
            }
            if name == markerName, info.size == 0 {
                contents.hasEmptyMarker = true
                contents.files[name] = info.permissions
            } else if name == markerName, isMarker(name, in: directory) {
                contents.hasMarker = true
                contents.files[name] = info.permissions
            } else if name.hasSuffix(".ndjson") || name.hasSuffix(".csv") {
                contents.files[name] = info.permissions
            } else {
                contents.foreign.append(name)
            }
        }
        contents.foreign.sort()
        return .success(contents)
    }

    private static func isMarker(_ name: String, in directory: borrowing FileDescriptor) -> Bool {
        guard let file = try? FileDescriptor.reading(name, in: directory),
              let data = try? file.readAll(maximum: 4_096)
        else { return false }
        return data.prefix(markerLine.utf8.count + 1) == Data((markerLine + "\n").utf8)
    }

    /// Deletes the export directory at `path` (open as `directory`): its `.ndjson` and `.csv` files,
    /// then its marker, then the directory itself; the marker goes last, so a run killed
    /// meanwhile leaves a directory still known as an export's. Nothing is deleted unless
    /// the directory holds the marker and nothing foreign; an empty directory, or one
    /// holding only an empty marker (a run killed as it began), is deleted too.
    /// - Returns: whether the directory is gone.
    @discardableResult
    static func removeExport(at path: String, opened directory: borrowing FileDescriptor) -> Bool {
        guard case .success(let contents) = contents(of: directory), contents.foreign.isEmpty,
              contents.hasMarker || contents.files.keys.allSatisfy({ $0 == markerName })
        else { return false }
        // Files can be deleted only from a writable directory, whatever its bits were.
        try? directory.setPermissions(0o700)
        for name in contents.files.keys where name != markerName {
            try? FileCalls.removeFile(named: name, in: directory)
        }
        if contents.files[markerName] != nil { try? FileCalls.removeFile(named: markerName, in: directory) }
        return (try? FileCalls.removeDirectory(path)) != nil
    }
}
