/* Helpers of the native tests that read a data folder holding models/ and fixtures/ (the test
 * run lays one out from modules/scorer/models and test/fixtures): data_dir, its path (set from
 * argv[1] by main), path() and slurp(). */
#ifndef SVC_TEST_SUPPORT_H
#define SVC_TEST_SUPPORT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static char data_dir[512] = ".";

/* data_dir/rel, in one of 8 rotating buffers (so a call can take several paths). */
static char *path(const char *rel) {
    static char bufs[8][640];
    static int next;
    char *b = bufs[next++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", data_dir, rel);
    return b;
}

/* The whole file p, NUL-terminated (len excludes the NUL); NULL when it cannot be read. */
static void *slurp(const char *p, size_t *len) {
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

#endif
