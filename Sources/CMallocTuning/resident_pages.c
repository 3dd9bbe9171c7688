#include "malloc_tuning.h"

#if defined(__linux__)
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

long pushgate_release_clean_file_pages(void) {
    FILE *smaps = fopen("/proc/self/smaps", "re");
    if (!smaps) return -1;
    char line[4352];
    long released = 0;
    unsigned long start = 0, end = 0;
    int candidate = 0;
    while (fgets(line, sizeof line, smaps)) {
        unsigned long low, high, offset, inode;
        char perms[8], device[32], path[4096];
        path[0] = 0;
        int fields = sscanf(line, "%lx-%lx %7s %lx %31s %lu %4095s", &low, &high, perms, &offset, device, &inode, path);
        if (fields >= 6) {
            // A mapping's first line. Only mappings of files, never writable ones: their pages can only
            // be the file's, unless the program wrote to them before making them read-only (relocations),
            // which the mapping's Anonymous count below shows.
            start = low;
            end = high;
            candidate = fields == 7 && path[0] == '/' && perms[1] != 'w' && perms[3] == 'p';
            continue;
        }
        unsigned long anonymous;
        if (candidate && sscanf(line, "Anonymous: %lu kB", &anonymous) == 1) {
            if (anonymous == 0 && madvise((void *)start, end - start, MADV_DONTNEED) == 0) released += (long)(end - start);
            candidate = 0;
        }
    }
    fclose(smaps);
    return released;
}
#else
long pushgate_release_clean_file_pages(void) { return -1; }
#endif
