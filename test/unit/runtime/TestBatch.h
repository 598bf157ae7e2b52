// A batch the runtime's tests build by hand: its arrays owned, viewed as the runtime's Batch.
#ifndef KIME_TEST_RUNTIME_TESTBATCH_H
#define KIME_TEST_RUNTIME_TESTBATCH_H

#include <cstdint>
#include <vector>

#include "kime/batch.h"

namespace kime::test {

struct B {
  std::vector<uint32_t> ids, cu, markers, mcu;
  std::vector<uint8_t> qtype;
  Batch view() const { return {ids, cu, markers, mcu, qtype}; }
};

// Two sequences: 3 tokens with markers {0, 2}, 2 tokens with marker {1}.
inline B good() { return {{5, 6, 7, 8, 9}, {0, 3, 5}, {0, 2, 1}, {0, 2, 3}, {1, 0}}; }

}  // namespace kime::test

#endif  // KIME_TEST_RUNTIME_TESTBATCH_H
