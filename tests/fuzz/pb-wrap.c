// SPDX-License-Identifier: MIT
/* profile.proto's generated code (profiler/export) for fuzz-report: not held to our warnings. */
#pragma clang diagnostic ignored "-Wmissing-prototypes"
#pragma clang diagnostic ignored "-Wstrict-prototypes"
#pragma clang diagnostic ignored "-Wshadow"
#pragma clang diagnostic ignored "-Wunused-parameter"
#include "profile.pb-c.c"
