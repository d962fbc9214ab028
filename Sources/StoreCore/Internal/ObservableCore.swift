import Observation
import Synchronization

/// The one core of every observable value of this package (StoreCore's ``Derived``,
/// EntityStore's derived and live queries): a state under the package's lock, the
/// observers of its changes in registration order, and the Observation registrar.
///
/// Each wrapper keeps its own state (a value, the revision it reflects, counters) and
/// says, under the lock, whether a step changed it; the core registers observers
/// atomically with the state they start from, hands each change to the observers
/// registered when it happened, outside the lock and in registration order, tells
/// Observation, and finishes the observers' streams when it is released.
///
/// The methods are inlinable, so a wrapper's delivery path is compiled for its concrete
/// state and event types where the wrapper is used.
@usableFromInline
package final class ObservableCore<State: Sendable, Event: Sendable>: Sendable {
    /// One registered observer.
    @usableFromInline
    struct Entry: Sendable {
        @usableFromInline let key: UInt64
        /// The token's status, held strongly: releasing the token cancels it.
        @usableFromInline let status: ObservationStatus
        @usableFromInline let handler: @Sendable (Event) -> Void
        @usableFromInline let onTermination: (@Sendable () -> Void)?

        @inlinable
        init(key: UInt64, status: ObservationStatus, handler: @escaping @Sendable (Event) -> Void, onTermination: (@Sendable () -> Void)?) {
            self.key = key
            self.status = status
            self.handler = handler
            self.onTermination = onTermination
        }
    }

    /// What the lock guards.
    @usableFromInline
    struct Guarded: Sendable {
        @usableFromInline var state: State
        /// In registration order (keys ascend), so a delivery hands them out as they are.
        @usableFromInline var observers: [Entry] = []
        @usableFromInline var nextKey: UInt64 = 0

        @inlinable
        init(state: State) { self.state = state }
    }

    /// A change to hand out once the lock is released. (A struct, not a tuple: where code
    /// runs unspecialized, a generic tuple's type metadata is looked up on every use.)
    @usableFromInline
    struct Delivery {
        @usableFromInline let event: Event
        @usableFromInline let observers: [Entry]

        @inlinable
        init(event: Event, observers: [Entry]) {
            self.event = event
            self.observers = observers
        }
    }

    @usableFromInline let guarded: Lock<Guarded>
    @usableFromInline let registrar = ObservationRegistrar()
    /// Whether the value was ever read through ``read(tracking:_:_:)``. Until it is, no
    /// `withObservationTracking` (or SwiftUI view) can be tracking it, so a change skips
    /// the registrar, a lock and a lookup of its own. Set before the read takes the lock,
    /// and tested after a change released it, so a first read either sees the new value
    /// or is told of the change.
    @usableFromInline let valueWasRead = Atomic<Bool>(false)

    /// A core holding `state`, with no observers.
    @inlinable
    package init(_ state: State) {
        guarded = Lock(Guarded(state: state))
    }

    deinit {
        let terminations = guarded.withLock { $0.observers.compactMap(\.onTermination) }
        for terminate in terminations { terminate() }
    }

    /// Reads the state under the lock, as a read of `subject`'s `keyPath` that
    /// `withObservationTracking` tracks. O(1) besides `body`.
    @inlinable
    package func read<Subject: Observable, Member, Result>(
        tracking subject: Subject, _ keyPath: KeyPath<Subject, Member>, _ body: (State) -> Result
    ) -> Result {
        if !valueWasRead.load(ordering: .relaxed) { valueWasRead.store(true, ordering: .sequentiallyConsistent) }
        registrar.access(subject, keyPath: keyPath)
        return guarded.withLock { body($0.state) }
    }

    /// Runs `body` on the state under the lock, untracked and telling no one.
    @inlinable
    package func withState<Result>(_ body: (inout State) -> Result) -> Result {
        guarded.withLock { body(&$0.state) }
    }

    /// Registers `handler` for each later change and calls `initial` with the state at
    /// registration, under the lock: `handler` then receives exactly the changes after it.
    /// `onTermination` runs when the core is released (a stream finishes).
    /// - Complexity: O(1) to register; O(observers) to cancel.
    @inlinable
    package func observe(
        startingWith initial: (State) -> Void, onTermination: (@Sendable () -> Void)?,
        _ handler: @escaping @Sendable (Event) -> Void
    ) -> Observation {
        let status = ObservationStatus()
        let key = guarded.withLock { guarded in
            let key = guarded.nextKey
            guarded.nextKey += 1
            guarded.observers.append(Entry(key: key, status: status, handler: handler, onTermination: onTermination))
            initial(guarded.state)
            return key
        }
        return Observation(status: status) { [weak self] in
            self?.guarded.withLock { $0.observers.removeAll { $0.key == key } }
        }
    }

    /// Applies `step` to the state under the lock. When it returns an event, tells
    /// Observation that `subject`'s `keyPath` changed and hands the event to the observers
    /// registered at that moment, in registration order, after releasing the lock (an
    /// observer may read the value: it sees the new one).
    @inlinable
    package func update<Subject: Observable, Member>(
        _ subject: Subject, _ keyPath: KeyPath<Subject, Member>, _ step: (inout State) -> Event?
    ) {
        // Unwrapped as it is returned, the delivery is moved out of its optional; kept in
        // a variable first, it would be copied out (a retain of each part) at every step.
        guard let delivery = guarded.withLock({ guarded -> Delivery? in
            guard let event = step(&guarded.state) else { return nil }
            return Delivery(event: event, observers: guarded.observers)
        }) else { return }
        if valueWasRead.load(ordering: .sequentiallyConsistent) { registrar.withMutation(of: subject, keyPath: keyPath) {} }
        for entry in delivery.observers where entry.status.isActive {
            entry.handler(delivery.event)
        }
    }
}

/// A value's change, as observers of ``Derived`` and of EntityStore's derived queries
/// receive it.
@usableFromInline
package struct ValueChange<Value: Sendable>: Sendable {
    @usableFromInline package let old: Value
    @usableFromInline package let new: Value

    @inlinable
    package init(old: Value, new: Value) {
        self.old = old
        self.new = new
    }
}
