import Foundation
import StoreCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The paths the ``SnapshotFile``s of this process keep, so a plain snapshot written to one
/// of them is refused instead of silently replacing the saves made there.
///
/// A path is known by its directory's device and inode and its last component, so two
/// spellings of one directory (a symbolic link, `..`) are the same path.
enum OpenSnapshotFiles {
    struct Key: Hashable {
        let device: UInt64
        let inode: UInt64
        let name: String
    }

    private static let open = Lock<[Key: Int]>([:])

    /// The key of `path`, or nil if its directory does not exist.
    static func key(for path: String) -> Key? {
        let url = URL(fileURLWithPath: path)
        guard let info = try? FileInfo.following(url.deletingLastPathComponent().path) else { return nil }
        return Key(device: info.device, inode: info.inode, name: url.lastPathComponent)
    }

    /// Records that a snapshot file keeps `path`; returns the key to release.
    static func retain(_ path: String) -> Key? {
        guard let key = key(for: path) else { return nil }
        open.withLock { $0[key, default: 0] += 1 }
        return key
    }

    /// Records that a snapshot file no longer keeps the path of `key`.
    static func release(_ key: Key) {
        open.withLock { counts in
            let remaining = (counts[key] ?? 1) - 1
            counts[key] = remaining > 0 ? remaining : nil
        }
    }

    /// Whether a snapshot file of this process keeps `path`. O(1).
    static func isKept(_ path: String) -> Bool {
        guard let key = key(for: path) else { return false }
        return open.withLock { $0[key] != nil }
    }
}
