/// How much of a change an assertion requires the test to describe.
public enum Exhaustivity: Sendable, Equatable {
    /// Every change must be described: a row, field, event or ID the description leaves
    /// out fails the assertion. The default: it catches unexpected cascades, nullified
    /// references and writes nobody meant.
    case exhaustive
    /// Only what the description touches is checked: each row it writes must hold the
    /// values it gives, each row it removes must be gone, each event or ID it lists must
    /// be there; everything else may change freely.
    case nonExhaustive
}
