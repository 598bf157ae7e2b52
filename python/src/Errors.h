// Raising kime's errors as the Python exceptions of kime/errors.py, with the runtime's messages.
#ifndef KIME_PYTHON_ERRORS_H
#define KIME_PYTHON_ERRORS_H

#include <pybind11/pybind11.h>

#include <string>

#include "kime/batch.h"

namespace kime::python {

// Raises `name` (a class of kime.errors) with `message`; never returns.
[[noreturn]] void raise(const char* name, const std::string& message);

// Raises the exception of `e`'s kind: BadBatch, NoBucket (with its stage, counts and the
// stage's largest bucket as attributes), BadArtifact (Unsupported), DeviceError.
[[noreturn]] void raise(const Error& e);

}  // namespace kime::python

#endif  // KIME_PYTHON_ERRORS_H
