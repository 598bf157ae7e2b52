// A batch's arrays from Python: numpy arrays borrowed without a copy where their dtype and layout
// allow, anything else refused or converted by name.
#ifndef KIME_PYTHON_ARRAYS_H
#define KIME_PYTHON_ARRAYS_H

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

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

// The five arrays of a batch, and the Batch that views them.
struct BatchInputs {
  Input<uint32_t> ids, cu, markers, mcu;
  Input<uint8_t> qtype;
  Batch batch() const { return {ids.span, cu.span, markers.span, mcu.span, qtype.span}; }
};
BatchInputs batchInputs(pybind11::handle ids, pybind11::handle cu, pybind11::handle markers, pybind11::handle mcu,
                        pybind11::handle qtype);

}  // namespace kime::python

#endif  // KIME_PYTHON_ARRAYS_H
