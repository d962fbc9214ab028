/// The operations shared by ``Store`` and ``ScopedStore``; everything built on them
/// (key-path observation, streams, derived values, scopes, actions) works on both.
///
/// Events and keyed tasks belong to the underlying ``Store``: a scope forwards them, so it
/// shares the store's events and the store's task keys.
public protocol StateStore<State>: AnyObject, Sendable {
    /// The state type.
    associatedtype State: Sendable

    /// The current committed state.
    var state: State { get }
    /// The version of the last published ``Changes`` (0 before any).
    var version: UInt64 { get }
    /// The dependencies handed to actions and tasks started here.
    var dependencies: Dependencies { get }

    /// Applies `body` to a copy of the state and publishes it atomically.
    func commit<Result>(_ name: String, withContext body: (inout State, CommitContext) throws -> Result) throws -> Result

    /// Groups the commits of `body` (on this thread) into one published ``Changes``.
    func batch<Result>(_ name: String, _ body: () throws -> Result) throws -> Result

    /// Registers `handler` for every later published ``Changes``.
    func observe(_ handler: @escaping @Sendable (Changes<State>) -> Void) -> Observation

    /// Registers `handler` and calls `initial` with the state at registration, atomically:
    /// `handler` then receives exactly the changes published after that state.
    ///
    /// `initial` runs while the store is locked: it must be quick and must not call the store.
    /// `onTermination` runs when the underlying store is deallocated.
    func observe(
        startingWith initial: (State) -> Void,
        onTermination: (@Sendable () -> Void)?,
        _ handler: @escaping @Sendable (Changes<State>) -> Void
    ) -> Observation

    /// Sends a one-shot event through the ordered delivery queue.
    func send<Event: Sendable>(_ event: Event)

    /// Registers `handler` for every later event of type `type` (including values whose
    /// dynamic type conforms, when `type` is a protocol).
    func onEvent<Event: Sendable>(of type: Event.Type, _ handler: @escaping @Sendable (Event) -> Void) -> Observation

    /// An `AsyncStream` of every event of type `type` sent after this call (registration is
    /// synchronous). It ends when the underlying store is deallocated.
    func events<Event: Sendable>(
        of type: Event.Type, bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy
    ) -> AsyncStream<Event>

    /// Starts `operation` as a task registered under `key`, resolving a clash with a task of
    /// the same key by `mode`.
    @discardableResult
    func task<Key: Hashable & Sendable>(
        key: Key, mode: TaskMode, operation: @escaping @Sendable (ActionContext<State>) async -> Void
    ) -> Task<Void, Never>

    /// Cancels and unregisters the tasks registered under `key`, running or queued.
    func cancel<Key: Hashable & Sendable>(key: Key)

    /// Whether a task is registered under `key`.
    func isRunning<Key: Hashable & Sendable>(key: Key) -> Bool
}
