/// What a keyed task does when a task with the same key is still running.
public enum TaskMode: Sendable, Equatable {
    /// Cancels the running task and starts the new one at once (cancel in flight).
    case dropCurrent
    /// Starts the new task once the running one has finished.
    case waitInCurrent
    /// Keeps the running task and returns it; the new operation never runs.
    case ignoreNew
}
