internal import CSQLiteFaults
import Foundation

/// Crash and I/O-error injection for tests, in the manner of SQLite's own test suite: a
/// VFS wrapping SQLite's default one, plus checks in the snapshot layer's own file
/// operations (rename, fsync, unlink), share one plan.
///
/// Arm a plan over a directory, run a write, disarm, and check what the files hold:
/// - ``Mode/kill``: the chosen operation and everything after it on files in the directory
///   fail without touching the disk, as if the process had been killed just before it.
///   Run it for every operation number until the write completes untouched, and after
///   each the files must read as the old state or the new one.
/// - ``Mode/error(_:)``: the chosen operation fails once (an I/O error, a full disk);
///   the write must report it and leave the old or the new state.
///
/// Several plans may be armed at once, each over its own directory: runs in different
/// directories (parallel tests) do not disturb each other.
package enum FaultInjection {
    /// What happens at the chosen operation.
    package enum Mode: Sendable {
        case kill
        case error(Int32)
        /// As ``kill``, and the machine loses power: ``loseUnsyncedWrites()`` then undoes
        /// every write to a watched file since that file's last sync.
        case powerLoss
    }

    /// Operation kinds a plan counts.
    package struct Operations: OptionSet, Sendable {
        package let rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }

        package static let read = Operations(rawValue: Int32(ES_FAULT_READ))
        package static let write = Operations(rawValue: Int32(ES_FAULT_WRITE))
        package static let sync = Operations(rawValue: Int32(ES_FAULT_SYNC))
        package static let truncate = Operations(rawValue: Int32(ES_FAULT_TRUNCATE))
        package static let delete = Operations(rawValue: Int32(ES_FAULT_DELETE))
        package static let create = Operations(rawValue: Int32(ES_FAULT_CREATE))
        package static let rename = Operations(rawValue: Int32(ES_FAULT_RENAME))
        /// Everything that changes what is on disk.
        package static let mutating: Operations = [.write, .sync, .truncate, .delete, .create, .rename]
        package static let all: Operations = [.mutating, .read]
    }

    /// Installs the fault-injecting VFS as SQLite's default for this process (idempotent).
    /// Connections opened earlier keep their VFS.
    package static func install() throws(SQLiteError) {
        let rc = es_fault_install()
        guard rc == 0 else { throw SQLiteError(extendedCode: rc, message: "cannot register the fault-injecting VFS") }
    }

    /// Arms a plan over the files under `directory` (resolved to its real path, as SQLite
    /// names files): operation number `target` (from 0) among those of the kinds in
    /// `operations` fails as `mode` says.
    /// - Throws: when as many plans as the layer holds are armed already; none is dropped.
    package static func arm(
        directory: String, mode: Mode, at target: Int, counting operations: Operations = .mutating
    ) throws(SQLiteError) {
        let prefix = prefix(of: directory)
        let armed = switch mode {
        case .kill:
            es_fault_arm(prefix, Int32(ES_FAULT_KILL), target, operations.rawValue, 0)
        case .error(let code):
            es_fault_arm(prefix, Int32(ES_FAULT_ERROR), target, operations.rawValue, code)
        case .powerLoss:
            es_fault_arm(prefix, Int32(ES_FAULT_POWER_LOSS), target, operations.rawValue, 0)
        }
        guard armed == 0 else {
            throw SQLiteError(extendedCode: 1, message: "cannot arm a fault plan over '\(directory)': 256 plans are armed at once")
        }
    }

    /// Disarms the plan over `directory`; returns how many operations it counted and
    /// whether it struck.
    @discardableResult
    package static func disarm(directory: String) -> (operations: Int, struck: Bool) {
        let prefix = prefix(of: directory)
        let struck = es_fault_struck(prefix) != 0
        return (es_fault_disarm(prefix), struck)
    }

    /// The path prefix a plan over `directory` watches: its real path (as SQLite names
    /// files) with a trailing slash.
    static func prefix(of directory: String) -> String {
        let resolved = (directory as NSString).resolvingSymlinksInPath
        return resolved.hasSuffix("/") ? resolved : resolved + "/"
    }

    /// The kind and file of the operation the plan over `directory` struck at, if it struck.
    package static func struckOperation(directory: String) -> (kind: Operations, path: String)? {
        let prefix = prefix(of: directory)
        let kind = es_fault_struck_kind(prefix)
        guard kind != 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = es_fault_struck_path(prefix, &buffer, Int32(buffer.count))
        let path = String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (Operations(rawValue: kind), path)
    }

    /// After a ``Mode/powerLoss`` plan over `directory` struck, undoes every write to a
    /// file there since that file's last sync, as a power loss would; returns how many
    /// writes it undid. Call it once the interrupted run's objects are released and the
    /// plan disarmed.
    @discardableResult
    package static func loseUnsyncedWrites(directory: String) -> Int { Int(es_fault_lose_unsynced(prefix(of: directory))) }

    /// The files under `directory` that mutating operations reached (writes, syncs,
    /// truncations, creations, deletions, renames, through SQLite or this library) since
    /// the plan was armed or this was last called; they are forgotten. Up to 64 paths.
    package static func takeSeenPaths(directory: String) -> Set<String> {
        var buffer = [CChar](repeating: 0, count: 64 * 4_200)
        let length = es_fault_take_seen(prefix(of: directory), &buffer, Int32(buffer.count))
        let text = String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Set(text.split(separator: "\n").map(String.init))
    }

    /// Asks the armed plan about a rename of `source` over `target` the snapshot layer
    /// makes itself (the source's unsynced writes follow it); nil to go ahead, or the
    /// `errno` to fail with.
    static func checkRename(_ source: String, over target: String) -> Int32? {
        let verdict = es_fault_rename_point(source, target)
        return verdict == 0 ? nil : verdict
    }

    /// Asks the armed plan about a sync the snapshot layer makes itself: the `errno` to
    /// fail with (nil to go ahead), and whether a plan watches the path, in which case the
    /// sync is simulated, not sent to the device (`es_fault_point_watched`).
    static func checkSync(_ path: String) -> (failure: Int32?, simulated: Bool) {
        var watched: Int32 = 0
        let verdict = es_fault_point_watched(path, Operations.sync.rawValue, &watched)
        return (verdict == 0 ? nil : verdict, watched != 0)
    }

    /// Asks the armed plan about a file operation the snapshot layer makes itself; nil to
    /// go ahead, or the `errno` to fail with.
    static func check(_ path: String, _ operation: Operations) -> Int32? {
        let verdict = es_fault_point(path, operation.rawValue)
        return verdict == 0 ? nil : verdict
    }
}
