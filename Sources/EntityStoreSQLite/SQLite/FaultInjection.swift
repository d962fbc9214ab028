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
/// Plans are process-wide: one at a time (tests that arm one run serialized).
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
    package static func arm(directory: String, mode: Mode, at target: Int, counting operations: Operations = .mutating) {
        let resolved = (directory as NSString).resolvingSymlinksInPath
        let prefix = resolved.hasSuffix("/") ? resolved : resolved + "/"
        switch mode {
        case .kill:
            es_fault_arm(prefix, Int32(ES_FAULT_KILL), target, operations.rawValue, 0)
        case .error(let code):
            es_fault_arm(prefix, Int32(ES_FAULT_ERROR), target, operations.rawValue, code)
        case .powerLoss:
            es_fault_arm(prefix, Int32(ES_FAULT_POWER_LOSS), target, operations.rawValue, 0)
        }
    }

    /// Disarms the plan; returns how many operations it counted and whether it struck.
    @discardableResult
    package static func disarm() -> (operations: Int, struck: Bool) {
        let struck = es_fault_struck() != 0
        return (es_fault_disarm(), struck)
    }

    /// Runs `body` while no other caller of this function runs (re-entrant on one
    /// thread). Plans are process-wide, so every run that arms one (crash-safety helpers,
    /// fault tests, possibly in parallel test suites) arms it inside this.
    package static func exclusively<Result>(_ body: () throws -> Result) rethrows -> Result {
        planUsers.lock()
        defer { planUsers.unlock() }
        return try body()
    }

    /// Held by the thread using plans; see ``exclusively(_:)``.
    private static let planUsers = NSRecursiveLock()

    /// How many operations the armed plan has counted so far.
    package static var operationCount: Int { es_fault_count() }

    /// The kind and file of the operation the plan struck at, if it struck.
    package static var struckOperation: (kind: Operations, path: String)? {
        let kind = es_fault_struck_kind()
        guard kind != 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = es_fault_struck_path(&buffer, Int32(buffer.count))
        let path = String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return (Operations(rawValue: kind), path)
    }

    /// After a ``Mode/powerLoss`` plan struck, undoes every write to a watched file since
    /// that file's last sync, as a power loss would; returns how many writes it undid.
    /// Call it once the interrupted run's objects are released and the plan disarmed.
    @discardableResult
    package static func loseUnsyncedWrites() -> Int { Int(es_fault_lose_unsynced()) }

    /// Asks the armed plan about a file operation the snapshot layer makes itself; nil to
    /// go ahead, or the `errno` to fail with.
    static func check(_ path: String, _ operation: Operations) -> Int32? {
        let verdict = es_fault_point(path, operation.rawValue)
        return verdict == 0 ? nil : verdict
    }
}
