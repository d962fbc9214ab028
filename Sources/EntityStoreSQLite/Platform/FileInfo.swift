#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What `lstat` (the path itself) or `stat` (through symbolic links) says about a path.
package struct FileInfo {
    /// The file types the tool tells apart.
    package enum Kind: String {
        case regular = "a regular file"
        case directory = "a directory"
        case symbolicLink = "a symbolic link"
        case fifo = "a FIFO"
        case socket = "a socket"
        case device = "a device"
    }

    package let kind: Kind
    /// The permission bits (`st_mode & 0o777`).
    package let permissions: mode_t
    /// The size in bytes.
    package let size: Int64
    /// The last modification, in seconds since 1970.
    package let modified: Double
    package let device: UInt64
    package let inode: UInt64

    package init(_ status: stat) {
        kind = switch status.st_mode & S_IFMT {
        case S_IFDIR: .directory
        case S_IFLNK: .symbolicLink
        case S_IFIFO: .fifo
        case S_IFSOCK: .socket
        case S_IFCHR, S_IFBLK: .device
        default: .regular
        }
        permissions = status.st_mode & 0o777
        size = Int64(status.st_size)
        #if canImport(Darwin)
        let time = status.st_mtimespec
        #else
        let time = status.st_mtim
        #endif
        modified = Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }

    /// The path itself, a symbolic link not followed; nil when nothing is there.
    /// - Throws: ``SystemError`` for anything but a missing entry (`ELOOP` in a parent,
    ///   `EACCES`, `ENOTDIR` ...).
    package static func at(_ path: String) throws(SystemError) -> FileInfo? {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            let error = SystemError()
            if error.code == ENOENT { return nil }
            throw error
        }
        return FileInfo(status)
    }

    /// What the path leads to, through symbolic links; nil when nothing is there (a
    /// dangling link included).
    /// - Throws: ``SystemError``: `ELOOP` for a symbolic-link loop, `EACCES` ...
    package static func following(_ path: String) throws(SystemError) -> FileInfo? {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let error = SystemError()
            if error.code == ENOENT { return nil }
            throw error
        }
        return FileInfo(status)
    }

    /// The entry `name` of the open directory `directory`, a symbolic link not followed;
    /// nil when nothing is there.
    package static func at(_ name: String, in directory: borrowing FileDescriptor) throws(SystemError) -> FileInfo? {
        var status = stat()
        guard fstatat(directory.raw, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else {
            let error = SystemError()
            if error.code == ENOENT { return nil }
            throw error
        }
        return FileInfo(status)
    }

    /// The open file `descriptor`.
    package static func of(descriptor: Int32) throws(SystemError) -> FileInfo {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw SystemError() }
        return FileInfo(status)
    }

    /// Whether `other` is the same file (device and inode).
    package func isSameFile(as other: FileInfo) -> Bool {
        device == other.device && inode == other.inode
    }
}
