import EntityStore
import EntityStoreSQLite
import Foundation

/// The faults a crash-safety run injects.
public enum InjectedFault: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The process is killed just before an operation: it and every later file operation
    /// of the run fail without touching the disk (what the OS already has stays).
    case processKill
    /// The machine loses power just before an operation: as a kill, and every write to a
    /// file since that file's last sync is lost. Catches a save routine that skips or
    /// turns off syncs. (Lost file contents are simulated; a rename, a new file or a
    /// deletion whose directory was never synced is assumed to survive.)
    case powerLoss
    /// One operation fails with an I/O error (`SQLITE_IOERR_WRITE`), later ones succeed:
    /// the save must report it, the file must still hold a saved state, and the same
    /// save called again must succeed.
    case ioError

    /// A few words for failure messages.
    public var description: String {
        switch self {
        case .processKill: "a process kill"
        case .powerLoss: "a power loss"
        case .ioError: "an I/O error"
        }
    }
}

/// How a crash-safety run is bounded and read.
public struct CrashSafetyOptions: Sendable {
    /// The faults to inject; by default all of them.
    public var faults: [InjectedFault]
    /// At most this many runs per fault: above it, that many operations are sampled
    /// (always the first and the last, the rest by `seed`) and the report says so.
    public var maxRunsPerFault: Int
    /// Chooses the sampled operations.
    public var seed: UInt64
    /// How the file is read back after each fault. By default any app schema version is
    /// read as it is (the sequence wrote the file itself); pass the app's options to read
    /// it as the app does.
    public var snapshotOptions: SnapshotOptions

    /// Options; by default every fault at up to 200 operations each.
    public init(
        faults: [InjectedFault] = InjectedFault.allCases, maxRunsPerFault: Int = 200, seed: UInt64 = 0,
        snapshotOptions: SnapshotOptions = SnapshotOptions(acceptsNewerAppSchema: true)
    ) {
        self.faults = faults
        self.maxRunsPerFault = maxRunsPerFault
        self.seed = seed
        self.snapshotOptions = snapshotOptions
    }
}

/// What a crash-safety run did.
public struct CrashSafetyReport: Sendable, CustomStringConvertible {
    /// The file operations (writes, syncs, truncations, creations, deletions, renames)
    /// one fault-free run of the sequence makes: the crash points.
    public let operations: Int
    /// The save steps of the sequence.
    public let saves: Int
    /// Runs made per fault.
    public let runs: [InjectedFault: Int]
    /// Whether some fault had more operations than the cap, so its points were sampled.
    public let sampled: Bool
    /// One line per failing run (the first few are also reported as test failures).
    public let failures: [String]

    /// A summary: points, runs, and whether they were sampled.
    public var description: String {
        let perFault = InjectedFault.allCases.compactMap { fault in runs[fault].map { "\($0) × \(fault)" } }
        let sampling = sampled ? " (sampled: more operations than the cap)" : ""
        return "\(saves) saves, \(operations) file operations; runs: \(perFault.joined(separator: ", "))\(sampling); \(failures.count) failed"
    }
}

/// One run of the caller's sequence: a fresh store and a file path in a directory of
/// its own, watched by the fault-injecting VFS.
///
/// Write to ``store`` as the app does, and wrap each call of the app's save routine in
/// ``save(_:_:)``, so that the run knows which state each save writes and where a fault
/// struck.
public final class CrashRun {
    /// A fresh store of the run's schema.
    public let store: EntityStore
    /// The snapshot file the sequence saves to (it does not exist at the start).
    public let path: String
    /// The run's own directory: files the save routine writes must be in it to be watched.
    public let directory: String

    let fault: InjectedFault?
    var step = 0
    var stepName = ""
    /// The state of the last save that returned, nil before any.
    var lastCompleted: EntityState?
    var lastCompletedStep = ""
    /// The state of the save running when the fault struck.
    var inFlight: EntityState?
    /// The save step the fault struck in, once it struck (an I/O error a save absorbed
    /// leaves the run going on to later steps).
    var struckStep: String?
    var problems: [String] = []

    init(store: EntityStore, directory: String, fault: InjectedFault?) {
        self.store = store
        self.directory = directory
        self.path = directory + "/store.sqlite"
        self.fault = fault
    }

