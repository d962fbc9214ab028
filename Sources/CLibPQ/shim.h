#ifndef ENTITYSTORE_CLIBPQ_SHIM_H
#define ENTITYSTORE_CLIBPQ_SHIM_H

// libpq, PostgreSQL's own client library (Debian: libpq-dev). EntityStorePostgres imports
// it only when the PostgreSQL trait is on.
#include <libpq-fe.h>

// The diagnostic field codes are macros of character literals, which Swift does not import.
static inline int es_pg_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int es_pg_diag_severity(void) { return PG_DIAG_SEVERITY_NONLOCALIZED; }
static inline int es_pg_diag_message(void) { return PG_DIAG_MESSAGE_PRIMARY; }
static inline int es_pg_diag_detail(void) { return PG_DIAG_MESSAGE_DETAIL; }
static inline int es_pg_diag_source_function(void) { return PG_DIAG_SOURCE_FUNCTION; }

// A notice processor that drops the server's notices (libpq prints them on stderr).
static void es_pg_ignore_notice(void *arg, const char *message) { (void)arg; (void)message; }
static inline void es_pg_silence_notices(PGconn *conn) { PQsetNoticeProcessor(conn, es_pg_ignore_notice, 0); }

#endif
