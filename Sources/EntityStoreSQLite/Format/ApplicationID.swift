/// The SQLite `application_id` header value that marks a file as an EntityStore snapshot.
///
/// It is the ASCII text `"EnSt"` read as a big-endian 32-bit integer (0x456E5374), so
/// tools such as `file(1)` or `sqlite3 .dbinfo` can tell snapshots apart from other
/// SQLite databases without opening their tables.
public let entityStoreApplicationID: Int32 = 0x456E_5374
