/*
 * VMAF models in the reference library's JSON format: a strict JSON parser, the embedded libsvm
 * text model, and per-frame prediction computed in the reference's order and precision.
 *
 * Prediction (as libvmaf's predict.c / libsvm's svm_predict for nu_svr):
 *   x_j  = slope[j+1] * feature_j + intercept[j+1]          (linear_rescale; none: x_j = feature_j)
 *   k_s  = exp(-gamma * sum_j (x_j - sv_s,j)^2)               (sum in index order, missing = 0)
 *   y    = (sum_s coef_s * k_s) - rho                         (summed in support-vector order)
 *   y    = (y - intercept[0]) / slope[0]                      (linear_rescale)
 *   y    = score_transform(y)  only when score_transform.enabled is true (see below)
 *   y    = clamp(y, score_clip)                               when score_clip is present
 * Missing libsvm indexes are stored as 0: (x - 0)^2 == x*x exactly, so the dense sum is
 * bit-identical to libsvm's sparse merge.
 *
 * libvmaf applies score_transform only when the caller passes its enable_transform model flag,
 * which its CLI leaves off (the goldens match the untransformed score). The ABI has no such
 * option, so the model file decides: "score_transform": {"enabled": true, ...} turns it on.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define JSON_MAX_DEPTH 64

/* ---------------------------------------------------------------- JSON ---- */

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

typedef struct {
    const char *start, *p, *end;
    int depth;
    char *err;
    size_t err_len;
} jparser;

static const char *jtype_name(jtype t) {
    static const char *const names[] = { "null", "false", "true", "a number", "a string",
                                         "an array", "an object" };
    return names[t];
}

