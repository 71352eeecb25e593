// TESSERA_CHECK: invariants that only a bug can break. Never reachable from user
// input (user errors are Statuses). On failure, prints the condition, the place
// and the context message, then aborts.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#define TESSERA_CHECK(cond, ...)                                                     \
  do {                                                                               \
    if (!(cond)) [[unlikely]] {                                                      \
      std::fprintf(stderr, "CHECK failed at %s:%d: %s: %s\n", __FILE__, __LINE__, #cond, \
                   ::fmt::format("" __VA_ARGS__).c_str());                           \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)
