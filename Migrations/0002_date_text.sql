-- EntityStore snapshot format, version 2: dates are exact ISO 8601 text in UTC.
--
-- In version 1, columns of kind 'date' (as listed in entitystore_columns) held REAL
-- seconds since 1970-01-01T00:00:00Z, which rounds away the last bits of many dates. From
-- version 2 they hold text such as '2026-11-24T10:00:00.1234567+00:00', exact to the bit
-- (see docs/SnapshotFormat.md). SQL cannot visit the tables the metadata names, so the
-- library converts those columns in the code step it runs after this script, in the same
-- transaction (DateColumnsUpgrade in EntityStoreSQLite). This script does the part SQL can.
UPDATE entitystore_meta SET value = '2' WHERE key = 'format_version';
