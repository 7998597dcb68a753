/*
 * sample.h is a leaf: this file is compiled with no include directory of the project but
 * sampler/registry/ (tests/sampler/CMakeLists.txt, target sample_h_is_a_leaf), so an include of
 * any other header of the project in sample.h fails the build. The record the handler and the
 * sampler thread share is then made of fixed-width types and one pointer (struct sample_walk).
 */
#include "sample.h"

#include <stddef.h>

_Static_assert(offsetof(struct sample_record, num_frames) == 0, "the record is defined here");
