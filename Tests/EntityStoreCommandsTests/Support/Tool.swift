import EntityStore
import EntityStoreCommands
import EntityStoreTestSupport
import Foundation
@testable import entity_store
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What one run of a command-line tool produced.
struct RunResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    /// The non-empty lines of standard error.
    var errorLines: [String] {
        stderr.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
            .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    }

    /// The non-empty lines of standard output.
    var outputLines: [String] {
        stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    var description: String { "exit \(status)\n--- stdout\n\(stdout.prefix(4_000))\n--- stderr\n\(stderr.prefix(4_000))" }
}

/// The built executables, found beside the test binary in the build products directory.
enum Tool {
    /// The build products directory: the first directory, walking up from the test binary,
    /// that holds an `entity-store` executable.
    static let productsDirectory: URL = {
        var candidates: [URL] = []
        for start in [CommandLine.arguments.first.map { URL(fileURLWithPath: $0) }, Bundle.main.executableURL, Bundle.main.bundleURL] {
            guard var url = start?.standardizedFileURL else { continue }
            for _ in 0..<6 {
                url = url.deletingLastPathComponent()
                candidates.append(url)
            }
        }
        for directory in candidates where FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("entity-store").path) {
            return directory
        }
        fatalError("cannot find the entity-store executable near \(CommandLine.arguments.first ?? "?")")
    }()

    static var entityStore: URL { productsDirectory.appendingPathComponent("entity-store") }

    /// Whether `run` may run `arguments` inside this process (see ``run(_:stdin:executable:in:environment:)``).
    static func runsInProcess(_ arguments: [String]) -> Bool {
        guard !alwaysStartsProcesses, let command = arguments.first,
              ["import", "export", "inspect", "verify", "query", "diff", "migrate", "fixture"].contains(command)
        else { return false }
        // Help is laid out for the terminal's width; a URL is a PostgreSQL store; replacing
        // a file narrows the process's umask while it writes, which other tests would see.
        return !arguments.contains {
            $0 == "--help" || $0 == "-help" || $0 == "-h" || $0 == "--version" || $0 == "help" || $0 == "--force" || $0.contains("://")
        }
    }

    private static let alwaysStartsProcesses = Soak.isOn || ProcessInfo.processInfo.environment["ENTITYSTORE_TEST_PROCESSES"] == "1"

    /// Runs the tool's command for `arguments` inside this process, on a thread of its own
    /// with a main thread's stack.
    static func runInProcess(_ arguments: [String]) -> RunResult {
        let result = Mutex<CapturedRun?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let run = EntityStoreTool.runCapturingOutput(arguments)
            result.withLock { $0 = run }
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
        done.wait()
        let run = result.withLock { $0 }!
        return RunResult(status: run.status, stdout: String(decoding: run.output, as: UTF8.self), stderr: String(decoding: run.error, as: UTF8.self))
    }
    static var bookshelf: URL { productsDirectory.appendingPathComponent("bookshelf") }
}

/// Collects everything a file handle yields until end of file, on a background thread.
private final class Drain: Sendable {
    private let data = Mutex(Data())
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            let bytes = handle.readDataToEndOfFile()
            data.withLock { $0 = bytes }
            done.signal()
        }
    }

    /// Waits for end of file and returns the bytes.
    func wait() -> Data {
        done.wait()
        return data.withLock { $0 }
    }
}

/// A started child process whose output is being collected.
struct RunningProcess {
    let process: Process
    fileprivate let stdout: Drain
    fileprivate let stderr: Drain

    /// Waits at most `timeout` for the process to end, killing it (SIGKILL) after that;
    /// nil then, with the run recorded as an issue.
    func finish(timeout: Duration, sourceLocation: SourceLocation = #_sourceLocation) -> RunResult? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        guard process.isRunning else { return finish() }
        kill(process.processIdentifier, SIGKILL)
        Issue.record("still running after \(timeout), killed: \(finish())", sourceLocation: sourceLocation)
        return nil
    }

    /// Waits for the process to end and returns what it printed.
    func finish() -> RunResult {
        let out = stdout.wait(), err = stderr.wait()
        process.waitUntilExit()
        return RunResult(
            status: process.terminationStatus,
            stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self))
    }
}

/// Starts `executable` with `arguments` in `directory`, with `environment` added to this
/// process's; standard input is `stdin` or empty.
func start(
    _ executable: URL = Tool.entityStore, _ arguments: [String], stdin: Data? = nil, in directory: URL? = nil,
    environment: [String: String] = [:]
) throws -> RunningProcess {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    let output = Pipe(), error = Pipe()
    process.standardOutput = output
    process.standardError = error
    let input = stdin.map { _ in Pipe() }
    process.standardInput = input ?? FileHandle.nullDevice
    try process.run()
    // The child holds its own copies of the write ends; close ours so reads end at its exit.
    try? output.fileHandleForWriting.close()
    try? error.fileHandleForWriting.close()
    let running = RunningProcess(process: process, stdout: Drain(output.fileHandleForReading), stderr: Drain(error.fileHandleForReading))
    if let input, let stdin {
        try? input.fileHandleForReading.close()
        try? input.fileHandleForWriting.write(contentsOf: stdin)
        try? input.fileHandleForWriting.close()
    }
    return running
}

