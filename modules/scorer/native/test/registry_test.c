/*
 * The registry's facts against the extractors they describe: each row's smallest frame is the
 * smallest its create accepts (one sample less on a bound side is refused), every row states its
 * implementation and memory, and the public list (svc_feature_*, ABI minor 14) is the registry's.
 */
#include <string.h>

#include "../src/feature/registry.h"
#include "check.h"

/* A state of the row's extractor for w x h 4:4:4 8-bit frames (every plane the luma's size), freed; 1 when created. */
static int creates(const svc_registry_entry *row, int w, int h, int pix_fmt) {
    if (row->tm) {
        void *state = row->tm->create(w, h, 8, SVC_CPU_SCALAR);
        if (state) row->tm->destroy(state);
        return state != NULL;
    }
    void *state = row->ex->create_for_matrix ? row->ex->create_for_matrix(w, h, pix_fmt, 8, SVC_CPU_SCALAR, SVC_MATRIX_BT709)
                                             : row->ex->create(w, h, pix_fmt, 8, SVC_CPU_SCALAR);
    if (state) row->ex->destroy(state);
    return state != NULL;
}

static void minimum_frames(void) {
    for (int i = 0; i < svc_registry_size(); i++) {
        const svc_registry_entry *row = svc_registry_row(i);
        const char *name = svc_registry_name(row);
        const svc_min_frame m = row->min;
        switch (m.rule) {
        case SVC_MIN_NONE:
            /* An extractor whose minimum depends on its options (too_small) states none. */
            CHECK((row->ex && row->ex->too_small) || creates(row, 2, 2, SVC_PIX_420), "%s has no minimum but refuses 2x2",
                  name);
            break;
        case SVC_MIN_EACH_SIDE:
            CHECK(creates(row, m.w, m.h, SVC_PIX_420), "%s refuses its minimum %dx%d", name, m.w, m.h);
            CHECK(!creates(row, m.w - 1, m.h, SVC_PIX_420), "%s accepts a width of %d", name, m.w - 1);
            CHECK(!creates(row, m.w, m.h - 1, SVC_PIX_420), "%s accepts a height of %d", name, m.h - 1);
            break;
        case SVC_MIN_LONGER_SIDE:
            CHECK(creates(row, m.w, 2, SVC_PIX_420) && creates(row, 2, m.w, SVC_PIX_420), "%s refuses a side of %d", name,
                  m.w);
            CHECK(!creates(row, m.w - 1, m.w - 1, SVC_PIX_420), "%s accepts %dx%d", name, m.w - 1, m.w - 1);
            break;
        case SVC_MIN_EACH_PLANE:
            /* 8x8 in every plane of 4:4:4 is 8x8 luma; its blocks are skipped, not refused, below. */
            CHECK(creates(row, m.w, m.h, SVC_PIX_444), "%s refuses %dx%d 4:4:4", name, m.w, m.h);
            break;
        default: CHECK(0, "%s: unknown minimum rule %d", name, m.rule);
        }
    }
}

static void facts(void) {
    int flags = 0;
    for (int i = 0; i < svc_registry_size(); i++) {
        const svc_registry_entry *row = svc_registry_row(i);
        const char *name = svc_registry_name(row);
        CHECK((row->ex != NULL) != (row->tm != NULL), "%s: a row has one extractor", name);
        CHECK(row->implementation && *row->implementation, "%s states no implementation", name);
        CHECK(row->bytes_per_pixel > 0, "%s states no memory", name);
        CHECK(!row->ex || !row->ex->ladder_prepare || row->ladder_bytes_per_pixel > 0,
              "%s has a ladder path but states no memory for it", name);
        CHECK(row->flag == 0 || (row->flag & (row->flag - 1)) == 0, "%s: its flag is not one bit", name);
        CHECK(!(flags & row->flag), "%s: its flag is another row's", name);
        flags |= row->flag;
        if (row->ex) CHECK(svc_registry_of(row->ex) == row, "%s: svc_registry_of finds another row", name);
        else CHECK(svc_registry_of_temporal(row->tm) == row, "%s: svc_registry_of_temporal finds another row", name);
    }
    CHECK(flags == svc_registry_flags(), "svc_registry_flags is the rows' flags");
}

static void public_list(void) {
    CHECK(svc_abi_minor() >= 14, "the feature list is ABI minor 14");
    CHECK(svc_feature_count() == svc_registry_size(), "one public entry per row");
    CHECK(svc_feature_count() == svc_registry_count() + svc_registry_temporal_count(), "per-frame rows then temporal");
    for (int i = 0; i < svc_feature_count(); i++) {
        const svc_registry_entry *row = svc_registry_row(i);
        CHECK(strcmp(svc_feature_name(i), svc_registry_name(row)) == 0, "entry %d is row %d", i, i);
        CHECK(svc_feature_flag(i) == row->flag, "%s: flag", svc_feature_name(i));
        CHECK(svc_feature_temporal(i) == (row->tm ? 1 : row->ex->history), "%s: temporal", svc_feature_name(i));
        const int n = row->ex ? row->ex->n_outputs : row->tm->n_outputs;
        CHECK(svc_feature_output_count(i) == n, "%s: outputs", svc_feature_name(i));
        for (int k = 0; k < n; k++) CHECK(svc_feature_output_name(i, k) != NULL, "%s: output %d", svc_feature_name(i), k);
        CHECK(svc_feature_output_name(i, n) == NULL, "%s: no output past the end", svc_feature_name(i));
        int32_t min[3];
        CHECK(svc_feature_min_frame(i, min) == SVC_OK && min[0] == row->min.rule && min[1] == row->min.w &&
                  min[2] == row->min.h,
              "%s: minimum frame", svc_feature_name(i));
    }
    CHECK(svc_feature_name(svc_feature_count()) == NULL && svc_feature_name(-1) == NULL, "no entry past the ends");
    CHECK(svc_feature_min_frame(svc_feature_count(), (int32_t[3]){ 0 }) == SVC_E_INVALID_ARG, "no minimum past the end");
}

int main(void) {
    RUN_CASE("minimum_frames", minimum_frames());
    RUN_CASE("facts", facts());
    RUN_CASE("public_list", public_list());
    return finish_checks();
}
