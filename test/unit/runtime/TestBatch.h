// A batch the runtime's tests build by hand: tooling's OwnedBatch (its arrays owned, viewed as
// the runtime's Batch), under a short name.
#ifndef KIME_TEST_RUNTIME_TESTBATCH_H
#define KIME_TEST_RUNTIME_TESTBATCH_H

#include "kime/tooling/BatchFile.h"

namespace kime::test {

using B = tooling::OwnedBatch;

// Two sequences: 3 tokens with markers {0, 2}, 2 tokens with marker {1}.
inline B good() { return {{5, 6, 7, 8, 9}, {0, 3, 5}, {0, 2, 1}, {0, 2, 3}, {1, 0}}; }

}  // namespace kime::test

#endif  // KIME_TEST_RUNTIME_TESTBATCH_H
