/// A registered `Changes` observer.
@usableFromInline
struct ChangeObserver<State: Sendable>: Sendable {
    @usableFromInline let id: UInt64
    @usableFromInline let status: ObservationStatus
    @usableFromInline let handler: @Sendable (Changes<State>) -> Void
    @usableFromInline let onTermination: (@Sendable () -> Void)?
}

/// A hook run inside every publish, under the store's lock (see `addPublishHook`).
@usableFromInline
struct PublishHook<State: Sendable>: Sendable {
    @usableFromInline let id: UInt64
    @usableFromInline let handler: @Sendable (Changes<State>) -> Void
}

/// A check run on every commit after the middleware, before publication (see `addCommitCheck`).
@usableFromInline
struct CommitCheck<State: Sendable>: Sendable {
    @usableFromInline let id: UInt64
    @usableFromInline let handler: @Sendable (_ previous: State, _ next: State, _ context: CommitContext) throws -> Void
}

/// A registered event observer; `handler` filters the event types it wants.
@usableFromInline
struct EventObserver: Sendable {
    @usableFromInline let id: UInt64
    @usableFromInline let status: ObservationStatus
    @usableFromInline let handler: @Sendable (any Sendable) -> Void
    @usableFromInline let onTermination: (@Sendable () -> Void)?
}

/// One item of the ordered delivery queue, with the observers registered when it was
/// published (a later observer never sees an earlier item).
///
/// Payloads are structs rather than tuples: where this code runs unspecialized for the
/// store's state type (a client calling `commit` from generic code), a generic tuple's
/// type metadata is looked up at run time on every commit, far more slowly than a
/// generic struct's.
@usableFromInline
enum Delivery<State: Sendable>: Sendable {
    case changes(ChangeDelivery<State>)
    case event(EventDelivery)
}

/// A commit's `Changes`, its duration, and the observers to tell.
@usableFromInline
struct ChangeDelivery<State: Sendable>: Sendable {
    @usableFromInline let changes: Changes<State>
    @usableFromInline let duration: Duration
    @usableFromInline let observers: [ChangeObserver<State>]

    @inlinable
    init(changes: Changes<State>, duration: Duration, observers: [ChangeObserver<State>]) {
        self.changes = changes
        self.duration = duration
        self.observers = observers
    }
}

/// An event and the observers to tell.
@usableFromInline
struct EventDelivery: Sendable {
    @usableFromInline let event: any Sendable
    @usableFromInline let observers: [EventObserver]

    @inlinable
    init(event: any Sendable, observers: [EventObserver]) {
        self.event = event
        self.observers = observers
    }
}
