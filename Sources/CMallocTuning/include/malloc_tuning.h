#ifndef PUSHGATE_MALLOC_TUNING_H
#define PUSHGATE_MALLOC_TUNING_H

/// Caps how many arenas glibc's malloc creates (each thread that finds the arenas busy makes one more, up
/// to eight per core by default). Returns 1 when the limit was set, 0 when it was not (another C library,
/// or glibc refused it).
int pushgate_limit_malloc_arenas(int count);

#endif
