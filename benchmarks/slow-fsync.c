/*
 * A slower disk for the benchmarks: loaded into the gateway with LD_PRELOAD (benchmarks/frontends-lib.sh
 * does it when SLOW_FSYNC_US is set), it makes every fsync and fdatasync wait SLOW_FSYNC_US microseconds
 * more after the real call returns. This VM's disk syncs in about 0.3 ms; a cloud volume or an SSD that
 * honours flushes takes one to a few milliseconds, and the SQLite store's commits, which wait for them,
 * then set how fast an answer that waits for a commit can come.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static void pause_after_sync(void) {
    static long delay = -1;
    if (delay < 0) {
        const char *value = getenv("SLOW_FSYNC_US");
        delay = value ? atol(value) : 0;
    }
    if (delay > 0) {
        struct timespec pause = {delay / 1000000, (delay % 1000000) * 1000};
        nanosleep(&pause, NULL);
    }
}

int fsync(int fd) {
    if (!real_fsync) real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    int result = real_fsync(fd);
    pause_after_sync();
    return result;
}

int fdatasync(int fd) {
    if (!real_fdatasync) real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    int result = real_fdatasync(fd);
    pause_after_sync();
    return result;
}
