/* For benchmarks/callgrind.sh: an LD_PRELOAD shim that hands sigsuspend() a writable copy of its mask.
 *
 * libdispatch's signal thread (dispatch_main, which `pushgate serve` parks its main thread in) calls
 * sigsuspend() with a mask in read-only memory; Valgrind 3.19 (Debian 12) edits the mask it is given to
 * keep its own signal unblocked and so dies with "VALGRIND INTERNAL ERROR: Valgrind received a signal 11"
 * (SEGV_ACCERR inside libdispatch) before the gateway starts. Same call, same signals, writable memory.
 *
 *   cc -shared -fPIC -O2 -o sigsuspend.so benchmarks/valgrind-sigsuspend.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>

int sigsuspend(const sigset_t *mask) {
    static int (*real)(const sigset_t *);
    if (!real) real = (int (*)(const sigset_t *))dlsym(RTLD_NEXT, "sigsuspend");
    sigset_t copy = *mask;
    return real(&copy);
}
