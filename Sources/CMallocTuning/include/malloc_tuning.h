#ifndef PUSHGATE_MALLOC_TUNING_H
#define PUSHGATE_MALLOC_TUNING_H

#include <stddef.h>

/// Caps how many arenas glibc's malloc creates (each thread that finds the arenas busy makes one more, up
/// to eight per core by default). Returns 1 when the limit was set, 0 when it was not (another C library,
/// or glibc refused it).
int pushgate_limit_malloc_arenas(int count);

/// Drops from the process's resident set the pages of its read-only private file mappings (code and
/// constant data of the executable and its libraries) that hold nothing but the file's contents: they
/// stay in the kernel's page cache, and a later access maps them again with a minor fault. A mapping with
/// any page the process changed (relocated data made read-only afterwards) is left alone. Returns the
/// bytes of the mappings released, or -1 where this is not possible (not Linux, no /proc).
long pushgate_release_clean_file_pages(void);

/// Whether jemalloc serves the process's allocations (linked in by the package's Jemalloc trait, or
/// preloaded): 1 when one allocation shows in jemalloc's count of the thread's bytes, else 0.
int pushgate_jemalloc_serves_malloc(void);

/// jemalloc's version, NUL-terminated and cut to fit, written into `buffer`: returns 1, or 0 when jemalloc
/// is not loaded. Whether it serves the allocations is ``pushgate_jemalloc_serves_malloc``'s question.
int pushgate_jemalloc_version(char *buffer, size_t capacity);

/// How many arenas jemalloc has, or -1 when jemalloc is not loaded.
int pushgate_jemalloc_arenas(void);

#endif
