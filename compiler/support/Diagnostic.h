// The compiler's one error type: a message that says what is wrong and where.
#ifndef KIME_SUPPORT_DIAGNOSTIC_H
#define KIME_SUPPORT_DIAGNOSTIC_H

#include <stdexcept>
#include <string>

namespace kime {

// Thrown by the compiler's readers and checks (graph, checkpoint, buckets, config). Tools catch
// it at the top, print `what()` and exit non-zero; nothing half-done is left behind.
class CompileError : public std::runtime_error {
 public:
  explicit CompileError(const std::string& m) : std::runtime_error(m) {}
};

}  // namespace kime

#endif  // KIME_SUPPORT_DIAGNOSTIC_H
