import StoreCore
import Synchronization

/// Records the events of one type a store sends, so a test can assert them; in
/// exhaustive mode, events nobody asserted fail the test when the recorder is finished
/// or released (at the end of the test's scope).
///
/// ```swift
/// let events = EventExpectations(store, of: AppEvent.self)
/// try events.assertSent([.saved(1)]) {
///     try store.dispatch(.save(1), through: reducer)
/// }
/// try store.dispatch(.save(2), through: reducer)
/// events.assertReceived(.saved(2))
/// // Released here: an event sent and never asserted would fail the test.
/// ```
///
/// Recording starts when the recorder is created (registration is synchronous) and
/// stops when it is finished or released.
public final class EventExpectations<Event: Sendable & Equatable>: Sendable {
    private let log: EventLog<Event>
    private let observation: Observation
    /// How unasserted events are treated when the recorder is finished.
    public let exhaustivity: Exhaustivity
    private let location: FailureLocation
    private let finished = Atomic<Bool>(false)

    /// Starts recording the events of type `type` that `store` sends.
    /// - Parameters:
    ///   - store: a `Store` or a scope of one.
    ///   - type: the event type (protocols match conforming values).
    ///   - exhaustivity: whether events left unasserted fail at ``finish(fileID:filePath:line:column:)``
    ///     or release (reported at this call's location).
    ///   - fileID: the caller's file, where a failure at release is reported (the default).
    ///   - filePath: the caller's file path (the default).
    ///   - line: the caller's line (the default).
    ///   - column: the caller's column (the default).
    /// - Complexity: O(event observers) to register; O(1) per recorded event.
    public init(
        _ store: some StateStore, of type: Event.Type = Event.self, exhaustivity: Exhaustivity = .exhaustive,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        let log = EventLog<Event>()
        self.log = log
        self.exhaustivity = exhaustivity
        self.location = FailureLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        self.observation = store.onEvent(of: type) { event in log.append(event) }
    }

    deinit {
        observation.cancel()
        if !finished.load(ordering: .acquiring) { reportUnasserted(at: location) }
    }

    /// The events recorded and not yet asserted, oldest first. O(k).
    public var unasserted: [Event] { log.pending }

    /// Runs `operation` and checks the events it sent: exhaustively, exactly `expected`,
    /// in order; non-exhaustively, `expected` in order among them. They then count as
    /// asserted, as do the others it sent in non-exhaustive mode. Events recorded
    /// before `operation` stay pending.
    /// - Returns: what `operation` returned.
    /// - Complexity: O(events sent × expected).
    @discardableResult
    public func assertSent<Result>(
        _ expected: [Event],
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        during operation: () throws -> Result
    ) rethrows -> Result {
        let location = FailureLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        let mark = log.count
        let result = try operation()
        let sent = log.take(from: mark)
        if let problem = Self.mismatch(expected: expected, actual: sent, exhaustivity: exhaustivity) {
            FailureReporter.report("the events sent differ from the expected ones: \(problem)", at: location)
        }
        return result
    }

    /// Checks that the oldest unasserted events are `expected`, in order (non-exhaustively:
    /// that `expected` occur in order among the unasserted events, skipping others), and
    /// marks them, and in non-exhaustive mode the skipped ones, as asserted.
    /// - Complexity: O(pending events × expected).
    public func assertReceived(
        _ expected: Event...,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        let location = FailureLocation(fileID: fileID, filePath: filePath, line: line, column: column)
        let pending = log.pending
        switch exhaustivity {
        case .exhaustive:
            let prefix = Array(pending.prefix(expected.count))
            if prefix != expected {
                FailureReporter.report(
                    "expected to receive \(Self.list(expected)), but the unasserted events are \(Self.list(pending))", at: location)
            }
            log.drop(first: Swift.min(expected.count, pending.count))
        case .nonExhaustive:
            var consumed = 0, matched = 0
            while matched < expected.count, consumed < pending.count {
                if pending[consumed] == expected[matched] { matched += 1 }
                consumed += 1
            }
            if matched < expected.count {
                FailureReporter.report(
                    "expected to receive \(Self.list(expected)) in order, but the unasserted events are \(Self.list(pending))", at: location)
            }
            log.drop(first: consumed)
        }
    }

    /// Stops recording; in exhaustive mode, events still unasserted fail here. Called when
    /// the recorder is released, if not before. O(pending events).
    public func finish(fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column) {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { return }
        observation.cancel()
        reportUnasserted(at: FailureLocation(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    private func reportUnasserted(at location: FailureLocation) {
        let pending = log.pending
        guard exhaustivity == .exhaustive, !pending.isEmpty else { return }
        FailureReporter.report("\(pending.count) event\(pending.count == 1 ? "" : "s") sent but never asserted: \(Self.list(pending))", at: location)
    }

    static func mismatch(expected: [Event], actual: [Event], exhaustivity: Exhaustivity) -> String? {
        switch exhaustivity {
        case .exhaustive:
            return expected == actual ? nil : "expected \(list(expected)), sent \(list(actual))"
        case .nonExhaustive:
            var matched = 0
            for event in actual where matched < expected.count && event == expected[matched] { matched += 1 }
            return matched == expected.count ? nil : "expected \(list(expected)) in order, sent \(list(actual))"
        }
    }

    static func list(_ events: [Event]) -> String {
        events.isEmpty ? "none" : "[" + events.map { ValueDiff.describe($0) }.joined(separator: ", ") + "]"
    }
}

/// The recorded events, shared with the store's observer (which must not retain the
/// recorder, so that releasing the recorder finishes it).
final class EventLog<Event: Sendable>: Sendable {
    private struct Contents {
        var events: [Event] = []
        /// How many of `events` were asserted (dropped from the front logically).
        var asserted = 0
    }

    private let contents = Lock(Contents())

    func append(_ event: Event) { contents.withLock { $0.events.append(event) } }
    var count: Int { contents.withLock { $0.events.count } }
    var pending: [Event] { contents.withLock { Array($0.events[$0.asserted...]) } }

    /// The events from index `mark` on, which become asserted (with any before them).
    func take(from mark: Int) -> [Event] {
        contents.withLock { contents in
            let taken = Array(contents.events[Swift.min(mark, contents.events.count)...])
            // Events before the mark stay pending: move them to the end of the asserted prefix.
            let earlier = Array(contents.events[contents.asserted..<Swift.min(mark, contents.events.count)])
            contents.events = Array(contents.events[..<contents.asserted]) + taken + earlier
            contents.asserted += taken.count
            return taken
        }
    }

    func drop(first count: Int) {
        contents.withLock { $0.asserted = Swift.min($0.events.count, $0.asserted + count) }
    }
}
