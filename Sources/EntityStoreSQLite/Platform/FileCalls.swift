#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The path-level file-system calls of the package, as thin wrappers that throw
/// ``SystemError``: the one file layer under the snapshot's ``FileSystem`` and the CLI's
/// outputs. With ``FileDescriptor`` and ``FileInfo``, every file-system C call of this
/// module and of EntityStoreCommands goes through here. `package` access: no API.
package enum FileCalls {
    /// Creates the directory `path`: 0o777 less the umask, like any new directory.
    package static func makeDirectory(_ path: String) throws(SystemError) {
        guard mkdir(path, 0o777) == 0 else { throw SystemError() }
    }

    /// Renames `source` to `target`, replacing a file at `target`.
    package static func rename(_ source: String, to target: String) throws(SystemError) {
        guard renameat(AT_FDCWD, source, AT_FDCWD, target) == 0 else { throw SystemError() }
    }

    /// Renames `source` to `target` only if nothing is at `target` (`EEXIST` otherwise):
    /// `renameat2(RENAME_NOREPLACE)` where the system has it; else, for a file, a hard
    /// link then an unlink (the link is the atomic step); for a directory, a check then
    /// a rename, which leaves a short race that only an empty directory created in that
    /// moment could lose.
    package static func renameNoReplace(_ source: String, to target: String, isDirectory: Bool) throws(SystemError) {
        switch renameat2(source, target, flags: 1 /* RENAME_NOREPLACE */) {
        case 0?: return
        case let code? where !isUnsupported(code): throw SystemError(code)
        default: break
        }
        if isDirectory {
            if (try FileInfo.at(target)) != nil { throw SystemError(EEXIST) }
            try rename(source, to: target)
        } else {
            guard link(source, target) == 0 else { throw SystemError() }
            _ = unlink(source)
        }
    }

    /// Swaps `first` and `second` atomically (`renameat2(RENAME_EXCHANGE)`); false when
    /// the system or the file system cannot.
    package static func exchange(_ first: String, _ second: String) throws(SystemError) -> Bool {
        switch renameat2(first, second, flags: 2 /* RENAME_EXCHANGE */) {
        case 0?: return true
        case let code? where !isUnsupported(code): throw SystemError(code)
        default: return false
        }
    }

    package static func removeFile(_ path: String) throws(SystemError) {
        guard unlink(path) == 0 else { throw SystemError() }
    }

    /// Removes the entry `name` of the open directory `directory` (not a directory itself).
    package static func removeFile(named name: String, in directory: borrowing FileDescriptor) throws(SystemError) {
        guard unlinkat(directory.raw, name, 0) == 0 else { throw SystemError() }
    }

    /// Removes the empty directory `path`.
    package static func removeDirectory(_ path: String) throws(SystemError) {
        guard rmdir(path) == 0 else { throw SystemError() }
    }

    /// The names in the directory `path`, without "." and "..". A name that is not
    /// valid UTF-8 comes back as nil: it cannot be named back to the system exactly.
    package static func entries(of path: String) throws(SystemError) -> [String?] {
        try entries(of: try FileDescriptor.reading(path))
    }

    /// The names in the open directory `directory` (see ``entries(of:)-(String)``).
    package static func entries(of directory: borrowing FileDescriptor) throws(SystemError) -> [String?] {
        // The stream owns the descriptor it is given: give it a copy.
        let copy = dup(directory.raw)
        guard copy >= 0 else { throw SystemError() }
        guard let stream = fdopendir(copy) else {
            let error = SystemError()
            _ = close(copy)
            throw error
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [String?] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw SystemError() }
                return names
            }
            let name = withUnsafePointer(to: &entry.pointee.d_name) { field in
                field.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: field.pointee)) {
                    String(validatingCString: $0)
                }
            }
            if name == "." || name == ".." { continue }
            names.append(name)
        }
    }

    /// Flushes the directory `path`'s entries (a rename in it) to stable storage.
    package static func syncDirectory(_ path: String) throws(SystemError) {
        let directory = try FileDescriptor.reading(path)
        try directory.sync()
    }

    /// `renameat2` with `flags`, looked up at run time (glibc declares it only for
    /// `_GNU_SOURCE`, which Swift's Glibc module does not set); nil when absent.
    private static func renameat2(_ source: String, _ target: String, flags: UInt32) -> Int32? {
        #if os(Linux)
        typealias Function = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "renameat2") else { return nil }
        let function = unsafeBitCast(symbol, to: Function.self)
        return function(AT_FDCWD, source, AT_FDCWD, target, flags) == 0 ? 0 : errno
        #else
        return nil
        #endif
    }

    /// Errors by which `renameat2` says it cannot honour the flags here (an old kernel,
    /// a file system without the operation), as opposed to a failure of the rename.
    private static func isUnsupported(_ code: Int32) -> Bool {
        code == EINVAL || code == ENOSYS || code == EOPNOTSUPP
    }
}
