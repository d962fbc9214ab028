-- EntityStore snapshot format, version 1: the metadata tables that describe a snapshot.
-- Entity data lives in one table per entity type, created by the snapshot writer.

-- Free-form facts about the snapshot. Keys: format_version, app_schema_version, library, created_at.
CREATE TABLE entitystore_meta (
    key TEXT PRIMARY KEY NOT NULL CHECK (length(key) > 0),
    value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per entity table in the snapshot, in restore order (position).
CREATE TABLE entitystore_tables (
    name TEXT PRIMARY KEY NOT NULL CHECK (length(name) > 0),
    entity_type TEXT NOT NULL CHECK (length(entity_type) > 0),
    id_kind TEXT NOT NULL CHECK (length(id_kind) > 0),
    row_count INTEGER NOT NULL CHECK (row_count >= 0),
    position INTEGER NOT NULL UNIQUE CHECK (position >= 0)
);

-- The columns of each entity table, in declaration order (position).
CREATE TABLE entitystore_columns (
    table_name TEXT NOT NULL REFERENCES entitystore_tables(name),
    name TEXT NOT NULL CHECK (length(name) > 0),
    kind TEXT NOT NULL CHECK (length(kind) > 0),
    nullable INTEGER NOT NULL CHECK (nullable IN (0, 1)),
    position INTEGER NOT NULL CHECK (position >= 0),
    PRIMARY KEY (table_name, name),
    UNIQUE (table_name, position)
);

-- Secondary indexes declared on each entity table.
CREATE TABLE entitystore_indexes (
    table_name TEXT NOT NULL,
    name TEXT NOT NULL CHECK (length(name) > 0),
    kind TEXT NOT NULL CHECK (kind IN ('unique', 'grouped', 'ordered')),
    field TEXT NOT NULL CHECK (length(field) > 0),
    PRIMARY KEY (table_name, name)
);

-- Relations between entity tables and what happens to them when the target is deleted.
CREATE TABLE entitystore_relations (
    table_name TEXT NOT NULL,
    field TEXT NOT NULL CHECK (length(field) > 0),
    target_table TEXT NOT NULL CHECK (length(target_table) > 0),
    delete_rule TEXT NOT NULL CHECK (delete_rule IN ('cascade', 'nullify', 'restrict', 'none')),
    PRIMARY KEY (table_name, field)
);

-- The application's own schema migrations that the stored data has been through.
CREATE TABLE entitystore_app_migrations (
    version INTEGER PRIMARY KEY NOT NULL CHECK (version >= 1),
    name TEXT NOT NULL CHECK (length(name) > 0)
);
