/* The JSON reader (json.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "json.h"

#define JSON_MAX_DEPTH 64

typedef struct {
    const char *start, *p, *end;
    int depth;
    char *err;
    size_t err_len;
} jparser;

const char *svc_json_type_name(jtype t) {
    static const char *const names[] = { "null", "false", "true", "a number", "a string",
                                         "an array", "an object" };
    return names[t];
}

void svc_json_free(jval *v) {
    if (v->t == J_STR) free(v->str);
    if (v->t == J_ARR || v->t == J_OBJ) {
        for (int i = 0; i < v->n; i++) {
            svc_json_free(&v->items[i]);
            if (v->keys) free(v->keys[i]);
        }
        free(v->items);
        free(v->keys);
    }
    memset(v, 0, sizeof *v);
}

static int jerr(jparser *ps, const char *what) {
    int line = 1, col = 1;
    for (const char *c = ps->start; c < ps->p; c++) {
        if (*c == '\n') { line++; col = 1; } else col++;
    }
    svc_set_err(ps->err, ps->err_len, "model JSON: %s at line %d column %d", what, line, col);
    return SVC_E_MODEL;
}

static void skip_ws(jparser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int parse_value(jparser *ps, jval *out);

static int hex4(jparser *ps, unsigned *out) {
    if (ps->end - ps->p < 4) return jerr(ps, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        const char c = *ps->p++;
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else { ps->p--; return jerr(ps, "bad hex digit in \\u escape"); }
    }
    *out = v;
    return SVC_OK;
}

/* Parses a string starting at the opening quote; the result is NUL-terminated UTF-8. */
static int parse_string(jparser *ps, char **out, size_t *out_len) {
    ps->p++; /* opening quote */
    /* Escapes only shrink the text, so the raw span bounds the decoded size. */
    const char *q = ps->p;
    while (q < ps->end && *q != '"') q += (*q == '\\' && q + 1 < ps->end) ? 2 : 1;
    if (q >= ps->end) return jerr(ps, "unterminated string");
    char *buf = malloc((size_t)(q - ps->p) + 1);
    if (!buf) return SVC_E_NOMEM;
    size_t n = 0;
    int rc = SVC_OK;
    while (*ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p;
        if (c < 0x20) { rc = jerr(ps, "control character in string"); break; }
        if (c != '\\') { buf[n++] = (char)c; ps->p++; continue; }
        ps->p++;
        const char e = *ps->p++;
        switch (e) {
        case '"': buf[n++] = '"'; break;
        case '\\': buf[n++] = '\\'; break;
        case '/': buf[n++] = '/'; break;
        case 'b': buf[n++] = '\b'; break;
        case 'f': buf[n++] = '\f'; break;
        case 'n': buf[n++] = '\n'; break;
        case 'r': buf[n++] = '\r'; break;
        case 't': buf[n++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if ((rc = hex4(ps, &cp)) != SVC_OK) break;
            if (cp >= 0xDC00 && cp <= 0xDFFF) { rc = jerr(ps, "lone low surrogate in \\u escape"); break; }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u') {
                    rc = jerr(ps, "high surrogate not followed by a low surrogate");
                    break;
                }
                ps->p += 2;
                if ((rc = hex4(ps, &lo)) != SVC_OK) break;
                if (lo < 0xDC00 || lo > 0xDFFF) { rc = jerr(ps, "high surrogate not followed by a low surrogate"); break; }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (cp == 0) { rc = jerr(ps, "\\u0000 in string"); break; }
            if (cp < 0x80) buf[n++] = (char)cp;
            else if (cp < 0x800) {
                buf[n++] = (char)(0xC0 | (cp >> 6));
                buf[n++] = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                buf[n++] = (char)(0xE0 | (cp >> 12));
                buf[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                buf[n++] = (char)(0x80 | (cp & 0x3F));
            } else {
                buf[n++] = (char)(0xF0 | (cp >> 18));
                buf[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                buf[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                buf[n++] = (char)(0x80 | (cp & 0x3F));
            }
            break;
        }
        default: ps->p--; rc = jerr(ps, "invalid escape in string"); break;
        }
        if (rc != SVC_OK) break;
    }
    if (rc != SVC_OK) { free(buf); return rc; }
    ps->p++; /* closing quote */
    buf[n] = '\0';
    *out = buf;
    *out_len = n;
    return SVC_OK;
}

/* strtod over exactly [s, s+len) (the text need not be NUL-terminated): 1 when the whole span
 * is one finite number. strtod rounds correctly, as the reference's parsers do. */
int svc_strtod_exact(const char *s, size_t len, double *out) {
    char small[64], *tok = small;
    if (len >= sizeof small && !(tok = malloc(len + 1))) return 0;
    memcpy(tok, s, len);
    tok[len] = '\0';
    errno = 0;
    char *endp;
    *out = strtod(tok, &endp);
    const int ok = len > 0 && endp == tok + len && !(errno == ERANGE && isinf(*out)) && isfinite(*out);
    if (tok != small) free(tok);
    return ok;
}

static int parse_number(jparser *ps, jval *out) {
    const char *s = ps->p, *q = ps->p;
    if (q < ps->end && *q == '-') q++;
    if (q < ps->end && *q == '0') q++;
    else if (q < ps->end && *q >= '1' && *q <= '9') while (q < ps->end && *q >= '0' && *q <= '9') q++;
    else return jerr(ps, "invalid number");
    if (q < ps->end && *q == '.') {
        q++;
        if (q >= ps->end || *q < '0' || *q > '9') { ps->p = q; return jerr(ps, "digit expected after '.'"); }
        while (q < ps->end && *q >= '0' && *q <= '9') q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-')) q++;
        if (q >= ps->end || *q < '0' || *q > '9') { ps->p = q; return jerr(ps, "digit expected in exponent"); }
        while (q < ps->end && *q >= '0' && *q <= '9') q++;
    }
    if (!svc_strtod_exact(s, (size_t)(q - s), &out->num)) return jerr(ps, "number out of range");
    ps->p = q;
    out->t = J_NUM;
    return SVC_OK;
}

static int literal(jparser *ps, const char *word, jtype t, jval *out) {
    const size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return jerr(ps, "unexpected character");
    ps->p += n;
    out->t = t;
    return SVC_OK;
}

/* Appends one zeroed item (and key slot for objects) to a container. */
static jval *grow(jval *c, int *cap) {
    if (c->n == *cap) {
        const int nc = *cap ? 2 * *cap : 8;
        jval *items = realloc(c->items, sizeof *items * (size_t)nc);
        if (!items) return NULL;
        c->items = items;
        if (c->t == J_OBJ) {
            char **keys = realloc(c->keys, sizeof *keys * (size_t)nc);
            if (!keys) return NULL;
            c->keys = keys;
        }
        *cap = nc;
    }
    jval *v = &c->items[c->n];
    memset(v, 0, sizeof *v);
    if (c->t == J_OBJ) c->keys[c->n] = NULL;
    c->n++;
    return v;
}

static int parse_container(jparser *ps, jval *out, int is_obj) {
    if (++ps->depth > JSON_MAX_DEPTH) return jerr(ps, "nesting too deep");
    const char close = is_obj ? '}' : ']';
    out->t = is_obj ? J_OBJ : J_ARR;
    int cap = 0, rc = SVC_OK;
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return SVC_OK;
    }
    for (;;) {
        jval *item = grow(out, &cap);
        if (!item) return SVC_E_NOMEM;
        if (is_obj) {
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != '"') return jerr(ps, ps->p >= ps->end ? "truncated object" : "expected a string key");
            char *key;
            size_t klen;
            if ((rc = parse_string(ps, &key, &klen)) != SVC_OK) return rc;
            out->keys[out->n - 1] = key;
            for (int i = 0; i < out->n - 1; i++)
                if (strcmp(out->keys[i], key) == 0) return jerr(ps, "duplicate key in object");
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') return jerr(ps, "expected ':' after key");
            ps->p++;
        }
        if ((rc = parse_value(ps, item)) != SVC_OK) return rc;
        skip_ws(ps);
        if (ps->p >= ps->end) return jerr(ps, is_obj ? "truncated object" : "truncated array");
        if (*ps->p == ',') { ps->p++; continue; }
        if (*ps->p == close) { ps->p++; break; }
        return jerr(ps, is_obj ? "expected ',' or '}' in object" : "expected ',' or ']' in array");
    }
    ps->depth--;
    return SVC_OK;
}

