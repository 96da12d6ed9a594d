// ember's Python extension, `ember._ember`: the C++ objects the `ember` package
// (python/ember/) wraps in Python's and tiktoken's conventions. Errors come back as
// Python exceptions: an InvalidArgument or OutOfRange status as ValueError, NotFound as
// FileNotFoundError, anything else as RuntimeError, with ember's message. Calls that
// run long (encoding, decoding) release the GIL.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tokenizer/encoding.h"
#include "tokenizer/vocab.h"

namespace py = pybind11;

namespace ember::python {
namespace {

using tokenizer::Encoding;
using tokenizer::Rank;
using Specials = absl::flat_hash_set<std::string>;

[[noreturn]] void Raise(const absl::Status& status) {
  const std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      throw py::value_error(message);
    case absl::StatusCode::kNotFound:
      PyErr_SetString(PyExc_FileNotFoundError, message.c_str());
      throw py::error_already_set();
    default:
      throw std::runtime_error(message);
  }
}

template <typename T>
T ValueOrRaise(absl::StatusOr<T> result) {
  if (!result.ok()) Raise(result.status());
  return *std::move(result);
}

Specials ToSpecials(const std::vector<std::string>& names) { return Specials(names.begin(), names.end()); }

// bytes from a std::string without a UTF-8 decode.
py::bytes Bytes(const std::string& s) { return py::bytes(s.data(), s.size()); }

void BindTokenizer(py::module_& m) {
  m.def("encoding_names", &tokenizer::EncodingNames, "The encodings load_encoding knows, by name.");
  m.def(
      "load_encoding",
      [](const std::string& name, const std::string& vocab_dir) {
        return ValueOrRaise(tokenizer::LoadEncoding(name, vocab_dir));
      },
      py::arg("name"), py::arg("vocab_dir"), "One of tiktoken's encodings, from the vocabulary files in vocab_dir.");

  py::class_<Encoding>(m, "Encoding")
      .def_property_readonly("name", &Encoding::name)
      .def_property_readonly("n_vocab", &Encoding::n_vocab)
      .def_property_readonly("special_tokens",
                             [](const Encoding& e) {
                               py::dict d;
                               for (const auto& [text, id] : e.specials()) d[py::str(text)] = id;
                               return d;
                             })
      .def(
          "encode_ordinary",
          [](const Encoding& e, const std::string& text, int threads) {
            return ValueOrRaise(e.EncodeOrdinary(text, threads));
          },
          py::arg("text"), py::arg("threads") = 1, py::call_guard<py::gil_scoped_release>())
      .def(
          "encode",
          [](const Encoding& e, const std::string& text, const std::vector<std::string>& allowed,
             const std::vector<std::string>& disallowed, int threads) {
            return ValueOrRaise(e.EncodeDisallowing(text, ToSpecials(allowed), ToSpecials(disallowed), threads));
          },
          py::arg("text"), py::arg("allowed"), py::arg("disallowed"), py::arg("threads") = 1,
          py::call_guard<py::gil_scoped_release>())
      .def(
          "encode_batch",
          [](const Encoding& e, const std::vector<std::string>& texts, const std::vector<std::string>& allowed,
             const std::vector<std::string>& disallowed, int threads) {
            return ValueOrRaise(e.EncodeBatch(texts, ToSpecials(allowed), ToSpecials(disallowed), threads));
          },
          py::arg("texts"), py::arg("allowed"), py::arg("disallowed"), py::arg("threads"),
          py::call_guard<py::gil_scoped_release>())
      .def(
          "decode_bytes",
          [](const Encoding& e, const std::vector<Rank>& ids) {
            std::string bytes;
            {
              py::gil_scoped_release release;
              bytes = ValueOrRaise(e.DecodeBytes(ids));
            }
            return Bytes(bytes);
          },
          py::arg("ids"))
      .def(
          "decode",
          [](const Encoding& e, const std::vector<Rank>& ids) {
            py::gil_scoped_release release;
            return ValueOrRaise(e.Decode(ids));
          },
          py::arg("ids"));
}

}  // namespace

PYBIND11_MODULE(_ember, m) {
  m.doc() = "ember's C++ core; import ember, not this";
  BindTokenizer(m);
}

}  // namespace ember::python
