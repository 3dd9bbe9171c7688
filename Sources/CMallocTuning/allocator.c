#include "malloc_tuning.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(PUSHGATE_JEMALLOC)
// Read by jemalloc when it starts (before main), in the builds of the package's Jemalloc trait. Two arenas
// instead of jemalloc's four a core: every thread keeps a cache of small blocks of its own, so the arenas'
// locks are seldom taken, and each arena keeps free memory of its own, as glibc's do (benchmarks/README.md,
// 2026-12-01, morning). MALLOC_CONF in the environment is read after it, and wins.
const char *malloc_conf = "narenas:2";
#endif

#if defined(__linux__)
#include <dlfcn.h>

// jemalloc's control function, wherever jemalloc came from (linked in by the trait, or preloaded).
static int pushgate_mallctl(const char *name, void *oldp, size_t *oldlenp) {
    typedef int (*mallctl_function)(const char *, void *, size_t *, void *, size_t);
    mallctl_function function = (mallctl_function)dlsym(RTLD_DEFAULT, "mallctl");
    return function ? function(name, oldp, oldlenp, NULL, 0) : -1;
}
#else
static int pushgate_mallctl(const char *name, void *oldp, size_t *oldlenp) {
    (void)name;
    (void)oldp;
    (void)oldlenp;
    return -1;
}
#endif

// Present is not enough (a library linked after the C library would never be asked), so one allocation
// must show in jemalloc's count of this thread's bytes.
int pushgate_jemalloc_serves_malloc(void) {
    uint64_t *allocated = NULL;
    size_t length = sizeof allocated;
    if (pushgate_mallctl("thread.allocatedp", &allocated, &length) != 0 || allocated == NULL) return 0;
    // Read through volatile: the compiler takes malloc to leave the program's memory alone.
    volatile uint64_t *count = allocated;
    uint64_t before = *count;
    void *volatile block = malloc(4096);
    uint64_t after = *count;
    free(block);
    return after > before;
}

int pushgate_jemalloc_version(char *buffer, size_t capacity) {
    const char *version = NULL;
    size_t length = sizeof version;
    if (capacity == 0 || pushgate_mallctl("version", &version, &length) != 0 || version == NULL) return 0;
    strncpy(buffer, version, capacity - 1);
    buffer[capacity - 1] = 0;
    return 1;
}

int pushgate_jemalloc_arenas(void) {
    unsigned arenas = 0;
    size_t length = sizeof arenas;
    return pushgate_mallctl("arenas.narenas", &arenas, &length) == 0 ? (int)arenas : -1;
}
