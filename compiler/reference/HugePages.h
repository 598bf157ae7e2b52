// Storage for the reference evaluator's large values, on huge pages where the kernel offers them
// (transparent huge pages in "madvise" mode): a batch's intermediates are tens of MB each, and on
// 4 KiB pages their first touch costs more than the arithmetic done on them.
#ifndef KIME_REFERENCE_HUGEPAGES_H
#define KIME_REFERENCE_HUGEPAGES_H

#include <cstddef>
#include <vector>

namespace kime::ref {

// n zeros; storage of 2 MiB or more is advised to be backed by huge pages before it is touched.
std::vector<double> zeros(size_t n);

}  // namespace kime::ref

#endif  // KIME_REFERENCE_HUGEPAGES_H