    /// Runs one save of the app's routine, which writes ``store``'s current state to the
    /// file; returns what it returns (a `SnapshotFile` it opens, say).
    ///
    /// After a simulated kill or power loss it throws, unwinding the sequence as the
    /// process would have died; after an injected I/O error it checks the file, calls
    /// `body` once more and goes on.
    /// - Complexity: `body`'s, plus a restore of the file after an I/O error.
    @discardableResult
    public func save<Result>(_ name: String = "save", _ body: () throws -> Result) throws -> Result {
        step += 1
        stepName = "step \(step) '\(name)'"
        // The fault-free run also checks that every change the save makes to files is one
        // the check can strike at.
        if fault == nil {
            _ = FaultInjection.takeSeenPaths(directory: directory)
            let before = FileMarks(directory: directory)
            defer { noteUnseenChanges(since: before) }
            return try saveStep(name, body)
        }
        return try saveStep(name, body)
    }

    /// Notes the files the last save changed by calls the fault-injecting layer did not
    /// see: their writes, syncs and renames are no crash points, so no run strikes there.
    private func noteUnseenChanges(since before: FileMarks) {
        let seen = FaultInjection.takeSeenPaths(directory: directory)
        let unseen = before.changedPaths(comparedWith: FileMarks(directory: directory)).filter { !seen.contains($0) }
        guard !unseen.isEmpty else { return }
        let names = unseen.map { "'\(($0 as NSString).lastPathComponent)'" }.joined(separator: ", ")
        problems.append(
            "\(stepName) changed \(names) by file calls the check cannot see (not SQLite's, not EntityStoreSQLite's): "
                + "a crash or power loss in them is never tried, so the routine cannot be shown crash-safe; "
                + "write the file through SQLite or EntityStoreSQLite (SnapshotFile, Snapshot)")
    }

    private func saveStep<Result>(_ name: String, _ body: () throws -> Result) throws -> Result {
        let saving = store.state
        inFlight = saving
        let struckBefore = struck != nil
        defer { if !struckBefore, struckStep == nil, struck != nil { struckStep = stepName } }
        do {
            let result = try body()
            if fault == .ioError, !struckBefore, struck != nil {
                // The error was absorbed (SQLite may retry some): the save must have stored this state.
                if let problem = CrashSafetyCheck.readProblem(self, allowing: [saving], options: nil) {
                    problems.append("the save returned normally but \(problem)")
                }
            } else if fault != .ioError, struck != nil {
                throw SimulatedCrash()
            }
            completed(saving, name: stepName)
            return result
        } catch let crash as SimulatedCrash {
            throw crash
        } catch {
            guard struck != nil else { throw error }
            if fault != .ioError { throw SimulatedCrash() }
            guard !struckBefore else { throw error }
            // The injected error was reported: the file must still hold a saved state,
            // and the same save must succeed now that the fault has passed.
            if let problem = CrashSafetyCheck.readProblem(self, allowing: [lastCompleted, saving], options: nil) {
                problems.append("after the save reported the error (\(error)), \(problem)")
            }
            do {
                let result = try body()
                completed(saving, name: stepName)
                return result
            } catch {
                problems.append("the save failed again once the fault had passed: \(error)")
                throw SimulatedCrash()
            }
        }
    }

    /// The operation the run's fault struck at, if it did.
    private var struck: (kind: FaultInjection.Operations, path: String)? { FaultInjection.struckOperation(directory: directory) }

    private func completed(_ state: EntityState, name: String) {
        lastCompleted = state
        lastCompletedStep = name
        inFlight = nil
    }

    var options: SnapshotOptions = SnapshotOptions()
}

/// Thrown inside a run to unwind the sequence when the simulated process died.
struct SimulatedCrash: Error {}

/// The identity, size and modification time of each file in a directory (and its
/// subdirectories), to see which a step changed. SQLite's shared-memory index (`-shm`),
/// written through memory, is left out.
struct FileMarks {
    struct Mark: Equatable {
        let inode: UInt64
        let size: Int64
        let modified: Int64
        let modifiedNanoseconds: Int64
    }

    private(set) var marks: [String: Mark] = [:]

    init(directory: String) {
        collect(directory, depth: 0)
    }

    private mutating func collect(_ directory: String, depth: Int) {
        guard depth < 4, let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where !name.hasSuffix("-shm") {
            let path = directory + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            if (info.st_mode & S_IFMT) == S_IFDIR {
                collect(path, depth: depth + 1)
            } else if (info.st_mode & S_IFMT) == S_IFREG {
                marks[path] = Mark(
                    inode: UInt64(info.st_ino), size: Int64(info.st_size), modified: Int64(info.st_mtim.tv_sec),
                    modifiedNanoseconds: Int64(info.st_mtim.tv_nsec))
            }
        }
    }

    /// The paths created, removed, replaced or changed between these marks and `later`.
    func changedPaths(comparedWith later: FileMarks) -> [String] {
        Set(marks.keys).union(later.marks.keys).filter { marks[$0] != later.marks[$0] }.sorted()
    }
}

