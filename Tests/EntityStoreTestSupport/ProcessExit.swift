import Foundation

extension Process {
    /// Waits for the process to end, looking every millisecond. Foundation's
    /// `waitUntilExit()` on Linux runs a run loop in 50 ms steps, so it adds up to 50 ms to
    /// every child a test waits for, already ended or not (close to a minute over the
    /// suite's thousand runs of the tool). Call it on a thread of its own, as every wait.
    public func waitForExit() {
        while isRunning { usleep(1_000) }
    }
}