static int parse_value(jparser *ps, jval *out) {
    skip_ws(ps);
    if (ps->p >= ps->end) return jerr(ps, "unexpected end of input");
    switch (*ps->p) {
    case '{': return parse_container(ps, out, 1);
    case '[': return parse_container(ps, out, 0);
    case '"': out->t = J_STR; return parse_string(ps, &out->str, &out->len);
    case 't': return literal(ps, "true", J_TRUE, out);
    case 'f': return literal(ps, "false", J_FALSE, out);
    case 'n': return literal(ps, "null", J_NULL, out);
    default: return *ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9') ? parse_number(ps, out)
                                                                      : jerr(ps, "unexpected character");
    }
}

int svc_json_parse(const char *text, size_t len, jval *out, char *err, size_t err_len) {
    jparser ps = { .start = text, .p = text, .end = text + len, .err = err, .err_len = err_len };
    memset(out, 0, sizeof *out);
    int rc = parse_value(&ps, out);
    if (rc == SVC_OK) {
        skip_ws(&ps);
        if (ps.p != ps.end) rc = jerr(&ps, "trailing content after the JSON value");
    }
    if (rc != SVC_OK) svc_json_free(out);
    if (rc == SVC_E_NOMEM) svc_set_err(err, err_len, "out of memory parsing the model JSON");
    return rc;
}

const jval *svc_json_get(const jval *obj, const char *key) {
    for (int i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
    return NULL;
}