static void jfree(jval *v) {
    if (v->t == J_STR) free(v->str);
    if (v->t == J_ARR || v->t == J_OBJ) {
        for (int i = 0; i < v->n; i++) {
            jfree(&v->items[i]);
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
static int strtod_exact(const char *s, size_t len, double *out) {
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
    if (!strtod_exact(s, (size_t)(q - s), &out->num)) return jerr(ps, "number out of range");
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

static int json_parse(const char *text, size_t len, jval *out, char *err, size_t err_len) {
    jparser ps = { .start = text, .p = text, .end = text + len, .err = err, .err_len = err_len };
    memset(out, 0, sizeof *out);
    int rc = parse_value(&ps, out);
    if (rc == SVC_OK) {
        skip_ws(&ps);
        if (ps.p != ps.end) rc = jerr(&ps, "trailing content after the JSON value");
    }
    if (rc != SVC_OK) jfree(out);
    if (rc == SVC_E_NOMEM) svc_set_err(err, err_len, "out of memory parsing the model JSON");
    return rc;
}

static const jval *jget(const jval *obj, const char *key) {
    for (int i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
    return NULL;
}

/* --------------------------------------------------------------- model ---- */

/* One nu-SVR model: normalisation, support vectors, transform and clip. */
typedef struct svm_member {
    int linear_rescale;
    double slopes[SVC_MODEL_MAX_FEATURES + 1]; /* [0] maps the prediction, [i+1] feature i */
    double intercepts[SVC_MODEL_MAX_FEATURES + 1];
    int clip;
    double clip_min, clip_max;
    struct {
        int enabled, has_p[3];
        double p[3];
    } transform;
    /* chroma_correction_parameter c (the vmaf_v1.0.16 models: 120): a speed_chroma value of
     * exactly 0 (flat or too small chroma) is replaced by c (1 - adm3) before prediction, as the
     * reference's "chroma from luma" does; guided/guiding are the features' indexes. */
    double chroma_correction;
    int chroma_guided, chroma_guiding;
    /* nu-SVR with RBF kernel; support vectors dense, dim values each (missing indexes are 0). */
    double gamma, rho;
    int n_sv, dim;
    double *coef, *sv;
} svm_member;

typedef struct model_feature {
    char *name; /* svc's name, e.g. "integer_adm2" */
    int n_opts;
    char *keys[SVC_MODEL_MAX_OPTIONS];
    double values[SVC_MODEL_MAX_OPTIONS]; /* NaN for a string */
    char *texts[SVC_MODEL_MAX_OPTIONS];   /* a string value (e.g. "bilinear"), else NULL */
} model_feature;

/* What one model file predicts: one member, or a bootstrap collection of several. */
typedef struct model_part {
    char *name;           /* output name prefix; NULL: "vmaf" */
    int n_members;
    svm_member *members;  /* owned unless the model is a bundle */
    int n_features;
    int col[SVC_MODEL_MAX_FEATURES]; /* the part's feature j is the model's feature col[j] */
} model_part;

struct svc_model {
    atomic_int refs;
    int n_features;
    model_feature feat[SVC_MODEL_MAX_FEATURES];
    int n_parts;
    model_part parts[SVC_MODEL_MAX_PARTS];
    const svc_model *sources[SVC_MODEL_MAX_PARTS]; /* a bundle borrows its parts' members */
};

static int model_err(char *err, size_t err_len, const char *fmt, const char *arg) {
    char msg[256];
    snprintf(msg, sizeof msg, fmt, arg);
    svc_set_err(err, err_len, "model: %s", msg);
    return SVC_E_MODEL;
}

/* Member of model_dict of the given type; missing and optional gives NULL and SVC_OK. */
static int member(const jval *dict, const char *key, jtype t, int required, const jval **out,
                  char *err, size_t err_len) {
    const jval *v = jget(dict, key);
    *out = NULL;
    if (!v) return required ? model_err(err, err_len, "model_dict.%s is missing", key) : SVC_OK;
    if (v->t != t) {
        char msg[128];
        snprintf(msg, sizeof msg, "model_dict.%s must be %s, not %s", key, jtype_name(t), jtype_name(v->t));
        return model_err(err, err_len, "%s", msg);
    }
    *out = v;
    return SVC_OK;
}

/* Array of exactly n numbers into out. */
static int numbers(const jval *arr, const char *key, int n, double *out, char *err, size_t err_len) {
    if (arr->n != n) {
        char msg[128];
        snprintf(msg, sizeof msg, "model_dict.%s has %d values, expected %d", key, arr->n, n);
        return model_err(err, err_len, "%s", msg);
    }
    for (int i = 0; i < n; i++) {
        if (arr->items[i].t != J_NUM) return model_err(err, err_len, "model_dict.%s holds a non-number", key);
        out[i] = arr->items[i].num;
    }
    return SVC_OK;
}

/* "VMAF_integer_feature_adm2_score" -> "integer_adm2", "VMAF_feature_adm2_score" -> "adm2",
 * "Cambi_feature_cambi_score" -> "cambi", "Speed_chroma_feature_speed_chroma_uv_score" ->
 * "speed_chroma_uv" (the reference library's aliases); other names are
 * taken as they are. */
static char *feature_alias(const char *name) {
    static const char *const prefixes[][2] = {
        { "VMAF_integer_feature_", "integer_" }, { "VMAF_feature_", "" }, { "Cambi_feature_", "" },
        { "Speed_chroma_feature_", "" }
    };
    static const char suffix[] = "_score";
    const size_t n = strlen(name), sl = sizeof suffix - 1;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        const size_t pl = strlen(prefixes[i][0]);
        if (n > pl + sl && strncmp(name, prefixes[i][0], pl) == 0 && strcmp(name + n - sl, suffix) == 0) {
            const size_t ol = strlen(prefixes[i][1]), core = n - pl - sl;
            char *out = malloc(ol + core + 1);
            if (!out) return NULL;
            memcpy(out, prefixes[i][1], ol);
            memcpy(out + ol, name + pl, core);
            out[ol + core] = '\0';
            return out;
        }
    }
    return strdup(name);
}

static void feature_clear(model_feature *f) {
    free(f->name);
    for (int k = 0; k < f->n_opts; k++) {
        free(f->keys[k]);
        free(f->texts[k]);
    }
    memset(f, 0, sizeof *f);
}

static int same_feature(const model_feature *a, const model_feature *b) {
    if (strcmp(a->name, b->name) != 0 || a->n_opts != b->n_opts) return 0;
    for (int k = 0; k < a->n_opts; k++) {
        int found = 0;
        for (int l = 0; l < b->n_opts; l++)
            found |= strcmp(a->keys[k], b->keys[l]) == 0 &&
                     (a->texts[k] || b->texts[l] ? a->texts[k] && b->texts[l] && strcmp(a->texts[k], b->texts[l]) == 0
                                                 : a->values[k] == b->values[l]);
        if (!found) return 0;
    }
    return 1;
}

/* Feature names and their option dicts (numbers; true/false as 1/0; strings such as
 * speed_prescale_method's "bilinear", whose number is NaN). Which features and
 * options can be computed is the scorer's business (svc_model_check), not the model's. */
static int parse_features(model_feature *feat, int *n_feat, const jval *dict, char *err, size_t err_len) {
    const jval *names, *opts;
    int rc;
    if ((rc = member(dict, "feature_names", J_ARR, 1, &names, err, err_len))) return rc;
    if (names->n < 1 || names->n > SVC_MODEL_MAX_FEATURES)
        return model_err(err, err_len, "model_dict.feature_names must hold 1 to %s names", "32");
    if ((rc = member(dict, "feature_opts_dicts", J_ARR, 0, &opts, err, err_len))) return rc;
    if (opts && opts->n != names->n)
        return model_err(err, err_len, "model_dict.feature_opts_dicts must have one entry per feature%s", "");
    for (int i = 0; i < names->n; i++) {
        const jval *nv = &names->items[i];
        if (nv->t != J_STR) return model_err(err, err_len, "model_dict.feature_names holds a non-string%s", "");
        const jval *od = opts ? &opts->items[i] : NULL;
        if (od && od->t != J_OBJ)
            return model_err(err, err_len, "model_dict.feature_opts_dicts entries must be objects%s", "");
        model_feature *f = &feat[(*n_feat)++];
        if (!(f->name = feature_alias(nv->str))) return SVC_E_NOMEM;
        for (int k = 0; od && k < od->n; k++) {
            const jval *v = &od->items[k];
            char msg[200];
            if (f->n_opts == SVC_MODEL_MAX_OPTIONS) {
                snprintf(msg, sizeof msg, "feature %s has more than %d options", nv->str, SVC_MODEL_MAX_OPTIONS);
                return model_err(err, err_len, "%s", msg);
            }
            if (v->t != J_NUM && v->t != J_TRUE && v->t != J_FALSE && v->t != J_STR) {
                snprintf(msg, sizeof msg, "feature option '%s' of %s is not a number or a string", od->keys[k], nv->str);
                return model_err(err, err_len, "%s", msg);
            }
            if (!(f->keys[f->n_opts] = strdup(od->keys[k]))) return SVC_E_NOMEM;
            if (v->t == J_STR && !(f->texts[f->n_opts] = strdup(v->str))) return SVC_E_NOMEM;
            f->values[f->n_opts++] = v->t == J_NUM ? v->num : v->t == J_STR ? NAN : v->t == J_TRUE;
        }
        for (int k = 0; k < *n_feat - 1; k++)
            if (same_feature(&feat[k], f)) return model_err(err, err_len, "feature %s is listed twice", nv->str);
    }
    return SVC_OK;
}

static int parse_norm(svm_member *m, int n_features, const jval *dict, char *err, size_t err_len) {
    const jval *norm, *slopes, *intercepts;
    int rc;
    if ((rc = member(dict, "norm_type", J_STR, 1, &norm, err, err_len))) return rc;
    if (strcmp(norm->str, "none") == 0) return SVC_OK;
    if (strcmp(norm->str, "linear_rescale") != 0)
        return model_err(err, err_len, "unknown norm_type '%s' (expected linear_rescale or none)", norm->str);
    m->linear_rescale = 1;
    if ((rc = member(dict, "slopes", J_ARR, 1, &slopes, err, err_len))) return rc;
    if ((rc = member(dict, "intercepts", J_ARR, 1, &intercepts, err, err_len))) return rc;
    if ((rc = numbers(slopes, "slopes", n_features + 1, m->slopes, err, err_len))) return rc;
    if ((rc = numbers(intercepts, "intercepts", n_features + 1, m->intercepts, err, err_len))) return rc;
    if (m->slopes[0] == 0.0) return model_err(err, err_len, "model_dict.slopes[0] is zero%s", "");
    return SVC_OK;
}

static int parse_clip_transform(svm_member *m, const jval *dict, char *err, size_t err_len) {
    const jval *clip, *tf;
    int rc;
    if ((rc = member(dict, "score_clip", J_ARR, 0, &clip, err, err_len))) return rc;
    if (clip) {
        double mm[2];
        if ((rc = numbers(clip, "score_clip", 2, mm, err, err_len))) return rc;
        if (mm[0] > mm[1]) return model_err(err, err_len, "model_dict.score_clip minimum exceeds its maximum%s", "");
        m->clip = 1;
        m->clip_min = mm[0];
        m->clip_max = mm[1];
    }
    if ((rc = member(dict, "score_transform", J_OBJ, 0, &tf, err, err_len)) || !tf) return rc;
    for (int i = 0; i < tf->n; i++) {
        const char *key = tf->keys[i];
        const jval *v = &tf->items[i];
        if (key[0] == 'p' && key[1] >= '0' && key[1] <= '2' && key[2] == '\0') {
            const int k = key[1] - '0';
            if (v->t == J_NULL) continue;
            if (v->t != J_NUM) return model_err(err, err_len, "score_transform.%s must be a number or null", key);
            m->transform.has_p[k] = 1;
            m->transform.p[k] = v->num;
        } else if (strcmp(key, "out_lte_in") == 0 || strcmp(key, "out_gte_in") == 0 || strcmp(key, "enabled") == 0) {
            /* The reference writes these flags as the strings "true"/"false". */
            int on;
            if (v->t == J_TRUE || v->t == J_FALSE) on = v->t == J_TRUE;
            else if (v->t == J_STR && (strcmp(v->str, "true") == 0 || strcmp(v->str, "false") == 0)) on = v->str[0] == 't';
            else return model_err(err, err_len, "score_transform.%s must be true or false", key);
            if (key[0] == 'e') m->transform.enabled = on;
        } else if (strcmp(key, "knots") == 0) {
            if (v->t != J_NULL) return model_err(err, err_len, "score_transform.knots is not supported%s", "");
        } else {
            return model_err(err, err_len, "unknown score_transform key '%s'", key);
        }
    }
    return SVC_OK;
}

/* Next whitespace-separated token of the current line; 0 at the end of the line. */
static int next_token(const char **p, const char **tok, size_t *len) {
    while (**p == ' ' || **p == '\t' || **p == '\r') (*p)++;
    if (**p == '\n' || **p == '\0') return 0;
    *tok = *p;
    while (**p && **p != ' ' && **p != '\t' && **p != '\r' && **p != '\n') (*p)++;
    *len = (size_t)(*p - *tok);
    return 1;
}

static int tok_is(const char *tok, size_t len, const char *word) {
    return len == strlen(word) && memcmp(tok, word, len) == 0;
}

static int svm_err(char *err, size_t err_len, int line, const char *what) {
    svc_set_err(err, err_len, "model: libsvm model line %d: %s", line, what);
    return SVC_E_MODEL;
}

/* The libsvm text model (model_dict.model): header, then "SV" and one line per support vector:
 * "coef index:value ..." with increasing indexes. */
static int parse_svm(svm_member *m, int n_features, const char *text, char *err, size_t err_len) {
    const char *p = text, *tok;
    size_t len;
    int line = 1, have_gamma = 0, have_rho = 0, total = -1, sv_seen = 0;
    for (; *p && !sv_seen; line++) {
        if (next_token(&p, &tok, &len)) {
            if (tok_is(tok, len, "SV")) {
                sv_seen = 1;
            } else if (tok_is(tok, len, "svm_type") || tok_is(tok, len, "kernel_type")) {
                const int is_svm = tok[0] == 's';
                const char *want = is_svm ? "nu_svr" : "rbf";
                if (!next_token(&p, &tok, &len)) return svm_err(err, err_len, line, "missing value");
                if (!tok_is(tok, len, want))
                    return svm_err(err, err_len, line, is_svm ? "svm_type must be nu_svr" : "kernel_type must be rbf");
            } else if (tok_is(tok, len, "gamma") || tok_is(tok, len, "rho")) {
                const int is_gamma = tok[0] == 'g';
                double v;
                if (!next_token(&p, &tok, &len) || !strtod_exact(tok, len, &v))
                    return svm_err(err, err_len, line, is_gamma ? "gamma needs a number" : "rho needs one number");
                if (is_gamma) { m->gamma = v; have_gamma = 1; } else { m->rho = v; have_rho = 1; }
            } else if (tok_is(tok, len, "nr_class")) {
                double v;
                if (!next_token(&p, &tok, &len) || !strtod_exact(tok, len, &v) || v != 2.0)
                    return svm_err(err, err_len, line, "nr_class must be 2 for a regression model");
            } else if (tok_is(tok, len, "total_sv")) {
                double v;
                if (!next_token(&p, &tok, &len) || !strtod_exact(tok, len, &v) || v < 1 || v > 1e6 || v != floor(v))
                    return svm_err(err, err_len, line, "total_sv must be a positive count");
                total = (int)v;
            } else {
                return svm_err(err, err_len, line, "unknown header key");
            }
            if (!sv_seen && next_token(&p, &tok, &len)) return svm_err(err, err_len, line, "unexpected extra value");
        }
        while (*p && *p != '\n') p++;
        if (*p) p++;
    }
    if (!sv_seen) return svm_err(err, err_len, line, "no SV section");
    if (!have_gamma || !have_rho || total < 0) return svm_err(err, err_len, line, "header lacks gamma, rho or total_sv");

    m->dim = n_features;
    m->n_sv = total;
    m->coef = malloc(sizeof *m->coef * (size_t)total);
    m->sv = calloc((size_t)total * SVC_MODEL_MAX_FEATURES, sizeof *m->sv);
    if (!m->coef || !m->sv) return SVC_E_NOMEM;
    int n = 0;
    for (; *p; line++) {
        if (next_token(&p, &tok, &len)) {
            if (n == total) return svm_err(err, err_len, line, "more support vectors than total_sv");
            if (!strtod_exact(tok, len, &m->coef[n])) return svm_err(err, err_len, line, "bad coefficient");
            int last = 0;
            while (next_token(&p, &tok, &len)) {
                const char *colon = memchr(tok, ':', len);
                char *end;
                double v;
                const long idx = colon ? strtol(tok, &end, 10) : 0;
                if (!colon || end != colon || idx <= last || idx > SVC_MODEL_MAX_FEATURES)
                    return svm_err(err, err_len, line, "bad or unordered index (expected increasing 1..32)");
                if (!strtod_exact(colon + 1, len - (size_t)(colon + 1 - tok), &v))
                    return svm_err(err, err_len, line, "bad value");
                m->sv[(size_t)n * SVC_MODEL_MAX_FEATURES + (size_t)(idx - 1)] = v;
                last = (int)idx;
                if (last > m->dim) m->dim = last;
            }
            n++;
        }
        while (*p && *p != '\n') p++;
        if (*p) p++;
    }
    if (n != total) return svm_err(err, err_len, line, "fewer support vectors than total_sv");
    return SVC_OK;
}

/* chroma_correction_parameter: the one feature whose name holds "speed_chroma" is corrected from
 * the one whose name holds "adm3" (by substring, as the reference finds them). */
static int parse_chroma_correction(svm_member *m, const model_feature *feat, int n_feat, const jval *dict, char *err,
                                   size_t err_len) {
    const jval *c;
    int rc;
    if ((rc = member(dict, "chroma_correction_parameter", J_NUM, 0, &c, err, err_len)) || !c || c->num == 0.0) return rc;
    m->chroma_correction = c->num;
    m->chroma_guided = m->chroma_guiding = -1;
    for (int i = 0; i < n_feat; i++) {
        int *slot = strstr(feat[i].name, "speed_chroma") ? &m->chroma_guided : strstr(feat[i].name, "adm3") ? &m->chroma_guiding : NULL;
        if (slot && *slot >= 0)
            return model_err(err, err_len, "chroma_correction_parameter: more than one feature named like %s", feat[i].name);
        if (slot) *slot = i;
    }
    if (m->chroma_guided < 0 || m->chroma_guiding < 0)
        return model_err(err, err_len, "chroma_correction_parameter needs an adm3 and a speed_chroma feature%s", "");
    return SVC_OK;
}

/* One model_dict: its features (into feat, n_feat) and its nu-SVR member. */
static int parse_member(svm_member *mem, model_feature *feat, int *n_feat, const jval *dict, const char *type_want,
                        char *err, size_t err_len) {
    const jval *type, *svm;
    int rc;
    if (!dict || dict->t != J_OBJ) return model_err(err, err_len, "the JSON is not an object with a model_dict object%s", "");
    if ((rc = member(dict, "model_type", J_STR, 1, &type, err, err_len))) return rc;
    if (strcmp(type->str, type_want) != 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "model_type '%s' is not supported here (expected %s)", type->str, type_want);
        return model_err(err, err_len, "%s", msg);
    }
    if ((rc = parse_features(feat, n_feat, dict, err, err_len))) return rc;
    if ((rc = parse_norm(mem, *n_feat, dict, err, err_len))) return rc;
    if ((rc = parse_clip_transform(mem, dict, err, err_len))) return rc;
    if ((rc = parse_chroma_correction(mem, feat, *n_feat, dict, err, err_len))) return rc;
    if ((rc = member(dict, "model", J_STR, 1, &svm, err, err_len))) return rc;
    return parse_svm(mem, *n_feat, svm->str, err, err_len);
}

/* A bootstrap collection (the reference's vmaf_b_*): members under "0", "1", ... that read
 * the same features; a plain model: one model_dict. */
static int parse_model(svc_model *m, const jval *root, char *err, size_t err_len) {
    model_part *part = &m->parts[0];
    m->n_parts = 1;
    if (root->t != J_OBJ) return model_err(err, err_len, "the JSON is not an object with a model_dict object%s", "");
    const jval *single = jget(root, "model_dict");
    const int n = single ? 1 : root->n;
    if (n < 1 || n == 2 || n > SVC_MODEL_MAX_MEMBERS)
        return model_err(err, err_len, "a bootstrap model holds its model and 2 to %s bootstrap members", "63");
    if (!(part->members = calloc((size_t)n, sizeof *part->members))) return SVC_E_NOMEM;
    for (int i = 0; i < n; i++) {
        const jval *dict = single;
        if (!single) {
            char key[16];
            snprintf(key, sizeof key, "%d", i);
            const jval *entry = jget(root, key);
            if (!entry || entry->t != J_OBJ)
                return model_err(err, err_len, "the JSON has neither model_dict nor bootstrap member \"%s\"", key);
            dict = jget(entry, "model_dict");
        }
        model_feature feat[SVC_MODEL_MAX_FEATURES] = { 0 };
        int n_feat = 0;
        int rc = parse_member(&part->members[i], i == 0 ? m->feat : feat, i == 0 ? &m->n_features : &n_feat, dict,
                              single ? "LIBSVMNUSVR" : "BOOTSTRAP_LIBSVMNUSVR", err, err_len);
        part->n_members++;
        if (rc == SVC_OK && i > 0) {
            int same = n_feat == m->n_features;
            for (int k = 0; same && k < n_feat; k++) same = same_feature(&feat[k], &m->feat[k]);
            if (!same) rc = model_err(err, err_len, "bootstrap member %s reads other features than member 0", "");
        }
        for (int k = 0; k < n_feat; k++) feature_clear(&feat[k]);
        if (rc) return rc;
    }
    part->n_features = m->n_features;
    for (int k = 0; k < m->n_features; k++) part->col[k] = k;
    return SVC_OK;
}

int svc_model_load(const char *json, size_t json_len, svc_model **out, char *err, size_t err_len) {
    if (!out || (!json && json_len)) {
        svc_set_err(err, err_len, "svc_model_load: NULL argument");
        return SVC_E_INVALID_ARG;
    }
    *out = NULL;
    /* strtod follows LC_NUMERIC; parse in the C locale whatever the host process set. */
    locale_t c_loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!c_loc) return SVC_E_NOMEM;
    locale_t prev = uselocale(c_loc);
    jval root;
    int rc = json_parse(json ? json : "", json_len, &root, err, err_len);
    svc_model *m = NULL;
    if (rc == SVC_OK) {
        m = calloc(1, sizeof *m);
        rc = m ? parse_model(m, &root, err, err_len) : SVC_E_NOMEM;
        jfree(&root);
    }
    uselocale(prev);
    freelocale(c_loc);
    if (rc == SVC_E_NOMEM) svc_set_err(err, err_len, "out of memory loading the model");
    if (rc != SVC_OK) {
        svc_model_free(m);
        return rc;
    }
    atomic_init(&m->refs, 1);
    *out = m;
    return SVC_OK;
}

int svc_model_bundle(const svc_model *const *models, const char *const *names, int n, svc_model **out, char *err,
                     size_t err_len) {
    if (!out || !models || !names || n < 1 || n > SVC_MODEL_MAX_PARTS) {
        svc_set_err(err, err_len, "svc_model_bundle: NULL argument or not 1 to %d models", SVC_MODEL_MAX_PARTS);
        return SVC_E_INVALID_ARG;
    }
    *out = NULL;
    for (int p = 0; p < n; p++) {
        if (!models[p] || !names[p] || !names[p][0] || models[p]->n_parts != 1) {
            svc_set_err(err, err_len, "svc_model_bundle: model %d is NULL, unnamed or itself a bundle", p);
            return SVC_E_INVALID_ARG;
        }
        for (int q = 0; q < p; q++)
            if (strcmp(names[p], names[q]) == 0) {
                svc_set_err(err, err_len, "svc_model_bundle: the name %s is given twice", names[p]);
                return SVC_E_INVALID_ARG;
            }
    }
    svc_model *m = calloc(1, sizeof *m);
    if (!m) return SVC_E_NOMEM;
    int rc = SVC_OK;
    for (int p = 0; p < n && rc == SVC_OK; p++) {
        const svc_model *src = models[p];
        model_part *part = &m->parts[m->n_parts++];
        m->sources[p] = svc_model_retain(src);
        *part = src->parts[0];
        if (!(part->name = strdup(names[p]))) rc = SVC_E_NOMEM;
        /* The union of the features, each computed once. */
        for (int k = 0; rc == SVC_OK && k < src->n_features; k++) {
            int c = 0;
            while (c < m->n_features && !same_feature(&m->feat[c], &src->feat[k])) c++;
            if (c == m->n_features) {
                if (c == SVC_MODEL_MAX_FEATURES) {
                    svc_set_err(err, err_len, "svc_model_bundle: the models read more than %d features together",
                                SVC_MODEL_MAX_FEATURES);
                    rc = SVC_E_INVALID_ARG;
                    break;
                }
                model_feature *f = &m->feat[m->n_features++];
                f->n_opts = src->feat[k].n_opts;
                if (!(f->name = strdup(src->feat[k].name))) rc = SVC_E_NOMEM;
                for (int o = 0; rc == SVC_OK && o < f->n_opts; o++) {
                    f->values[o] = src->feat[k].values[o];
                    if (!(f->keys[o] = strdup(src->feat[k].keys[o]))) rc = SVC_E_NOMEM;
                    if (src->feat[k].texts[o] && !(f->texts[o] = strdup(src->feat[k].texts[o]))) rc = SVC_E_NOMEM;
                }
            }
            part->col[k] = c;
        }
    }
    if (rc != SVC_OK) {
        if (rc == SVC_E_NOMEM) svc_set_err(err, err_len, "out of memory bundling models");
        svc_model_free(m);
        return rc;
    }
    atomic_init(&m->refs, 1);
    *out = m;
    return SVC_OK;
}

const svc_model *svc_model_retain(const svc_model *m) {
    atomic_fetch_add(&((svc_model *)m)->refs, 1);
    return m;
}

void svc_model_free(svc_model *m) {
    /* A model that failed to load never got a reference (refs == 0): free it directly. */
    if (!m || (atomic_load(&m->refs) > 0 && atomic_fetch_sub(&m->refs, 1) > 1)) return;
    for (int i = 0; i < m->n_features; i++) feature_clear(&m->feat[i]);
    for (int p = 0; p < m->n_parts; p++) {
        model_part *part = &m->parts[p];
        free(part->name);
        if (m->sources[p]) {
            svc_model_free((svc_model *)m->sources[p]);
            continue;
        }
        for (int i = 0; part->members && i < part->n_members; i++) {
            free(part->members[i].coef);
            free(part->members[i].sv);
        }
        free(part->members);
    }
    free(m);
}

int svc_model_feature_count(const svc_model *m) { return m ? m->n_features : 0; }

const char *svc_model_feature_name(const svc_model *m, int i) {
    return m && i >= 0 && i < m->n_features ? m->feat[i].name : NULL;
}

int svc_model_feature_option_count(const svc_model *m, int i) {
    return m && i >= 0 && i < m->n_features ? m->feat[i].n_opts : 0;
}

const char *svc_model_feature_option(const svc_model *m, int i, int k, double *value) {
    if (!m || i < 0 || i >= m->n_features || k < 0 || k >= m->feat[i].n_opts) return NULL;
    if (value) *value = m->feat[i].values[k];
    return m->feat[i].keys[k];
}

const char *svc_model_feature_option_text(const svc_model *m, int i, int k) {
    if (!m || i < 0 || i >= m->n_features || k < 0 || k >= m->feat[i].n_opts) return NULL;
    return m->feat[i].texts[k];
}

/* A bootstrap part reports its members' scores and four statistics. */
static const char *const stat_suffixes[] = { "_bagging", "_stddev", "_ci_p95_lo", "_ci_p95_hi" };
#define N_STATS 4

static int part_outputs(const model_part *part) { return part->n_members > 1 ? part->n_members + N_STATS : 1; }

int svc_model_output_count(const svc_model *m) {
    int n = 0;
    for (int p = 0; m && p < m->n_parts; p++) n += part_outputs(&m->parts[p]);
    return n;
}

int svc_model_output_name(const svc_model *m, int k, char *buf, size_t len) {
    for (int p = 0; m && p < m->n_parts; p++) {
        const model_part *part = &m->parts[p];
        const char *prefix = part->name ? part->name : "vmaf";
        const int n = part_outputs(part);
        if (k >= n) {
            k -= n;
            continue;
        }
        /* As the reference names them: member 0 is the model's own name, then _0001, ... */
        if (k == 0) snprintf(buf, len, "%s", prefix);
        else if (k < part->n_members) snprintf(buf, len, "%s_%04d", prefix, k);
        else snprintf(buf, len, "%s%s", prefix, stat_suffixes[k - part->n_members]);
        return SVC_OK;
    }
    return SVC_E_INVALID_ARG;
}

/* The reference's polynomial transform. Its rectification (out_lte_in / out_gte_in) compares
 * the piecewise-linear stage's output with that stage's input; without knots both are the
 * polynomial's output, so rectification never changes the score and is not modelled here. */
static double transform(const svm_member *m, double y) {
    if (!(m->transform.has_p[0] || m->transform.has_p[1] || m->transform.has_p[2])) return y;
    double out = 0.0;
    if (m->transform.has_p[0]) out += m->transform.p[0];
    if (m->transform.has_p[1]) out += m->transform.p[1] * y;
    if (m->transform.has_p[2]) out += m->transform.p[2] * y * y;
    return out;
}

static double finish(const svm_member *m, double y) {
    if (m->transform.enabled) y = transform(m, y);
    if (m->clip) y = y < m->clip_min ? m->clip_min : (y > m->clip_max ? m->clip_max : y);
    return y;
}

/* Normalise, nu-SVR with RBF kernel, denormalise: the score before transform and clip. */
static double predict_raw(const svm_member *m, int n_features, const double *features) {
    double x[SVC_MODEL_MAX_FEATURES] = { 0 };
    for (int j = 0; j < n_features; j++)
        x[j] = m->linear_rescale ? m->slopes[j + 1] * features[j] + m->intercepts[j + 1] : features[j];
    if (m->chroma_correction != 0.0) {
        /* On the normalised values, denormalised back as the reference does. */
        const int gd = m->chroma_guided, gg = m->chroma_guiding;
        const double guided = m->linear_rescale ? (x[gd] - m->intercepts[gd + 1]) / m->slopes[gd + 1] : x[gd];
        if (guided == 0.0) {
            const double guiding = m->linear_rescale ? (x[gg] - m->intercepts[gg + 1]) / m->slopes[gg + 1] : x[gg];
            const double corrected = -m->chroma_correction * guiding + m->chroma_correction;
            x[gd] = m->linear_rescale ? m->slopes[gd + 1] * corrected + m->intercepts[gd + 1] : corrected;
        }
    }
    double sum = 0.0;
    for (int s = 0; s < m->n_sv; s++) {
        const double *sv = m->sv + (size_t)s * SVC_MODEL_MAX_FEATURES;
        double dist = 0.0;
        for (int j = 0; j < m->dim; j++) {
            const double d = x[j] - sv[j];
            dist += d * d;
        }
        sum += m->coef[s] * exp(-m->gamma * dist);
    }
    double y = sum - m->rho;
    if (m->linear_rescale) y = (y - m->intercepts[0]) / m->slopes[0];
    return y;
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between order statistics, as the reference's bootstrap percentile. */
static double percentile(const double *sorted, int n, double perc) {
    const double p = perc * (n - 1) / 100.0;
    const int lo = (int)floor(p), hi = (int)ceil(p);
    return lo == hi ? sorted[lo] : sorted[lo] * (hi - p) + sorted[hi] * (p - lo);
}

/* Members' scores (each transformed and clipped as its own file says), then the statistics
 * of the bootstrap members' raw scores (members 1.., as the reference: member 0 is the model
 * trained on all the data, whose score is the model's score): mean (bagging), standard
 * deviation scaled by the transform's slope at the mean, and the 2.5 / 97.5 percentiles, each
 * mapped like a member's score. */
static void predict_part(const model_part *part, const double *features, double *out) {
    double x[SVC_MODEL_MAX_FEATURES], raw[SVC_MODEL_MAX_MEMBERS];
    for (int j = 0; j < part->n_features; j++) x[j] = features[part->col[j]];
    for (int i = 0; i < part->n_members; i++) {
        raw[i] = predict_raw(&part->members[i], part->n_features, x);
        out[i] = finish(&part->members[i], raw[i]);
    }
    if (part->n_members == 1) return;
    double *boot = raw + 1;
    const int n = part->n_members - 1;
    double sum = 0.0, ssd = 0.0;
    for (int i = 0; i < n; i++) sum += boot[i];
    const double mean = sum / n;
    for (int i = 0; i < n; i++) ssd += pow(boot[i] - mean, 2);
    qsort(boot, (size_t)n, sizeof boot[0], by_value);
    const svm_member *first = &part->members[1];
    const double delta = 0.01;
    const double slope = (finish(first, mean + delta) - finish(first, mean - delta)) / (2.0 * delta);
    double *stats = out + part->n_members;
    stats[0] = finish(first, mean);
    stats[1] = sqrt(ssd / n) * slope;
    stats[2] = finish(first, percentile(boot, n, 2.5));
    stats[3] = finish(first, percentile(boot, n, 97.5));
}

void svc_model_predict(const svc_model *m, const double *features, double *out) {
    for (int p = 0; p < m->n_parts; p++) {
        predict_part(&m->parts[p], features, out);
        out += part_outputs(&m->parts[p]);
    }
}
