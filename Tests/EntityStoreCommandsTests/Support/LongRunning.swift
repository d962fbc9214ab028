import Testing

/// The tests that each keep both cores busy for many seconds (the large import, the
/// crash test), run one at a time so they do not slow each other down.
@Suite("Long-running tests, one at a time", .serialized)
enum LongRunning {}
