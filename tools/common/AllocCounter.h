// Counts the calls to malloc (and so to operator new) made by this process, the kernels' shared
// object included: the executable defines malloc and friends, which every library then uses.
// Only in dynamically linked builds; a static build has no counter (available() is false).
#ifndef KIME_TOOLS_ALLOCCOUNTER_H
#define KIME_TOOLS_ALLOCCOUNTER_H

#include <cstdint>

namespace kime::tools {

bool allocCounterAvailable();
uint64_t allocCount();  // calls to malloc, calloc, realloc, aligned allocation so far

}  // namespace kime::tools

#endif  // KIME_TOOLS_ALLOCCOUNTER_H
