import StoreCore

struct Nested: Equatable, Sendable {
    var value = 0
    var flag = false
}

struct AppState: Equatable, Sendable {
    var count = 0
    var name = ""
    var nested = Nested()
}

/// A state without `==`: every completed commit counts as a change.
struct PlainState: Sendable {
    var count = 0
}

struct Boom: Error, Equatable {}

/// Collects values from any thread, behind the package's pthread `Lock` (which
/// ThreadSanitizer follows, unlike `Mutex`'s contended hand-over on Linux).
final class Recorder<Value: Sendable>: Sendable {
    private let storage = Lock<[Value]>([])

    func append(_ value: Value) { storage.withLock { $0.append(value) } }
    var values: [Value] { storage.withLock { $0 } }
    var count: Int { storage.withLock { $0.count } }
}

/// A one-shot signal an async test can wait on.
struct Gate: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func open() { continuation.yield() }

    func wait() async {
        for await _ in stream { return }
    }
}

/// Collects the first `count` elements of a stream (fewer if it ends first).
func collect<Element>(_ stream: AsyncStream<Element>, count: Int) async -> [Element] {
    var result: [Element] = []
    guard count > 0 else { return result }
    for await element in stream {
        result.append(element)
        if result.count == count { break }
    }
    return result
}

/// Waits until the current task is cancelled or `timeout` passes; returns whether it was
/// cancelled (so a test of a missed cancellation fails instead of hanging).
func waitForCancellation(timeout: Duration) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !Task.isCancelled, ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(5))
    }
    return Task.isCancelled
}
