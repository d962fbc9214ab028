import Foundation

/// A seeded random number generator (SplitMix64): the same seed gives the same values on
/// every machine and run, so a failing generated case can be replayed from its seed.
public struct SeededRandomness: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits. O(1).
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An integer in `range`. O(1).
    public mutating func int(in range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// An integer in `range`; `range` must not be empty. O(1).
    public mutating func int(in range: Range<Int>) -> Int { Int.random(in: range, using: &self) }

    /// A double in `range`. O(1).
    public mutating func double(in range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &self) }

    /// True with probability `probability`. O(1).
    public mutating func bool(_ probability: Double = 0.5) -> Bool { Double.random(in: 0..<1, using: &self) < probability }

    /// One of `elements`, or nil if it is empty. O(1).
    public mutating func element<C: Collection>(of elements: C) -> C.Element? { elements.randomElement(using: &self) }

    /// `value()` with probability `probability`, else nil. O(1) plus `value`.
    public mutating func optional<T>(_ probability: Double = 0.75, _ value: (inout SeededRandomness) -> T) -> T? {
        bool(probability) ? value(&self) : nil
    }

    /// A word of `length` letters from `alphabet` (by default lowercase ASCII letters,
    /// with a few accented and non-Latin ones, so text handling is exercised).
    /// - Complexity: O(length).
    public mutating func word(length: ClosedRange<Int> = 3...10, alphabet: [Character] = SeededRandomness.letters) -> String {
        let count = int(in: length)
        var text = ""
        for _ in 0..<count { text.append(element(of: alphabet) ?? "a") }
        return text
    }

    /// Words separated by spaces. O(total length).
    public mutating func words(_ count: ClosedRange<Int> = 1...4) -> String {
        (0..<int(in: count)).map { _ in word() }.joined(separator: " ")
    }

    /// A date between `range`'s bounds, whole seconds. O(1).
    public mutating func date(in range: ClosedRange<Date> = Date(timeIntervalSince1970: 0)...Date(timeIntervalSince1970: 2_000_000_000)) -> Date {
        let seconds = Int.random(
            in: Int(range.lowerBound.timeIntervalSince1970)...Int(range.upperBound.timeIntervalSince1970), using: &self)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Lowercase ASCII letters with `é`, `ß`, `Ω` and `漢`.
    public static let letters: [Character] = Array("abcdefghijklmnopqrstuvwxyz") + ["é", "ß", "Ω", "漢"]
}
