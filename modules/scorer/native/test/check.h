/* The native tests' shared harness. Output read by npm test and by svc-tester-report:
 *   FAIL file.c:LINE: condition: message   (stderr, one per failed check)
 *   PASS name: N checks | FAIL name: K of N checks failed   (stdout, one per case)
 *   N passed, M failed   (stdout, last line; exit status 0 only when M is 0) */
#ifndef SVC_TEST_CHECK_H
#define SVC_TEST_CHECK_H

#include <stdio.h>

static int passed, failed;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (cond) passed++;                                                 \
        else {                                                              \
            failed++;                                                       \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

static void report_case(const char *name, int passed_before, int failed_before) {
    int p = passed - passed_before, f = failed - failed_before;
    if (f) printf("FAIL %s: %d of %d checks failed\n", name, f, p + f);
    else printf("PASS %s: %d checks\n", name, p);
}

#define RUN_CASE(name, call)                                \
    do {                                                    \
        int passed_before = passed, failed_before = failed; \
        call;                                               \
        report_case(name, passed_before, failed_before);    \
    } while (0)

/* The summary line; returns the exit status. */
static int finish_checks(void) {
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

#endif
