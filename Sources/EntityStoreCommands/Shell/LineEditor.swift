/// The state of one line being edited at a terminal prompt, with history: pure, so every
/// key's effect is testable without a terminal. ``TerminalLineReader`` feeds it keys.
struct LineEditor {
    /// A key, decoded from the terminal's bytes.
    enum Key: Equatable {
        case character(Character)
        case enter, backspace, delete, left, right, up, down, home, end, interrupt, endOfInput, clearToEnd
    }

    /// What a key did to the line.
    enum Outcome: Equatable {
        /// The line is still being edited.
        case editing
        /// Enter: the line is complete.
        case submitted(String)
        /// Ctrl-C: the line is abandoned.
        case cancelled
        /// Ctrl-D on an empty line: no more input.
        case finished
    }

    private(set) var characters: [Character] = []
    /// The cursor's position in `characters`.
    private(set) var cursor = 0
    /// Earlier lines, oldest first.
    private(set) var history: [String]
    /// Which history entry is shown; `history.count` is the line being typed.
    private var historyPosition: Int
    /// The line being typed, kept while history is browsed.
    private var draft: [Character] = []

    init(history: [String] = []) {
        self.history = history
        historyPosition = history.count
    }

    var line: String { String(characters) }

    mutating func handle(_ key: Key) -> Outcome {
        switch key {
        case .character(let character):
            characters.insert(character, at: cursor)
            cursor += 1
        case .backspace:
            if cursor > 0 {
                cursor -= 1
                characters.remove(at: cursor)
            }
        case .delete:
            if cursor < characters.count { characters.remove(at: cursor) }
        case .left: cursor = max(0, cursor - 1)
        case .right: cursor = min(characters.count, cursor + 1)
        case .home: cursor = 0
        case .end: cursor = characters.count
        case .clearToEnd: characters.removeSubrange(cursor...)
        case .up:
            guard historyPosition > 0 else { break }
            if historyPosition == history.count { draft = characters }
            historyPosition -= 1
            show(Array(history[historyPosition]))
        case .down:
            guard historyPosition < history.count else { break }
            historyPosition += 1
            show(historyPosition == history.count ? draft : Array(history[historyPosition]))
        case .enter:
            let submitted = line
            if !submitted.trimmingSpaces.isEmpty, history.last != submitted { history.append(submitted) }
            reset()
            return .submitted(submitted)
        case .interrupt:
            reset()
            return .cancelled
        case .endOfInput:
            if characters.isEmpty { return .finished }
            if cursor < characters.count { characters.remove(at: cursor) }
        }
        return .editing
    }

    private mutating func show(_ line: [Character]) {
        characters = line
        cursor = line.count
    }

    private mutating func reset() {
        characters = []
        cursor = 0
        draft = []
        historyPosition = history.count
    }
}

/// Decodes a terminal's input bytes into ``LineEditor/Key``s: UTF-8 characters, control
/// keys and the common escape sequences of arrow, home, end and delete keys.
struct KeyDecoder {
    private var pending: [UInt8] = []

    /// Feeds one byte; returns the key it completes, if any.
    mutating func feed(_ byte: UInt8) -> LineEditor.Key? {
        pending.append(byte)
        if pending[0] == 0x1B { return escapeSequence() }
        if pending.count == 1 {
            switch byte {
            case 0x0D, 0x0A: pending = []; return .enter
            case 0x7F, 0x08: pending = []; return .backspace
            case 0x01: pending = []; return .home
            case 0x05: pending = []; return .end
            case 0x02: pending = []; return .left
            case 0x06: pending = []; return .right
            case 0x10: pending = []; return .up
            case 0x0E: pending = []; return .down
            case 0x03: pending = []; return .interrupt
            case 0x04: pending = []; return .endOfInput
            case 0x0B: pending = []; return .clearToEnd
            case 0x00..<0x20: pending = []; return nil
            default: break
            }
        }
        // A UTF-8 sequence: complete when its lead byte says so.
        let lead = pending[0]
        let length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
        guard pending.count >= length else { return nil }
        defer { pending = [] }
        guard let text = String(validating: pending, as: UTF8.self), let character = text.first else { return nil }
        return .character(character)
    }

    private mutating func escapeSequence() -> LineEditor.Key? {
        guard pending.count >= 2 else { return nil }
        guard pending[1] == UInt8(ascii: "[") || pending[1] == UInt8(ascii: "O") else {
            pending = []
            return nil
        }
        guard pending.count >= 3 else { return nil }
        let final = pending[pending.count - 1]
        // Parameters are digits and ';'; a sequence ends with a letter or '~'.
        guard (0x40...0x7E).contains(final) else { return pending.count > 8 ? reset() : nil }
        let sequence = pending
        pending = []
        switch (sequence.count, final) {
        case (3, UInt8(ascii: "A")): return .up
        case (3, UInt8(ascii: "B")): return .down
        case (3, UInt8(ascii: "C")): return .right
        case (3, UInt8(ascii: "D")): return .left
        case (3, UInt8(ascii: "H")): return .home
        case (3, UInt8(ascii: "F")): return .end
        case (_, UInt8(ascii: "~")):
            switch sequence.dropFirst(2).dropLast() {
            case [UInt8(ascii: "3")]: return .delete
            case [UInt8(ascii: "1")], [UInt8(ascii: "7")]: return .home
            case [UInt8(ascii: "4")], [UInt8(ascii: "8")]: return .end
            default: return nil
            }
        default: return nil
        }
    }

    private mutating func reset() -> LineEditor.Key? {
        pending = []
        return nil
    }
}
