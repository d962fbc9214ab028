import Foundation
import Testing
@testable import EntityStore

/// The comparison change detection uses: `==`, with floating point compared by bits.
@Suite struct ValueIdentityTests {
    enum Shape: Equatable { case dot, circle(radius: Double), pair(Double, String) }
    struct Inner: Equatable { var x: Double; var label: String }
    struct Row: Equatable {
        var id: Int
        var value: Double
        var optional: Double?
        var float: Float
        var inner: Inner
        var shape: Shape
        var list: [Double]
        var date: Date
        var tags: Set<String>
    }

    static let base = Row(
        id: 1, value: 0, optional: 0, float: 0, inner: Inner(x: 0, label: "a"), shape: .circle(radius: 0), list: [0, 1],
        date: Date(timeIntervalSinceReferenceDate: 0), tags: ["t"])

    @Test func equalValuesAreTheSame() {
        #expect(ValueIdentity.same(Self.base, Self.base))
        var copy = Self.base
        copy.tags = ["t"]
        #expect(ValueIdentity.same(Self.base, copy))
    }

    @Test("a zero of the other sign anywhere is a change", arguments: 0..<7)
    func zerosOfTheOtherSign(field: Int) {
        var flipped = Self.base
        switch field {
        case 0: flipped.value = -0.0
        case 1: flipped.optional = -0.0
        case 2: flipped.float = -0.0
        case 3: flipped.inner.x = -0.0
        case 4: flipped.shape = .circle(radius: -0.0)
        case 5: flipped.list = [-0.0, 1]
        default: flipped.date = Date(timeIntervalSinceReferenceDate: -0.0)
        }
        #expect(flipped == Self.base)
        #expect(!ValueIdentity.same(Self.base, flipped))
        #expect(!ValueIdentity.same(flipped, Self.base))
    }

    @Test func aNaNIsTheSameAsItselfButNotAsANumber() {
        var nan = Self.base
        nan.value = .nan
        nan.inner.x = .nan
        #expect(nan != nan)
        #expect(ValueIdentity.same(nan, nan))
        var other = nan
        other.inner.label = "b"
        #expect(!ValueIdentity.same(nan, other))
        var number = nan
        number.value = 1
        #expect(!ValueIdentity.same(nan, number))
        #expect(!ValueIdentity.same(number, nan))
    }

    @Test func optionalsAndEnumCases() {
        var none = Self.base
        none.optional = nil
        #expect(ValueIdentity.same(none, none))
        #expect(!ValueIdentity.same(none, Self.base))
        var dot = Self.base
        dot.shape = .dot
        #expect(!ValueIdentity.same(dot, Self.base))
        var pair = Self.base
        pair.shape = .pair(.nan, "x")
        #expect(ValueIdentity.same(pair, pair))
        var otherPair = pair
        otherPair.shape = .pair(.nan, "y")
        #expect(!ValueIdentity.same(pair, otherPair))
        #expect(ValueIdentity.same(Optional<Row>.none, nil))
        #expect(!ValueIdentity.same(Optional(Self.base), nil))
    }
}
