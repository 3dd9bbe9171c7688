// The few SQLite C functions the embedded store calls directly, declared against the SQLite that
// sqlite-nio compiles into every build (its symbols carry the prefix sqlite_nio_): one SQLite in the
// binary, no system library needed. If sqlite-nio ever renames them, the link fails; nothing breaks
// silently.
#ifndef PUSHGATE_CSQLITE_BUNDLED_H
#define PUSHGATE_CSQLITE_BUNDLED_H

#include <stdint.h>

typedef struct pushgate_sqlite_db pushgate_sqlite_db;
typedef struct pushgate_sqlite_stmt pushgate_sqlite_stmt;

int sqlite_nio_sqlite3_open_v2(const char *filename, pushgate_sqlite_db **db, int flags, const char *vfs);
int sqlite_nio_sqlite3_close_v2(pushgate_sqlite_db *db);
const char *sqlite_nio_sqlite3_errmsg(pushgate_sqlite_db *db);
int sqlite_nio_sqlite3_extended_errcode(pushgate_sqlite_db *db);
int sqlite_nio_sqlite3_changes(pushgate_sqlite_db *db);
int64_t sqlite_nio_sqlite3_last_insert_rowid(pushgate_sqlite_db *db);
int sqlite_nio_sqlite3_prepare_v3(pushgate_sqlite_db *db, const char *sql, int bytes, unsigned int flags, pushgate_sqlite_stmt **statement, const char **tail);
int sqlite_nio_sqlite3_step(pushgate_sqlite_stmt *statement);
int sqlite_nio_sqlite3_reset(pushgate_sqlite_stmt *statement);
int sqlite_nio_sqlite3_clear_bindings(pushgate_sqlite_stmt *statement);
int sqlite_nio_sqlite3_finalize(pushgate_sqlite_stmt *statement);
int sqlite_nio_sqlite3_bind_parameter_count(pushgate_sqlite_stmt *statement);
int sqlite_nio_sqlite3_bind_int64(pushgate_sqlite_stmt *statement, int index, int64_t value);
int sqlite_nio_sqlite3_bind_double(pushgate_sqlite_stmt *statement, int index, double value);
int sqlite_nio_sqlite3_bind_null(pushgate_sqlite_stmt *statement, int index);
int sqlite_nio_sqlite3_bind_zeroblob(pushgate_sqlite_stmt *statement, int index, int bytes);
int sqlite_nio_sqlite3_bind_text(pushgate_sqlite_stmt *statement, int index, const char *text, int bytes, void (*destructor)(void *));
int sqlite_nio_sqlite3_bind_blob(pushgate_sqlite_stmt *statement, int index, const void *bytes, int count, void (*destructor)(void *));
int sqlite_nio_sqlite3_column_count(pushgate_sqlite_stmt *statement);
int sqlite_nio_sqlite3_column_type(pushgate_sqlite_stmt *statement, int column);
int64_t sqlite_nio_sqlite3_column_int64(pushgate_sqlite_stmt *statement, int column);
double sqlite_nio_sqlite3_column_double(pushgate_sqlite_stmt *statement, int column);
const unsigned char *sqlite_nio_sqlite3_column_text(pushgate_sqlite_stmt *statement, int column);
const void *sqlite_nio_sqlite3_column_blob(pushgate_sqlite_stmt *statement, int column);
int sqlite_nio_sqlite3_column_bytes(pushgate_sqlite_stmt *statement, int column);
int sqlite_nio_sqlite3_stmt_status(pushgate_sqlite_stmt *statement, int counter, int reset);
int sqlite_nio_sqlite3_db_config(pushgate_sqlite_db *db, int op, ...);

/// Turns on the query planner stability guarantee (SQLITE_DBCONFIG_ENABLE_QPSG, 1007): a statement's plan
/// no longer depends on the values bound to it, so binding another value (a LIMIT going from 1 to 2,
/// say) does not make SQLite prepare a kept statement again at its next step. Returns 0 when it is on.
static inline int pushgate_sqlite_enable_qpsg(pushgate_sqlite_db *db) {
    int enabled = 0;
    int result = sqlite_nio_sqlite3_db_config(db, 1007, 1, &enabled);
    if (result != 0) return result;
    return enabled == 1 ? 0 : 1;
}

/// Binds text that SQLite copies (SQLITE_TRANSIENT); an empty text stays text, not NULL.
static inline int pushgate_sqlite_bind_text_copy(pushgate_sqlite_stmt *statement, int index, const char *text, int bytes) {
    return sqlite_nio_sqlite3_bind_text(statement, index, text ? text : "", bytes, (void (*)(void *))(intptr_t)-1);
}

/// Binds bytes that SQLite copies (SQLITE_TRANSIENT); an empty blob stays a blob, not NULL.
static inline int pushgate_sqlite_bind_blob_copy(pushgate_sqlite_stmt *statement, int index, const void *bytes, int count) {
    if (count == 0 || bytes == 0) return sqlite_nio_sqlite3_bind_zeroblob(statement, index, 0);
    return sqlite_nio_sqlite3_bind_blob(statement, index, bytes, count, (void (*)(void *))(intptr_t)-1);
}

#endif
