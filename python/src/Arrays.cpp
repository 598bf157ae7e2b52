#include "Arrays.h"

#include <algorithm>
#include <limits>

namespace py = pybind11;

namespace kime::python {

namespace {

template <typename T>
const char* dtypeName() {
  return sizeof(T) == 1 ? "uint8" : "uint32";
}

template <typename T>
Input<T> borrow(py::array_t<T> a) {
  Input<T> in;
  in.span = Span<T>(a.data(), size_t(a.size()));
  in.keep = std::move(a);
  return in;
}

// Values of another integer dtype (int64 from tokenizers and torch, say) as T, each checked to fit.
template <typename T, typename Wide>
Input<T> narrowed(const py::array& a, const char* name) {
  const auto wide = py::array_t < Wide, py::array::c_style | py::array::forcecast > ::ensure(a);
  py::array_t<T> copy(wide.size());
  T* out = copy.mutable_data();
  for (py::ssize_t i = 0; i < wide.size(); ++i) {
    const Wide x = wide.data()[i];
    if (x < 0 || (unsigned long long)x > std::numeric_limits<T>::max())
      throw py::value_error(std::string(name) + "[" + std::to_string(i) + "]: " + std::to_string(x) + " does not fit " +
                            dtypeName<T>());
    out[i] = T(x);
  }
  return borrow(std::move(copy));
}

}  // namespace

template <typename T>
Input<T> input(py::handle obj, const char* name) {
  if (py::isinstance<py::array>(obj)) {
    auto a = py::reinterpret_borrow<py::array>(obj);
    const char kind = a.dtype().kind();
    if (!a.dtype().is(py::dtype::of<T>()) && kind != 'i' && kind != 'u')
      throw py::type_error(std::string(name) + ": expected a numpy array of integers (" + dtypeName<T>() +
                           " is read without a copy), got " + py::str(a.dtype()).cast<std::string>());
    if (a.ndim() != 1)
      throw py::value_error(std::string(name) + ": expected a 1-D array, got " + std::to_string(a.ndim()) +
                            " dimensions");
    if (!a.dtype().is(py::dtype::of<T>()))
      return kind == 'u' ? narrowed<T, unsigned long long>(a, name) : narrowed<T, long long>(a, name);
    if (a.flags() & py::array::c_style) return borrow(py::reinterpret_borrow<py::array_t<T>>(obj));
    return borrow(py::array_t<T>(py::array_t < T, py::array::c_style | py::array::forcecast > ::ensure(obj)));
  }
  if (!py::isinstance<py::sequence>(obj) || py::isinstance<py::str>(obj))
    throw py::type_error(std::string(name) + ": expected a numpy array or a sequence of ints, got " +
                         py::str(py::type::of(obj)).cast<std::string>());
  auto seq = py::reinterpret_borrow<py::sequence>(obj);
  py::array_t<T> copy(py::ssize_t(seq.size()));
  T* out = copy.mutable_data();
  for (size_t i = 0; i < seq.size(); ++i) {
    py::handle v = seq[i];
    if (!py::isinstance<py::int_>(v))
      throw py::type_error(std::string(name) + "[" + std::to_string(i) + "]: expected an int");
    const long long x = v.cast<long long>();
    if (x < 0 || (unsigned long long)x > std::numeric_limits<T>::max())
      throw py::value_error(std::string(name) + "[" + std::to_string(i) + "]: " + std::to_string(x) + " does not fit " +
                            dtypeName<T>());
    out[i] = T(x);
  }
  return borrow(std::move(copy));
}

template Input<uint32_t> input<uint32_t>(py::handle, const char*);
template Input<uint8_t> input<uint8_t>(py::handle, const char*);

// The question types, or type 0 for every sequence of `cu` where none are given.
static Input<uint8_t> qtypes(py::handle qtype, py::handle cu) {
  if (!qtype.is_none()) return input<uint8_t>(qtype, "qtype");
  const size_t seqs = size_t(std::max<py::ssize_t>(py::len(cu), 1)) - 1;
  py::array_t<uint8_t> zeros{py::ssize_t(seqs)};
  std::fill_n(zeros.mutable_data(), seqs, uint8_t(0));
  return borrow(std::move(zeros));
}

BatchInputs batchInputs(py::handle ids, py::handle cu, py::handle markers, py::handle mcu, py::handle qtype,
                        py::handle tokenTypes) {
  if (markers.is_none() != mcu.is_none())
    throw py::value_error("markers and mcu: give both, or neither (a marker at every token)");
  Input<uint8_t> ttype = tokenTypes.is_none() ? Input<uint8_t>{} : input<uint8_t>(tokenTypes, "token_types");
  if (!markers.is_none())
    return {input<uint32_t>(ids, "ids"), input<uint32_t>(cu, "cu"), input<uint32_t>(markers, "markers"),
            input<uint32_t>(mcu, "mcu"), qtypes(qtype, cu),         std::move(ttype)};
  BatchInputs in{input<uint32_t>(ids, "ids"), input<uint32_t>(cu, "cu"), {}, {}, qtypes(qtype, cu), std::move(ttype)};
  // A marker at every token (a tagger reads them all): each token's position, mcu = cu. A cu that
  // checkBatch would refuse is left to it, markers then none.
  const Span<uint32_t> c = in.cu.span;
  const bool sound = !c.empty() && c[c.size - 1] == in.ids.span.size && std::is_sorted(c.begin(), c.end());
  py::array_t<uint32_t> every(py::ssize_t(sound ? c[c.size - 1] : 0));
  for (size_t s = 0; sound && s + 1 < c.size; ++s)
    for (uint32_t t = c[s]; t < c[s + 1]; ++t) every.mutable_data()[t] = t - c[s];
  in.markers = borrow(std::move(every));
  in.mcu = input<uint32_t>(in.cu.keep, "cu");
  return in;
}

}  // namespace kime::python
