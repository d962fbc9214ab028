import EntityStore
import EntityStoreTesting
import Foundation
import StoreCore
import XCTest

/// Under XCTest, failures are XCTest failures at the caller's file and line. This case
/// records them instead of failing, and checks them.
final class XCTestReportingTests: XCTestCase {
    private var recorded: [(description: String, file: String, line: Int)] = []

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
        recorded.append((description, filePath, lineNumber))
    }

    func testFailuresAreReportedAtTheCallersLine() throws {
        let store = try libraryStore()
        let line = #line + 1
        try store.assertWrite { tx in _ = try tx[authors].remove(1) } expected: { $0[authors].remove(1) }
        let counter = Store(Counter())
        let counterLine = #line + 1
        try counter.assertCommit { $0.count = 1 } expected: { _ in }

        let captured = recorded
        recorded = []
        XCTAssertEqual(captured.count, 2)
        XCTAssertEqual(captured.first?.line, line)
        XCTAssertEqual(captured.first?.file, #filePath)
        XCTAssertTrue(captured.first?.description.contains("books 10: removed, but the description keeps it") == true)
        XCTAssertEqual(captured.last?.line, counterLine)
        XCTAssertTrue(captured.last?.description.contains("count: expected 0, store has 1") == true)
    }

    /// A failure reported off the test's thread (an observer, a worker) still reaches the
    /// running test case.
    func testAFailureOnAnotherThreadIsNotLost() throws {
        let store = try libraryStore()
        let line = #line + 4
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            _ = try? withExtendedLifetime(store) {
                try store.assertWrite { tx in _ = try tx[authors].update(1) { $0.name = "U" } } expected: { _ in }
            }
            done.signal()
        }
        thread.start()
        // XCTest runs its cases on the main thread, not the concurrency pool: a wait is
        // fine, and the semaphore orders the thread's recording before the reads below.
        done.wait()
        let captured = recorded
        recorded = []
        XCTAssertEqual(captured.count, 1)
        XCTAssertEqual(captured.first?.line, line)
        XCTAssertTrue(captured.first?.description.contains("authors 1: updated, but the description does not change it") == true)
    }

    func testPassingAssertionsReportNothing() throws {
        let store = try libraryStore()
        try store.assertWrite { tx in _ = try tx[books].update(10) { $0.year = 2000 } } expected: { $0[books][10]?.year = 2000 }
        XCTAssertTrue(recorded.isEmpty)
    }
}
