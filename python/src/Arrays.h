// A batch's arrays from Python: numpy arrays borrowed without a copy where their dtype and layout
// allow, anything else refused or converted by name.
#ifndef KIME_PYTHON_ARRAYS_H
#define KIME_PYTHON_ARRAYS_H

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kime/batch.h"

namespace kime::python {

// One input array: `span` points into `keep` (the caller's numpy array itself, or a copy).
template <typename T>
struct Input {
  pybind11::array_t<T> keep;
  Span<T> span;
};

// `obj` as the 1-D array of T named `name`: a C-contiguous numpy array of exactly T's dtype is
// borrowed as it is; a non-contiguous one is copied; a numpy array of another dtype or of
// another rank is refused (TypeError, ValueError) naming the argument. A list or other
// sequence of ints is copied, each value checked to fit T (ValueError naming the index).
template <typename T>
Input<T> input(pybind11::handle obj, const char* name);

// The arrays of a batch (token types optional), and the Batch that views them.
struct BatchInputs {
  Input<uint32_t> ids, cu, markers, mcu;
  Input<uint8_t> qtype, ttype;
  Batch batch() const { return {ids.span, cu.span, markers.span, mcu.span, qtype.span, ttype.span}; }
};
BatchInputs batchInputs(pybind11::handle ids, pybind11::handle cu, pybind11::handle markers, pybind11::handle mcu,
                        pybind11::handle qtype, pybind11::handle tokenTypes = pybind11::none());

// A batch's outputs for Python: the seed's (logits [M], act [S, 2]) pair where the model's outputs
// are exactly those, else a dict of arrays by output name ([rows] where one wide, else [rows, width]).
template <typename T>
pybind11::object outputArrays(const std::vector<OutputDesc>& descs, const OutputValues<T>& out) {
  std::vector<pybind11::array_t<T>> arrays;
  for (size_t i = 0; i < descs.size(); ++i) {
    const pybind11::ssize_t rows = pybind11::ssize_t(out[i].size() / descs[i].width);
    pybind11::array_t<T> a = descs[i].width == 1 ? pybind11::array_t<T>(rows)
                                                 : pybind11::array_t<T>({rows, pybind11::ssize_t(descs[i].width)});
    std::copy(out[i].begin(), out[i].end(), a.mutable_data());
    arrays.push_back(std::move(a));
  }
  if (isSeedContract(descs)) return pybind11::make_tuple(arrays[0], arrays[1]);
  pybind11::dict d;
  for (size_t i = 0; i < descs.size(); ++i) d[pybind11::str(descs[i].name)] = arrays[i];
  return d;
}

}  // namespace kime::python

#endif  // KIME_PYTHON_ARRAYS_H
