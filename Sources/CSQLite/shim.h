#ifndef ENTITYSTORE_CSQLITE_SHIM_H
#define ENTITYSTORE_CSQLITE_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT and SQLITE_STATIC are casts of -1 and 0 to a function pointer,
// which Swift does not import. These wrappers make them callable from Swift.
// TRANSIENT makes SQLite copy the bytes before the call returns, so Swift may pass
// pointers that are only valid for the duration of the call.

static inline int es_bind_text_transient(sqlite3_stmt *stmt, int index, const char *text, sqlite3_uint64 length) {
    return sqlite3_bind_text64(stmt, index, text, length, SQLITE_TRANSIENT, SQLITE_UTF8);
}

static inline int es_bind_blob_transient(sqlite3_stmt *stmt, int index, const void *bytes, sqlite3_uint64 length) {
    return sqlite3_bind_blob64(stmt, index, bytes, length, SQLITE_TRANSIENT);
}

static inline int es_bind_text_static(sqlite3_stmt *stmt, int index, const char *text, sqlite3_uint64 length) {
    return sqlite3_bind_text64(stmt, index, text, length, SQLITE_STATIC, SQLITE_UTF8);
}

static inline int es_bind_blob_static(sqlite3_stmt *stmt, int index, const void *bytes, sqlite3_uint64 length) {
    return sqlite3_bind_blob64(stmt, index, bytes, length, SQLITE_STATIC);
}

// The same for results of application-defined SQL functions.
static inline void es_result_text_transient(sqlite3_context *context, const char *text, sqlite3_uint64 length) {
    sqlite3_result_text64(context, text, length, SQLITE_TRANSIENT, SQLITE_UTF8);
}

static inline void es_result_blob_transient(sqlite3_context *context, const void *bytes, sqlite3_uint64 length) {
    sqlite3_result_blob64(context, bytes, length, SQLITE_TRANSIENT);
}

// sqlite3_db_config is variadic; this wrapper covers the integer on/off options.
static inline int es_db_config_int(sqlite3 *db, int option, int value, int *result) {
    return sqlite3_db_config(db, option, value, result);
}

#endif
