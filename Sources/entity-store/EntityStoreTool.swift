import ArgumentParser
import EntityStoreCommands

/// The `entity-store` command-line tool.
@main
struct EntityStoreTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entity-store",
        abstract: "Work with EntityStore datasets.",
        subcommands: [DemoCommand.self])
}
