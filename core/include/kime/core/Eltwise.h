// The elementwise functions of a Graph and the programs kernels run over them, in plain C++.
//
// An elementwise kernel (and a linear's epilogue) computes one postfix program per element: its
// steps push one of the kernel's inputs or apply a function to the values on top. The program is
// a typed value (the `#kime.program` attribute in the IR, `KernelSpec::program` in codegen); it
// is built by `Program`'s methods and read by one function, `evaluate`, which each back end
// (Halide, CUDA C++, the f64 reference) calls with its own `apply`. A new elementwise function
// is one `Fn` value here, its Graph op, and one case in each back end's `apply`.
#ifndef KIME_CORE_ELTWISE_H
#define KIME_CORE_ELTWISE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kime::eltwise {

// Each function, named as its Graph op. Binary: add, sub, mul; unary: the rest.
enum class Fn : uint8_t { add, sub, mul, silu, gelu, gelu_tanh, relu, tanh, sigmoid };
constexpr Fn kAllFns[] = {Fn::add,       Fn::sub,  Fn::mul,  Fn::silu,   Fn::gelu,
                          Fn::gelu_tanh, Fn::relu, Fn::tanh, Fn::sigmoid};

// The values a function takes: 2 or 1.
int arity(Fn f);
const char* name(Fn f);
std::optional<Fn> parseFn(std::string_view name);

// The most inputs a program reads: x (0), in1, in2, in3.
constexpr int kMaxInputs = 4;
// How a program names input i: "x", "in1", "in2", "in3".
const char* inputName(int i);

// One step: push input `index`, or apply `fn` to the values on top (the other field is always
// 0, so that equal steps are equal field by field).
struct Step {
  bool isInput = true;
  uint8_t index = 0;
  Fn fn = Fn::add;

  bool operator==(const Step& o) const { return isInput == o.isInput && index == o.index && fn == o.fn; }
};

class Program {
 public:
  Program() = default;
  explicit Program(std::vector<Step> steps) : steps_(std::move(steps)) {}
  // The program that reads input `i` and nothing else.
  static Program input(int i);
  // Reads `text` ("x in1 mul silu"); nullopt (and `error`) when a word is unknown.
  static std::optional<Program> parse(std::string_view text, std::string* error = nullptr);

  // Appends a step.
  Program& push(int input);
  Program& apply(Fn f);
  // Appends `other`'s steps (its value lands on top of this program's).
  Program& append(const Program& other);

  const std::vector<Step>& steps() const { return steps_; }
  bool empty() const { return steps_.empty(); }
  // Whether the program is only `input(0)`: nothing to compute.
  bool isIdentity() const { return steps_.size() == 1 && steps_[0].isInput && steps_[0].index == 0; }
  // The inputs it reads, one bit each.
  unsigned inputsRead() const;
  // Empty when the program is well formed: each function finds its values and one value is
  // left; otherwise what is wrong, in a sentence.
  std::string check() const;
  // "x in1 mul silu": the form of the IR, the kernel keys and messages.
  std::string text() const;

  bool operator==(const Program& o) const { return steps_ == o.steps_; }
  bool operator!=(const Program& o) const { return !(*this == o); }

 private:
  std::vector<Step> steps_;
};

// Runs a well-formed program (check() is empty) over values of type V: `input(i)` gives input
// i's value, `apply(fn, args)` a function's (args[0] the first operand).
template <typename V, typename Input, typename Apply>
V evaluate(const Program& p, Input&& input, Apply&& apply) {
  std::vector<V> stack;
  for (const Step& s : p.steps()) {
    if (s.isInput) {
      stack.push_back(input(int(s.index)));
      continue;
    }
    const size_t n = size_t(arity(s.fn)), base = stack.size() - n;
    V r = apply(s.fn, &stack[base]);
    stack.erase(stack.begin() + std::ptrdiff_t(base), stack.end());
    stack.push_back(std::move(r));
  }
  return stack.back();
}

// The function in f64: what the reference computes.
double apply(Fn f, const double* args);

}  // namespace kime::eltwise

#endif  // KIME_CORE_ELTWISE_H