/// Runs the caller's sequence of writes and saves once for each file operation it makes,
/// with a fault injected at that operation, and checks after each that the file restores
/// to a state the sequence saved: the last save that returned, or the one in flight.
///
/// ```swift
/// try assertCrashSafe(schema: schema) { run in
///     try run.store.write { tx in try tx[books].insert(book) }
///     try run.save("first save") { try MyApp.save(run.store, to: run.path) }
///     try run.store.write { tx in _ = try tx[books].update(book.id) { $0.title = "New" } }
///     try run.save("second save") { try MyApp.save(run.store, to: run.path) }
/// }
/// ```
///
/// First the sequence runs once without a fault, which counts its file operations (the
/// crash points: every write, sync, truncation, creation, deletion and rename of files in
/// the run's directory, through the fault-injecting SQLite VFS and the library's own
/// file calls) and must end with the file holding the last save. Then, for each fault in
/// `options`, it runs once per operation: a kill or power loss there unwinds the sequence
/// and the file is restored (a power loss is also tried after the last operation, when
/// every save has returned); an I/O error there must be reported by the save (or leave
/// the file holding the new state), leave a saved state, and let the same save succeed
/// when called again. Above `options.maxRunsPerFault` operations, that many are sampled
/// and the report says so. A failure names the fault, the operation (its kind and file)
/// and the save step it interrupted.
///
/// The sequence must be deterministic and must do its file work through SQLite or this
/// library, in ``CrashRun/directory``: other file calls (`FileManager`, `Data.write`,
/// POSIX `rename` and `write`) are no crash points, so the fault-free run watches the
/// directory, and a save step that changes a file by such calls fails the check, naming
/// the file. Each run has a directory and a fault plan of its own, so tests that call
/// this may run in parallel.
/// - Returns: the report: operations, runs per fault, sampling, failures.
/// - Throws: an error the sequence throws without any fault.
/// - Complexity: (1 + runs) × (the sequence + one restore of the file), runs being up to
///   `maxRunsPerFault` per fault. Syncs within a run are simulated (no run waits on the
///   disk's flush). A sequence of 100 rows and two full snapshots makes 88 file
///   operations, so 265 runs (see the benchmarks for their cost). Keep the sequence
///   small: a few rows show a save routine's steps.
@discardableResult
public func assertCrashSafe(
    schema: Schema, options: CrashSafetyOptions = CrashSafetyOptions(),
    fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
    _ sequence: (CrashRun) throws -> Void
) throws -> CrashSafetyReport {
    let location = FailureLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    try FaultInjection.install()
    return try withTemporaryDirectory("EntityStoreCrashSafety") { root in
        // A fault-free run: counts the operations and must end with the last save on file.
        let clean = try CrashSafetyCheck.run(schema: schema, root: root, name: "clean", fault: nil, at: Int.max, options: options, sequence)
        var failures = clean.problems.map { "without any fault: \($0)" }
        let operations = clean.operations
        var runs: [InjectedFault: Int] = [:]
        var sampled = false
        if failures.isEmpty {
            for fault in options.faults {
                // A power loss can also strike after the last operation: the saves have
                // returned, and whatever they did not sync is lost.
                let count = fault == .powerLoss ? operations + 1 : operations
                let points = CrashSafetyCheck.points(count, cap: options.maxRunsPerFault, seed: options.seed)
                sampled = sampled || points.count < count
                runs[fault] = points.count
                for point in points {
                    let outcome = try CrashSafetyCheck.run(
                        schema: schema, root: root, name: "\(fault.rawValue)-\(point)", fault: fault, at: point, options: options, sequence)
                    for problem in outcome.problems {
                        failures.append("after \(fault) at operation \(point) of \(operations) (\(outcome.operation)) during \(outcome.step): \(problem)")
                    }
                }
            }
        }
        let report = CrashSafetyReport(operations: operations, saves: clean.saves, runs: runs, sampled: sampled, failures: failures)
        if !failures.isEmpty {
            let shown = failures.prefix(5).map { "  " + $0 }
            let more = failures.count > 5 ? ["  … and \(failures.count - 5) more"] : []
            FailureReporter.report((["the save routine is not crash-safe (\(report)):"] + shown + more).joined(separator: "\n"), at: location)
        }
        return report
    }
}

/// The machinery of ``assertCrashSafe(schema:options:fileID:filePath:line:column:_:)``.
enum CrashSafetyCheck {
    struct Outcome {
        var operations = 0
        var saves = 0
        var operation = "not reached"
        var step = "no save"
        var problems: [String] = []
    }

