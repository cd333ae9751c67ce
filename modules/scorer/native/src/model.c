/*
 * VMAF models in the reference library's JSON format (read with json.c): features and their
 * options, the embedded libsvm text model, bootstrap collections and bundles, output names.
 * Prediction is predict.c's.
 *
 * libvmaf applies score_transform only when the caller passes its enable_transform model flag,
 * which its CLI leaves off (the goldens match the untransformed score). The ABI has no such
 * option, so the model file decides: "score_transform": {"enabled": true, ...} turns it on.
 */
#define _POSIX_C_SOURCE 200809L
#include <locale.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "model.h"

static int model_err(char *err, size_t err_len, const char *fmt, const char *arg) {
    char msg[256];
    snprintf(msg, sizeof msg, fmt, arg);
    svc_set_err(err, err_len, "model: %s", msg);
    return SVC_E_MODEL;
}

/* Member of model_dict of the given type; missing and optional gives NULL and SVC_OK. */
static int member(const jval *dict, const char *key, jtype t, int required, const jval **out,
                  char *err, size_t err_len) {
    const jval *v = svc_json_get(dict, key);
    *out = NULL;
    if (!v) return required ? model_err(err, err_len, "model_dict.%s is missing", key) : SVC_OK;
    if (v->t != t) {
        char msg[128];
        snprintf(msg, sizeof msg, "model_dict.%s must be %s, not %s", key, svc_json_type_name(t), svc_json_type_name(v->t));
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
                if (!next_token(&p, &tok, &len) || !svc_strtod_exact(tok, len, &v))
                    return svm_err(err, err_len, line, is_gamma ? "gamma needs a number" : "rho needs one number");
                if (is_gamma) { m->gamma = v; have_gamma = 1; } else { m->rho = v; have_rho = 1; }
            } else if (tok_is(tok, len, "nr_class")) {
                double v;
                if (!next_token(&p, &tok, &len) || !svc_strtod_exact(tok, len, &v) || v != 2.0)
                    return svm_err(err, err_len, line, "nr_class must be 2 for a regression model");
            } else if (tok_is(tok, len, "total_sv")) {
                double v;
                if (!next_token(&p, &tok, &len) || !svc_strtod_exact(tok, len, &v) || v < 1 || v > 1e6 || v != floor(v))
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
            if (!svc_strtod_exact(tok, len, &m->coef[n])) return svm_err(err, err_len, line, "bad coefficient");
            int last = 0;
            while (next_token(&p, &tok, &len)) {
                const char *colon = memchr(tok, ':', len);
                char *end;
                double v;
                const long idx = colon ? strtol(tok, &end, 10) : 0;
                if (!colon || end != colon || idx <= last || idx > SVC_MODEL_MAX_FEATURES)
                    return svm_err(err, err_len, line, "bad or unordered index (expected increasing 1..32)");
                if (!svc_strtod_exact(colon + 1, len - (size_t)(colon + 1 - tok), &v))
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
    const jval *single = svc_json_get(root, "model_dict");
    const int n = single ? 1 : root->n;
    if (n < 1 || n == 2 || n > SVC_MODEL_MAX_MEMBERS)
        return model_err(err, err_len, "a bootstrap model holds its model and 2 to %s bootstrap members", "63");
    if (!(part->members = calloc((size_t)n, sizeof *part->members))) return SVC_E_NOMEM;
    for (int i = 0; i < n; i++) {
        const jval *dict = single;
        if (!single) {
            char key[16];
            snprintf(key, sizeof key, "%d", i);
            const jval *entry = svc_json_get(root, key);
            if (!entry || entry->t != J_OBJ)
                return model_err(err, err_len, "the JSON has neither model_dict nor bootstrap member \"%s\"", key);
            dict = svc_json_get(entry, "model_dict");
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
    int rc = svc_json_parse(json ? json : "", json_len, &root, err, err_len);
    svc_model *m = NULL;
    if (rc == SVC_OK) {
        m = calloc(1, sizeof *m);
        rc = m ? parse_model(m, &root, err, err_len) : SVC_E_NOMEM;
        svc_json_free(&root);
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

int svc_model_part_outputs(const model_part *part) { return part->n_members > 1 ? part->n_members + N_STATS : 1; }

int svc_model_output_count(const svc_model *m) {
    int n = 0;
    for (int p = 0; m && p < m->n_parts; p++) n += svc_model_part_outputs(&m->parts[p]);
    return n;
}

int svc_model_output_name(const svc_model *m, int k, char *buf, size_t len) {
    for (int p = 0; m && p < m->n_parts; p++) {
        const model_part *part = &m->parts[p];
        const char *prefix = part->name ? part->name : "vmaf";
        const int n = svc_model_part_outputs(part);
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
