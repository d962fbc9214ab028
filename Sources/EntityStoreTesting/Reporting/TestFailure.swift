import StoreCore
#if canImport(Testing)
import Testing
#endif
#if canImport(XCTest)
import XCTest
#endif

/// Where an assertion was written: the caller's file and line, captured with the
/// `#fileID`, `#filePath`, `#line` and `#column` defaults of every helper, so a failure
/// points at the test, not at this library.
public struct FailureLocation: Sendable, Equatable, CustomStringConvertible {
    /// The file's module-qualified name, `"MyAppTests/SaveTests.swift"`.
    public let fileID: String
    /// The file's full path.
    public let filePath: String
    /// The line, from 1.
    public let line: Int
    /// The column, from 1.
    public let column: Int
    let staticFilePath: StaticString

    /// A location from the values of `#fileID`, `#filePath`, `#line` and `#column`.
    public init(fileID: StaticString, filePath: StaticString, line: UInt, column: UInt) {
        self.fileID = "\(fileID)"
        self.filePath = "\(filePath)"
        self.line = Int(line)
        self.column = Int(column)
        self.staticFilePath = filePath
    }

    /// `fileID:line:column`.
    public var description: String { "\(fileID):\(line):\(column)" }

    /// Equal when they name the same place.
    public static func == (lhs: FailureLocation, rhs: FailureLocation) -> Bool {
        lhs.fileID == rhs.fileID && lhs.filePath == rhs.filePath && lhs.line == rhs.line && lhs.column == rhs.column
    }
}

/// One failure an assertion of this library reported: its message and the caller's
/// location.
public struct TestFailure: Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as the test log shows it.
    public let message: String
    /// Where the failing assertion was written.
    public let location: FailureLocation

    /// `location: message`.
    public var description: String { "\(location): \(message)" }
}

/// How this library reports failures: to Swift Testing when a Swift Testing test is
/// running (`Issue.record`, so `withKnownIssue` catches them), to XCTest otherwise
/// (`XCTFail` at the caller's file and line), or to a recorder set up by
/// ``withRecordedFailures(_:)``.
///
/// The product is for test targets only, so it links both testing libraries directly
/// (a bridge such as IssueReporting would find them at run time instead).
enum FailureReporter {
    /// The recorder that takes failures instead of the test library, if one is set.
    @TaskLocal static var recorder: FailureRecorder?

    /// Reports `message` at `location`. O(1) plus the test library's own cost.
    ///
    /// Off a test's task (an observer on another thread, a detached task), no test is
    /// current: the failure then goes to both libraries, so neither loses it. Swift Testing
    /// records an issue outside any test, which fails the run; XCTest attributes it to the
    /// test case running.
    static func report(_ message: String, at location: FailureLocation) {
        if let recorder {
            recorder.append(TestFailure(message: message, location: location))
            return
        }
        #if canImport(Testing)
        let sourceLocation = SourceLocation(fileID: location.fileID, filePath: location.filePath, line: location.line, column: location.column)
        if Test.current != nil {
            Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
            return
        }
        Issue.record(Comment(rawValue: message + "\n(reported off the test's task)"), sourceLocation: sourceLocation)
        #endif
        #if canImport(XCTest)
        XCTFail(message, file: location.staticFilePath, line: UInt(location.line))
        #endif
    }
}

/// Collects failures for ``withRecordedFailures(_:)``; shared by every thread the body
/// starts while the task-local value is in scope (behind the package's lock, which
/// ThreadSanitizer follows).
final class FailureRecorder: Sendable {
    private let failures = Lock<[TestFailure]>([])

    func append(_ failure: TestFailure) { failures.withLock { $0.append(failure) } }
    var recorded: [TestFailure] { failures.withLock { $0 } }
}

/// Runs `body` and returns the failures this library's assertions reported inside it,
/// instead of reporting them to Swift Testing or XCTest: for testing helpers built on
/// these assertions, and for checking the messages themselves.
///
/// Failures reported from other tasks (detached tasks, other threads) are not captured.
/// - Complexity: O(1) beyond `body`.
public func withRecordedFailures(_ body: () throws -> Void) rethrows -> [TestFailure] {
    let recorder = FailureRecorder()
    try FailureReporter.$recorder.withValue(recorder) { try body() }
    return recorder.recorded
}

/// Runs the asynchronous `body` and returns the failures this library's assertions
/// reported inside it, as the synchronous form does.
/// - Complexity: O(1) beyond `body`.
public func withRecordedFailures(_ body: () async throws -> Void) async rethrows -> [TestFailure] {
    let recorder = FailureRecorder()
    try await FailureReporter.$recorder.withValue(recorder) { try await body() }
    return recorder.recorded
}
