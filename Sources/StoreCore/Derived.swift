import Observation

/// A memoized selector over a store (or over other `Derived` values).
///
/// It observes its sources synchronously, so it is up to date as soon as a commit's
/// delivery ran. It recomputes only when its input changed (by `==`) and notifies only when
/// its output changed. It keeps its sources alive and stops observing when deallocated.
///
/// It is `Observable`: reading ``value`` inside `withObservationTracking` (or a SwiftUI
/// view) tracks it, and a change of the output triggers the change.
public final class Derived<Value: Sendable>: Sendable, Observable {
    private struct State: Sendable {
        var value: Value
        var recomputations = 0
    }

    private let core: ObservableCore<State, ValueChange<Value>>
    private let isEqual: @Sendable (Value, Value) -> Bool
    private let upstream = Lock<[Observation]>([])
    /// Kept only to hold the sources alive as long as this value.
    private let sources: [any Sendable]
    /// `\.value`, made once: a key path into a generic class is instantiated at run time,
    /// which costs microseconds, on every use of the literal.
    private let valueKeyPath: any KeyPath<Derived, Value> & Sendable = \.value

    init(initial: Value, isEqual: @escaping @Sendable (Value, Value) -> Bool, sources: [any Sendable]) {
        self.core = ObservableCore(State(value: initial))
        self.isEqual = isEqual
        self.sources = sources
    }

    /// The current output.
    /// - Complexity: O(1).
    public var value: Value {
        core.read(tracking: self, valueKeyPath) { $0.value }
    }

    /// How many times the transform ran again after the initial computation, which is not
    /// counted (so 0 until an input changes), as for EntityStore's derived queries.
    /// - Complexity: O(1).
    public var recomputations: Int { core.withState { $0.recomputations } }

    /// Registers `handler` for each later change of the output.
    /// - Complexity: O(1) to register; O(n) in the number of observers to cancel.
    public func observe(_ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void) -> Observation {
        observe(startingWith: { _ in }, onTermination: nil, handler)
    }

    /// An `AsyncStream` of the output: the current value first, then each change. It ends
    /// when this `Derived` is deallocated; cancelling the consumer unregisters it.
    /// - Complexity: O(1) to register.
    public func values(
        bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: bufferingPolicy)
        let observation = observe(
            startingWith: { continuation.yield($0) }, onTermination: { continuation.finish() }
        ) { _, new in
            continuation.yield(new)
        }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    /// Registers `handler` and calls `initial` with the output at registration, atomically.
    func observe(
        startingWith initial: (Value) -> Void,
        onTermination: (@Sendable () -> Void)?,
        _ handler: @escaping @Sendable (_ old: Value, _ new: Value) -> Void
    ) -> Observation {
        core.observe(startingWith: { initial($0.value) }, onTermination: onTermination) { change in
            handler(change.old, change.new)
        }
    }

    /// Applies `update` to the memoized input; recomputes if it changed and notifies if the
    /// output changed.
    func receive<Input: Equatable>(
        memo: Memo<Input>, update: (inout Input) -> Void, transform: (Input) -> Value
    ) {
        let isEqual = isEqual
        core.update(self, valueKeyPath) { state -> ValueChange<Value>? in
            let input = memo.value.withLock { memo -> Input? in
                var next = memo
                update(&next)
                guard next != memo else { return nil }
                memo = next
                return next
            }
            guard let input else { return nil }
            let new = transform(input)
            state.recomputations += 1
            let old = state.value
            guard !isEqual(old, new) else { return nil }
            state.value = new
            return ValueChange(old: old, new: new)
        }
    }
}

/// The last input a `Derived` computed from.
final class Memo<Input: Sendable>: Sendable {
    let value: Lock<Input>
    init(_ value: Input) { self.value = Lock(value) }
}