    /// The operations to strike: all of them up to `cap`, else `cap` of them, the first
    /// and last included, chosen by `seed`.
    static func points(_ count: Int, cap: Int, seed: UInt64) -> [Int] {
        guard count > cap, cap >= 2 else { return Array(0..<count) }
        var random = SeededRandomness(seed: seed)
        var chosen: Set<Int> = [0, count - 1]
        while chosen.count < cap { chosen.insert(Int(random.next() % UInt64(count))) }
        return chosen.sorted()
    }

    static func run(
        schema: Schema, root: String, name: String, fault: InjectedFault?, at point: Int, options: CrashSafetyOptions,
        _ sequence: (CrashRun) throws -> Void
    ) throws -> Outcome {
        let directory = root + "/" + name
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mode: FaultInjection.Mode = switch fault {
        case .powerLoss?: .powerLoss
        case .ioError?: .error(778)  // SQLITE_IOERR_WRITE
        case .processKill?, nil: .kill
        }
        var outcome = Outcome()
        var run: CrashRun? = CrashRun(store: EntityStore(schema: schema), directory: directory, fault: fault)
        run?.options = options.snapshotOptions
        try FaultInjection.arm(directory: directory, mode: mode, at: point)
        var thrown: (any Error)?
        do {
            if let run { try sequence(run) }
        } catch is SimulatedCrash {
        } catch {
            thrown = error
        }
        guard let finished = run else { return outcome }
        let struck = FaultInjection.struckOperation(directory: directory)
        let lastCompleted = finished.lastCompleted, inFlight = finished.inFlight
        outcome.saves = finished.step
        outcome.problems = finished.problems
        outcome.step = if struck == nil {
            "no save"
        } else if let step = finished.struckStep ?? (finished.inFlight == nil ? nil : finished.stepName) {
            step
        } else {
            "no save (after \(finished.lastCompletedStep.isEmpty ? "none" : finished.lastCompletedStep))"
        }
        if let struck { outcome.operation = "\(describe(struck.kind)) \((struck.path as NSString).lastPathComponent)" }
        run = nil
        let (operations, _) = FaultInjection.disarm(directory: directory)
        outcome.operations = operations
        if fault == .powerLoss {
            FaultInjection.loseUnsyncedWrites(directory: directory)
            if struck == nil { outcome.operation = "after the last operation"; outcome.step = "no save (after the last)" }
        }
        if let thrown {
            if struck == nil || fault == nil {
                // Not a fault's doing: the sequence itself fails.
                throw thrown
            }
            outcome.problems.append("the sequence threw \(thrown) instead of its save reporting the fault")
        }
        let probe = CrashRun(store: EntityStore(schema: schema), directory: directory, fault: nil)
        probe.options = options.snapshotOptions
        let allowed: [EntityState?] = struck == nil || fault == .ioError ? [lastCompleted] : [lastCompleted, inFlight]
        if let problem = readProblem(probe, allowing: allowed, options: options.snapshotOptions) {
            outcome.problems.append(problem)
        }
        return outcome
    }

    /// Why the file at `run.path` does not restore to one of `allowed` (nil: no save
    /// completed, so a missing file is fine), or nil if it does.
    static func readProblem(_ run: CrashRun, allowing allowed: [EntityState?], options: SnapshotOptions?) -> String? {
        let candidates = allowed.compactMap { $0 }
        let noneSaved = allowed.contains { $0 == nil }
        guard FileManager.default.fileExists(atPath: run.path) else {
            return noneSaved ? nil : "the file is missing"
        }
        let restored: EntityState
        do {
            restored = try EntityState.readSnapshot(from: run.path, schema: run.store.schema, options: options ?? run.options)
        } catch {
            if noneSaved && candidates.isEmpty { return nil }
            return "the file cannot be restored: \(error)"
        }
        if candidates.contains(where: { StateEquivalence.sameRows($0, restored) }) { return nil }
        guard let last = candidates.first else {
            return "the file holds rows though no save completed"
        }
        let differences = StateEquivalence.differences(expected: last, actual: restored, actualName: "restored", limit: 3)
        let which = candidates.count > 1 ? "neither the last completed save nor the one in flight" : "not the last completed save"
        return "the file restores to \(which): \(differences.prefix(3).joined(separator: "; "))"
    }

    static func describe(_ kind: FaultInjection.Operations) -> String {
        switch kind {
        case .write: "a write to"
        case .sync: "a sync of"
        case .truncate: "a truncation of"
        case .delete: "the deletion of"
        case .create: "the creation of"
        case .rename: "a rename over"
        case .read: "a read of"
        default: "an operation on"
        }
    }
}
