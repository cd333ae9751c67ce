/*
 * svc-exec: starts a decoder inside its walls. Bun.spawn has no hook between fork and exec, so
 * the service starts this small program, which sets what must be set in the child itself and
 * then execs the decoder in its place (same pid, so the service's kill and wait still apply):
 *
 *   svc-exec PARENT_PID AS_BYTES CPU_SECONDS -- PROGRAM ARG...
 *
 * - PR_SET_PDEATHSIG(SIGKILL): the kernel kills the decoder when the thread that spawned it
 *   exits; the service spawns from its main thread, so that is when the service ends, however
 *   it ends (kill -9, the OOM killer). The signal survives exec.
 * - A service that died before the signal was set is caught by comparing the parent with the
 *   one named on the command line: this program then exits instead of starting the decoder.
 * - RLIMIT_AS (0: none): the decoder's share of the memory budget; an allocation past it fails
 *   and the decoder exits alone instead of growing the host.
 * - RLIMIT_CPU (0: none): seconds of CPU time; SIGXCPU at the limit, SIGKILL one second later.
 *
 * Exit status 126 when the arguments are wrong or a call fails, 127 when exec fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

static int parse_number(const char *text, unsigned long long *out) {
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0') return -1;
    *out = value;
    return 0;
}

static int fail(const char *what) {
    fprintf(stderr, "svc-exec: %s: %s\n", what, strerror(errno));
    return 126;
}

static int set_limit(int resource, rlim_t soft, rlim_t hard) {
    struct rlimit limit = {.rlim_cur = soft, .rlim_max = hard};
    return setrlimit(resource, &limit);
}

int main(int argc, char **argv) {
    unsigned long long parent = 0, address_space = 0, cpu_seconds = 0;
    if (argc < 6 || strcmp(argv[4], "--") != 0 || parse_number(argv[1], &parent) != 0 ||
        parse_number(argv[2], &address_space) != 0 || parse_number(argv[3], &cpu_seconds) != 0) {
        fprintf(stderr, "usage: svc-exec PARENT_PID AS_BYTES CPU_SECONDS -- PROGRAM ARG...\n");
        return 126;
    }
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return fail("prctl(PR_SET_PDEATHSIG)");
    // The parent may have died before the line above: then nobody would kill the decoder.
    if ((unsigned long long)getppid() != parent) return 126;
    if (address_space > 0 && set_limit(RLIMIT_AS, address_space, address_space) != 0)
        return fail("setrlimit(RLIMIT_AS)");
    if (cpu_seconds > 0 && set_limit(RLIMIT_CPU, cpu_seconds, cpu_seconds + 1) != 0)
        return fail("setrlimit(RLIMIT_CPU)");
    execv(argv[5], &argv[5]);
    fprintf(stderr, "svc-exec: cannot run %s: %s\n", argv[5], strerror(errno));
    return 127;
}
