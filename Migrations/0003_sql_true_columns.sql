-- EntityStore snapshot format, version 3: SQL-true columns.
--
-- In version 2, a field of a dynamic table that held a null anywhere was stored as JSON
-- text ('227.0', '"UA"', 'null'), so SQL on the file compared text. From version 3 such a
-- field keeps its kind's column (INTEGER, REAL, TEXT, or 0/1 for booleans) with NULL for
-- null, and entitystore_columns.nulls says what NULL means in each column:
--   'absent'  a missing field (typed tables; fields that are missing in some rows);
--   'null'    JSON null (every row has the field);
--   'either'  JSON null, unless the row's hidden column entitystore_absent (a JSON array
--             of field names) lists the field as missing.
-- See docs/SnapshotFormat.md. SQL cannot visit the tables the metadata names, so the
-- library converts the JSON columns that hold one kind of value plus nulls in the code
-- step it runs after this script, in the same transaction (SQLTrueColumnsUpgrade in
-- EntityStoreSQLite). This script does the part SQL can.
ALTER TABLE entitystore_columns ADD COLUMN nulls TEXT NOT NULL DEFAULT 'absent'
    CHECK (nulls IN ('absent', 'null', 'either'));
UPDATE entitystore_meta SET value = '3' WHERE key = 'format_version';
