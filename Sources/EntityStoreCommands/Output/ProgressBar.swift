import Foundation
import StoreCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-line progress bar on standard error, drawn only when standard error is a
/// terminal and `--quiet` is not given; otherwise silent.
final class ProgressBar: Sendable {
    private let label: String
    private let enabled: Bool
    private let state = Lock<(shown: Int, lastDraw: ContinuousClock.Instant?)>((0, nil))

    init(_ label: String, quiet: Bool) {
        self.label = label
        self.enabled = !quiet && CommandOutput.isTerminal(STDERR_FILENO)
    }

    /// Shows `done` of `total`; redraws at most ten times a second.
    func update(_ done: Int, of total: Int) {
        guard enabled else { return }
        let now = ContinuousClock.now
        let draw = state.withLock { state -> Bool in
            if let last = state.lastDraw, now - last < .milliseconds(100), done < total { return false }
            state.lastDraw = now
            state.shown = done
            return true
        }
        guard draw else { return }
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 1
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
        CommandOutput.writeError("\r\(label) [\(bar)] \(Int(fraction * 100))% \(done)/\(total)")
    }

    /// Ends the bar's line.
    func finish() {
        guard enabled, state.withLock({ $0.lastDraw != nil }) else { return }
        CommandOutput.writeError("\n")
    }
}
