/*
 * A strict JSON reader (RFC 8259) for model files: the whole text is one value, numbers are
 * finite and rounded as strtod rounds them, strings are UTF-8 with escapes decoded, nesting is
 * bounded. It knows nothing of models (model.c reads the values it returns).
 */
#ifndef SVC_JSON_H
#define SVC_JSON_H

#include <stddef.h>

typedef enum { J_NULL, J_FALSE, J_TRUE, J_NUM, J_STR, J_ARR, J_OBJ } jtype;

typedef struct jval {
    jtype t;
    double num;
    char *str;          /* J_STR: NUL-terminated */
    size_t len;
    int n;              /* J_ARR / J_OBJ: number of items */
    struct jval *items;
    char **keys;        /* J_OBJ: one key per item */
} jval;

/* Parses text[0, len) into *out (freed with svc_json_free); SVC_OK, or SVC_E_MODEL / SVC_E_NOMEM
 * with a message naming the line and column. */
int svc_json_parse(const char *text, size_t len, jval *out, char *err, size_t err_len);
void svc_json_free(jval *v);
/* The member of an object with that key, or NULL. */
const jval *svc_json_get(const jval *obj, const char *key);
/* strtod over exactly [s, s+len) (the text need not be NUL-terminated): 1 when the whole span is
 * one finite number. Also the libsvm text's numbers (model.c). */
int svc_strtod_exact(const char *s, size_t len, double *out);
/* "null", "a number", "an object", ...: for messages. */
const char *svc_json_type_name(jtype t);

#endif
