#include "Errors.h"

namespace py = pybind11;

namespace kime::python {

namespace {

py::object exceptionClass(const char* name) { return py::module_::import("kime.errors").attr(name); }

[[noreturn]] void raiseInstance(const py::object& cls, const py::object& instance) {
  PyErr_SetObject(cls.ptr(), instance.ptr());
  throw py::error_already_set();
}

}  // namespace

void raise(const char* name, const std::string& message) {
  py::object cls = exceptionClass(name);
  raiseInstance(cls, cls(message));
}

void raise(const Error& e) {
  switch (e.kind) {
    case ErrorKind::Batch:
      raise("BadBatch", e.text());
    case ErrorKind::Unsupported:
      raise("BadArtifact", e.text());
    case ErrorKind::Device:
      raise("DeviceError", e.text());
    case ErrorKind::NoBucket:
      break;
  }
  py::object cls = exceptionClass("NoBucket");
  py::object instance = cls(e.text());
  instance.attr("stage") = e.detail;
  instance.attr("tokens") = e.tokens;
  instance.attr("seqs") = e.seqs;
  instance.attr("markers") = e.markers;
  instance.attr("largest") = py::make_tuple(e.largest.tokens, e.largest.seqs, e.largest.markers);
  raiseInstance(cls, instance);
}

}  // namespace kime::python