extension Derived where Value: Equatable {
    /// Builds a `Derived` from an initial input and a subscription that feeds input updates.
    static func make<Input: Equatable & Sendable>(
        initialInput: Input,
        transform: @escaping @Sendable (Input) -> Value,
        sources: [any Sendable],
        subscribe: (_ receive: @escaping @Sendable (_ update: (inout Input) -> Void) -> Void) -> [Observation]
    ) -> Derived {
        let derived = Derived(initial: transform(initialInput), isEqual: { $0 == $1 }, sources: sources)
        let memo = Memo(initialInput)
        let observations = subscribe { [weak derived] update in
            derived?.receive(memo: memo, update: update, transform: transform)
        }
        derived.upstream.withLock { $0 = observations }
        return derived
    }

    /// A `Derived` of this one's output, memoized the same way.
    /// - Complexity: one `==` per change of this output; `transform` runs only on change.
    public func map<Output: Equatable & Sendable>(
        _ transform: @escaping @Sendable (Value) -> Output
    ) -> Derived<Output> {
        Derived<Output>.make(initialInput: value, transform: transform, sources: [self]) { receive in
            [
                observe(startingWith: { value in receive { $0 = value } }, onTermination: nil) { _, new in
                    receive { $0 = new }
                }
            ]
        }
    }

    /// A `Derived` combining two others. When both change in one delivery, the combiner may
    /// run once per source (use ``StateStore/derived(from:_:_:)`` on one store to avoid it).
    /// - Complexity: two `==` per source change; `transform` runs only on change.
    public static func combine<A: Equatable & Sendable, B: Equatable & Sendable>(
        _ a: Derived<A>, _ b: Derived<B>, _ transform: @escaping @Sendable (A, B) -> Value
    ) -> Derived<Value> {
        make(
            initialInput: Inputs2(a.value, b.value), transform: { transform($0.first, $0.second) },
            sources: [a, b]
        ) { receive in
            [
                a.observe(startingWith: { value in receive { $0.first = value } }, onTermination: nil) { _, new in
                    receive { $0.first = new }
                },
                b.observe(startingWith: { value in receive { $0.second = value } }, onTermination: nil) { _, new in
                    receive { $0.second = new }
                },
            ]
        }
    }

    /// A `Derived` combining three others (see ``combine(_:_:_:)``).
    /// - Complexity: three `==` per source change; `transform` runs only on change.
    public static func combine<A: Equatable & Sendable, B: Equatable & Sendable, C: Equatable & Sendable>(
        _ a: Derived<A>, _ b: Derived<B>, _ c: Derived<C>, _ transform: @escaping @Sendable (A, B, C) -> Value
    ) -> Derived<Value> {
        make(
            initialInput: Inputs3(a.value, b.value, c.value),
            transform: { transform($0.first, $0.second, $0.third) },
            sources: [a, b, c]
        ) { receive in
            [
                a.observe(startingWith: { value in receive { $0.first = value } }, onTermination: nil) { _, new in
                    receive { $0.first = new }
                },
                b.observe(startingWith: { value in receive { $0.second = value } }, onTermination: nil) { _, new in
                    receive { $0.second = new }
                },
                c.observe(startingWith: { value in receive { $0.third = value } }, onTermination: nil) { _, new in
                    receive { $0.third = new }
                },
            ]
        }
    }
}

/// Two memoized inputs.
struct Inputs2<First: Equatable & Sendable, Second: Equatable & Sendable>: Equatable, Sendable {
    var first: First
    var second: Second
    init(_ first: First, _ second: Second) {
        self.first = first
        self.second = second
    }
}

/// Three memoized inputs.
struct Inputs3<First: Equatable & Sendable, Second: Equatable & Sendable, Third: Equatable & Sendable>:
    Equatable, Sendable
{
    var first: First
    var second: Second
    var third: Third
    init(_ first: First, _ second: Second, _ third: Third) {
        self.first = first
        self.second = second
        self.third = third
    }
}