/// Runs `entity-store` (or another executable) to completion.
///
/// A command that needs nothing of a process of its own (no standard input, working
/// directory, environment, terminal width, or PostgreSQL connection) runs inside this
/// process, as the tool's `main` would run it, its output captured: the same parser,
/// command, messages and exit status, without the tool's start-up of a few tens of
/// milliseconds of debug-build linking, hundreds of times per run. A soak run
/// (``Soak/isOn``) or `ENTITYSTORE_TEST_PROCESSES=1` starts the built tool for every one.
func run(
    _ arguments: [String], stdin: Data? = nil, executable: URL = Tool.entityStore, in directory: URL? = nil,
    environment: [String: String] = [:]
) -> RunResult {
    if executable == Tool.entityStore, stdin == nil, directory == nil, environment.isEmpty, Tool.runsInProcess(arguments) {
        return Tool.runInProcess(arguments)
    }
    do {
        return try start(executable, arguments, stdin: stdin, in: directory, environment: environment).finish()
    } catch {
        return RunResult(status: -1, stdout: "", stderr: "cannot start \(executable.path): \(error)")
    }
}

/// Runs `entity-store` for at most `timeout`; a run that takes longer is killed and
/// recorded as an issue, and gives status -1.
func run(_ arguments: [String], timeout: Duration, in directory: URL? = nil, sourceLocation: SourceLocation = #_sourceLocation) -> RunResult {
    do {
        return try start(Tool.entityStore, arguments, in: directory).finish(timeout: timeout, sourceLocation: sourceLocation)
            ?? RunResult(status: -1, stdout: "", stderr: "timed out")
    } catch {
        return RunResult(status: -1, stdout: "", stderr: "cannot start: \(error)")
    }
}

/// Runs the `bookshelf` example to completion.
func bookshelf(_ arguments: [String]) -> RunResult {
    run(arguments, executable: Tool.bookshelf)
}

/// A fresh temporary directory for one test, removed by `remove()`.
struct Scratch {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("entity-store-e2e-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the directory.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `text` to `name` and returns its path.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        try write(name, Data(text.utf8))
    }

    /// Writes `data` to `name` and returns its path.
    @discardableResult
    func write(_ name: String, _ data: Data) throws -> String {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
        return file.path
    }

    /// The names in the directory (hidden ones included), sorted.
    func contents(_ subdirectory: String? = nil) -> [String] {
        let directory = subdirectory.map { path($0) } ?? url.path
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    func exists(_ name: String) -> Bool { FileManager.default.fileExists(atPath: path(name)) }

    func read(_ name: String) throws -> Data { try Data(contentsOf: url.appendingPathComponent(name)) }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Runs `body` with a fresh scratch directory, removed afterwards.
func withScratch<R>(_ body: (Scratch) throws -> R) throws -> R {
    let scratch = try Scratch()
    defer { scratch.remove() }
    return try body(scratch)
}

/// Parses JSON text with the library's kind-exact parser (2.0 stays a double, 2 an integer).
func parseJSON(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
    do {
        return try JSONValue(parsing: text)
    } catch {
        Issue.record("not JSON: \(error)\n\(text.prefix(2_000))", sourceLocation: sourceLocation)
        throw error
    }
}

/// Text a crash, trap or unhandled error would leave on standard error.
let crashMarkers = ["Fatal error", "Stack dump", "backtrace", "Backtrace", "Crash", "Illegal instruction", "Segmentation fault", "SIGSEGV", "SIGILL", "SIGTRAP"]

/// Asserts the shape of a reported failure: the expected exit status, exactly one non-empty
/// line on standard error mentioning each of `mentions`, nothing that looks like a crash.
func expectFailure(
    _ result: RunResult, status: Int32 = 1, mentioning mentions: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(result.status == status, "\(result)", sourceLocation: sourceLocation)
    #expect(result.errorLines.count == 1, "expected one line on stderr: \(result)", sourceLocation: sourceLocation)
    for marker in crashMarkers {
        #expect(!result.stderr.contains(marker), "crash text '\(marker)': \(result)", sourceLocation: sourceLocation)
    }
    let line = result.errorLines.first ?? ""
    for mention in mentions {
        #expect(line.contains(mention), "stderr line does not mention '\(mention)': \(line)", sourceLocation: sourceLocation)
    }
}

/// The JSON text of `value` (sorted keys, compact).
func json(_ value: JSONValue) -> String { value.serialized() }

/// The records of an export, by table.
func tables(of export: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) -> [String: [JSONValue]] {
    guard let object = export.objectValue else {
        Issue.record("the export is not an object: \(json(export).prefix(500))", sourceLocation: sourceLocation)
        return [:]
    }
    return object.mapValues { $0.arrayValue ?? [] }
}

/// `records` sorted by their `id` (integers before strings, each in natural order).
func sortedByID(_ records: [JSONValue]) -> [JSONValue] {
    records.sorted { a, b in
        switch (a["id"], b["id"]) {
        case let (.integer(x)?, .integer(y)?): x < y
        case (.integer?, .string?): true
        case (.string?, .integer?): false
        case let (.string(x)?, .string(y)?): x < y
        default: false
        }
    }
}
