#include "kime/core/Eltwise.h"

#include <algorithm>
#include <cmath>

namespace kime::eltwise {

int arity(Fn f) { return f == Fn::add || f == Fn::sub || f == Fn::mul ? 2 : 1; }

const char* name(Fn f) {
  switch (f) {
    case Fn::add:
      return "add";
    case Fn::sub:
      return "sub";
    case Fn::mul:
      return "mul";
    case Fn::silu:
      return "silu";
    case Fn::gelu:
      return "gelu";
    case Fn::gelu_tanh:
      return "gelu_tanh";
    case Fn::relu:
      return "relu";
    case Fn::tanh:
      return "tanh";
    case Fn::sigmoid:
      return "sigmoid";
  }
  return "?";
}

std::optional<Fn> parseFn(std::string_view n) {
  for (Fn f : kAllFns)
    if (n == name(f)) return f;
  return std::nullopt;
}

const char* inputName(int i) {
  static const char* const names[kMaxInputs] = {"x", "in1", "in2", "in3"};
  return i >= 0 && i < kMaxInputs ? names[i] : "?";
}

Program Program::input(int i) { return Program().push(i); }

Program& Program::push(int input) {
  steps_.push_back({true, uint8_t(input), Fn::add});
  return *this;
}

Program& Program::apply(Fn f) {
  steps_.push_back({false, 0, f});
  return *this;
}

Program& Program::append(const Program& other) {
  steps_.insert(steps_.end(), other.steps_.begin(), other.steps_.end());
  return *this;
}

std::optional<Program> Program::parse(std::string_view text, std::string* error) {
  Program p;
  size_t at = 0;
  while (at < text.size()) {
    if (text[at] == ' ') {
      ++at;
      continue;
    }
    const size_t end = std::min(text.find(' ', at), text.size());
    const std::string_view word = text.substr(at, end - at);
    at = end;
    int input = -1;
    for (int i = 0; i < kMaxInputs; ++i)
      if (word == inputName(i)) input = i;
    if (input >= 0) {
      p.push(input);
    } else if (auto f = parseFn(word)) {
      p.apply(*f);
    } else {
      if (error) *error = "unknown step \"" + std::string(word) + "\"";
      return std::nullopt;
    }
  }
  return p;
}

unsigned Program::inputsRead() const {
  unsigned read = 0;
  for (const Step& s : steps_)
    if (s.isInput) read |= 1u << s.index;
  return read;
}

std::string Program::check() const {
  int depth = 0;
  for (const Step& s : steps_) {
    if (s.isInput) {
      if (s.index >= kMaxInputs) return "input " + std::to_string(s.index) + " is past the kernel's inputs";
      ++depth;
      continue;
    }
    const int n = arity(s.fn);
    if (depth < n)
      return std::string(name(s.fn)) + " takes " + (n == 2 ? "two values" : "a value") + ", but the stack holds " +
             std::to_string(depth);
    depth -= n - 1;
  }
  if (depth != 1) return "leaves " + std::to_string(depth) + " values, not 1";
  return "";
}

std::string Program::text() const {
  std::string s;
  for (const Step& step : steps_) {
    if (!s.empty()) s += ' ';
    s += step.isInput ? inputName(step.index) : name(step.fn);
  }
  return s;
}

double apply(Fn f, const double* a) {
  switch (f) {
    case Fn::add:
      return a[0] + a[1];
    case Fn::sub:
      return a[0] - a[1];
    case Fn::mul:
      return a[0] * a[1];
    case Fn::silu:
      return a[0] / (1 + std::exp(-a[0]));
    case Fn::gelu:
      return 0.5 * a[0] * (1 + std::erf(a[0] / std::sqrt(2.0)));
    case Fn::gelu_tanh:
      return 0.5 * a[0] * (1 + std::tanh(std::sqrt(2 / M_PI) * (a[0] + 0.044715 * a[0] * a[0] * a[0])));
    case Fn::relu:
      return a[0] > 0 ? a[0] : 0.0;
    case Fn::tanh:
      return std::tanh(a[0]);
    case Fn::sigmoid:
      return 1 / (1 + std::exp(-a[0]));
  }
  return NAN;
}

}  // namespace kime::eltwise
