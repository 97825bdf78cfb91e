#ifndef HEARTH_CSQLITE_SHIM_H
#define HEARTH_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast macro Swift cannot import. */
static inline sqlite3_destructor_type hearth_sqlite_transient(void) { return SQLITE_TRANSIENT; }

/* sqlite3_config is variadic. */
static inline int hearth_sqlite_config_multithread(void) { return sqlite3_config(SQLITE_CONFIG_MULTITHREAD); }
#endif
