import EntityStore
import EntityStoreSQLite
import EntityStoreTestSupport
import Foundation
import Testing

/// The suites that arm fault plans. Each plan watches a directory of its own, so the
/// tests run side by side, each on threads of its own (they are long and CPU-bound).
@Suite("Fault injection", .threadsOfItsOwn)
enum FaultInjectionTests {}

/// One write to interrupt: the file's state before it, the state it writes, and the write.
///
/// `run` holds every object the write uses (stores, snapshot files); the scenario is
/// dropped before the file is read back, as a killed process would drop them.
struct FaultScenario {
    /// The state the file holds before the write.
    let old: EntityState
    /// The state the write stores.
    let new: EntityState
    /// The write itself (it may throw once the plan strikes).
    let run: () throws -> Void
    /// After an injected error (not a kill): the same write again, by the same objects,
    /// once the fault is gone; it must then store the new state.
    var retry: (() throws -> Void)?
}

/// What every reader made of a file after a fault.
enum ReadOutcome: Equatable, CustomStringConvertible {
    case old
    case new
    case problem(String)

    var description: String {
        switch self {
        case .old: "the old state"
        case .new: "the new state"
        case .problem(let text): text
        }
    }
}

/// A directory for fault tests, by its real path (the one SQLite names files by).
func withFaultDirectory<R>(_ body: (String) throws -> R) throws -> R {
    try withTemporaryDirectory { url in
        try body((url.path as NSString).resolvingSymlinksInPath)
    }
}

/// Reads the snapshot at `path` with every reader (typed restore, dynamic restore,
/// metadata, verify) and says which of the two states all of them saw.
func readWithEveryReader(_ path: String, old: EntityState, new: EntityState) -> ReadOutcome {
    let typed: EntityState
    do {
        typed = try EntityState.readSnapshot(from: path, schema: old.schema)
    } catch {
        return .problem("restore: \(error)")
    }
    let outcome: ReadOutcome
    if sameLibraryRows(typed, old) {
        outcome = .old
    } else if sameLibraryRows(typed, new) {
        outcome = .new
    } else {
        return .problem("restore read a state that is neither the old nor the new one")
    }
    let expected = outcome == .old ? old : new
    do {
        let dynamic = try EntityStore.restoringDynamic(from: path).state
        for table in expected.tableNames where dynamic.count(ofTable: table) != expected.count(ofTable: table) {
            return .problem("the dynamic restore of '\(table)' holds \(dynamic.count(ofTable: table) ?? -1) rows")
        }
        let metadata = try Snapshot.metadata(at: path)
        for table in metadata.tables where table.rowCount != expected.count(ofTable: table.name) {
            return .problem("the metadata of '\(table.name)' records \(table.rowCount) rows")
        }
    } catch {
        return .problem("\(error)")
    }
    let report = Snapshot.verify(at: path)
    if !report.isSound { return .problem("verify: \(report.problems.joined(separator: "; "))") }
    return outcome
}

/// Runs a fresh scenario once per operation number, with the plan striking there, until
/// a run completes without reaching it; after each, every reader must see the old state
/// or the new one (the new one after a run that completed).
///
/// - Parameters:
///   - mode: what happens at the chosen operation.
///   - counting: the operations the plan counts.
///   - prepare: builds the scenario in a fresh directory (its file written, its objects
///     open), given the snapshot path to use.
///   - afterFault: called with the same path once the scenario is dropped and the plan
///     disarmed, for checks beyond the readers (a retry, a restart); its problems are
///     reported with the operation number.
/// - Returns: how many operation numbers were tried.
@discardableResult
func strikeAtEveryOperation(
    mode: FaultInjection.Mode = .kill, counting: FaultInjection.Operations = .mutating,
    limit: Int = 3_000, sourceLocation: SourceLocation = #_sourceLocation,
    prepare: (String) throws -> FaultScenario,
    afterFault: (String, FaultScenario.States) throws -> Void = { _, _ in }
) throws -> Int {
    try FaultInjection.install()
    return try withFaultDirectory { root in
        for target in 0..<limit {
            let directory = root + "/run-\(target)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            let path = directory + "/store.sqlite"
            // A plan that never strikes watches the preparation, so its syncs are simulated
            // too (a real flush changes nothing the readers see, and waits on the disk).
            try FaultInjection.arm(directory: directory, mode: .kill, at: Int.max)
            var scenario: FaultScenario?
            do {
                scenario = try prepare(path)
                try FaultInjection.arm(directory: directory, mode: mode, at: target, counting: counting)
            } catch {
                FaultInjection.disarm(directory: directory)
                throw error
            }
            let states = FaultScenario.States(old: scenario!.old, new: scenario!.new)
            var thrown: (any Error)?
            do { try scenario?.run() } catch { thrown = error }
            if case .kill = mode {
                // Dropped while the plan still holds: a killed process does no cleanup.
                scenario = nil
            }
            let (_, struck) = FaultInjection.disarm(directory: directory)
            let outcome = readWithEveryReader(path, old: states.old, new: states.new)
            if struck, let retry = scenario?.retry {
                do {
                    try retry()
                    scenario = nil
                    let retried = readWithEveryReader(path, old: states.old, new: states.new)
                    #expect(
                        retried == .new || sameLibraryRows(states.old, states.new),
                        "operation \(target): the retry left \(retried)", sourceLocation: sourceLocation)
                } catch {
                    Issue.record("operation \(target): the retry failed: \(error)", sourceLocation: sourceLocation)
                }
            }
            scenario = nil
            if case .problem = outcome {
                Issue.record("operation \(target) (\(struck ? "struck" : "not reached")): \(outcome)", sourceLocation: sourceLocation)
            }
            if !struck {
                #expect(thrown == nil, "the write failed though the plan never struck: \(String(describing: thrown))", sourceLocation: sourceLocation)
                #expect(
                    outcome == .new || sameLibraryRows(states.old, states.new),
                    "a completed write must leave the new state, found \(outcome)", sourceLocation: sourceLocation)
                return target
            }
            if case .error = mode, thrown == nil, outcome == .old, !sameLibraryRows(states.old, states.new) {
                Issue.record("operation \(target): an injected error was swallowed and the write kept nothing", sourceLocation: sourceLocation)
            }
            do {
                try afterFault(path, states)
            } catch {
                Issue.record("operation \(target), after the fault: \(error)", sourceLocation: sourceLocation)
            }
            try? FileManager.default.removeItem(atPath: directory)
        }
        Issue.record("the write did not complete within \(limit) operations", sourceLocation: sourceLocation)
        return limit
    }
}

extension FaultScenario {
    /// The two states of a scenario, kept after the scenario itself is dropped.
    struct States {
        let old: EntityState
        let new: EntityState
    }
}

/// The library store the scenarios start from, and a store one write ahead of it.
func libraryStores() throws -> (store: EntityStore, old: EntityState) {
    let store = try populatedLibraryStore(authorCount: 4, bookCount: 30)
    return (store, store.state)
}

/// Inserts, updates and removes rows of every library table: the write the scenarios save.
func changeLibrary(_ store: EntityStore) throws {
    try store.write { tx in
        try tx[authors].insert(Author(id: 99, name: "New author ✨"))
        for number in stride(from: 1, through: 30, by: 4) { _ = try tx[books].update("b\(number)") { $0.title += " (revised)" } }
        _ = try tx[books].remove("b2")
        try tx[books].insert(Book(id: "b100", title: "Added", authorID: 99, year: 2001, editorID: 99))
        try tx[samples].insert(sample(2))
    }
}

