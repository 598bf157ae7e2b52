#include "Arrays.h"

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

}  // namespace

template <typename T>
Input<T> input(py::handle obj, const char* name) {
  if (py::isinstance<py::array>(obj)) {
    auto a = py::reinterpret_borrow<py::array>(obj);
    if (!a.dtype().is(py::dtype::of<T>()))
      throw py::type_error(std::string(name) + ": expected a numpy array of " + dtypeName<T>() + ", got " +
                           py::str(a.dtype()).cast<std::string>());
    if (a.ndim() != 1)
      throw py::value_error(std::string(name) + ": expected a 1-D array, got " + std::to_string(a.ndim()) +
                            " dimensions");
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

BatchInputs batchInputs(py::handle ids, py::handle cu, py::handle markers, py::handle mcu, py::handle qtype) {
  return {input<uint32_t>(ids, "ids"), input<uint32_t>(cu, "cu"), input<uint32_t>(markers, "markers"),
          input<uint32_t>(mcu, "mcu"), input<uint8_t>(qtype, "qtype")};
}

}  // namespace kime::python
