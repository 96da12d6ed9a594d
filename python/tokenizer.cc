// The tokenizer in `ember._ember`, for ember.tokenizer (python/ember/tokenizer.py, which
// gives it tiktoken's API). Encoding and decoding release the GIL.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "python/status.h"
#include "tokenizer/encoding.h"
#include "tokenizer/vocab.h"

namespace py = pybind11;

namespace ember::python {
namespace {

using tokenizer::Encoding;
using tokenizer::Rank;
using Specials = absl::flat_hash_set<std::string>;

Specials ToSpecials(const std::vector<std::string>& names) {
  return Specials(names.begin(), names.end());
}

// bytes from a std::string without a UTF-8 decode.
py::bytes Bytes(const std::string& s) { return py::bytes(s.data(), s.size()); }

}  // namespace

void BindTokenizer(py::module_& m) {
  m.def("encoding_names", &tokenizer::EncodingNames, "The encodings load_encoding knows, by name.");
  m.def(
      "load_encoding",
      [](const std::string& name, const std::string& vocab_dir) {
        return ValueOrRaise(tokenizer::LoadEncoding(name, vocab_dir));
      },
      py::arg("name"), py::arg("vocab_dir"),
      "One of tiktoken's encodings, from the vocabulary files in vocab_dir.");

  m.def(
      "make_encoding",
      [](std::string name, const std::string& pattern, const py::dict& mergeable_ranks,
         const py::dict& special_tokens) {
        tokenizer::Ranks ranks;
        for (const auto& [bytes, rank] : mergeable_ranks) {
          ranks[bytes.cast<std::string>()] = rank.cast<Rank>();
        }
        absl::flat_hash_map<std::string, Rank> specials;
        for (const auto& [text, id] : special_tokens) {
          specials[text.cast<std::string>()] = id.cast<Rank>();
        }
        return ValueOrRaise(
            Encoding::Create(std::move(name), pattern, std::move(ranks), std::move(specials)));
      },
      py::arg("name"), py::arg("pat_str"), py::arg("mergeable_ranks"), py::arg("special_tokens"),
      "tiktoken's Encoding(name, pat_str=, mergeable_ranks=, special_tokens=).");

  py::class_<Encoding>(m, "Encoding")
      .def_property_readonly("name", &Encoding::name)
      .def_property_readonly("pattern", &Encoding::pattern)
      .def_property_readonly("mergeable_ranks",
                             [](const Encoding& e) {
                               py::dict d;
                               for (const auto& [bytes, rank] : e.ranks()) d[Bytes(bytes)] = rank;
                               return d;
                             })
      .def(
          "rank_of",
          [](const Encoding& e, const std::string& bytes) -> std::optional<Rank> {
            const auto it = e.ranks().find(bytes);
            if (it == e.ranks().end()) return std::nullopt;
            return it->second;
          },
          py::arg("bytes"), "The mergeable token's rank, or None.")
      .def("token_byte_values",
           [](const Encoding& e) {
             std::vector<std::string> values;
             values.reserve(e.ranks().size());
             for (const auto& [bytes, rank] : e.ranks()) values.push_back(bytes);
             std::sort(values.begin(), values.end());
             py::list out;
             for (const std::string& v : values) out.append(Bytes(v));
             return out;
           })
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
            return ValueOrRaise(
                e.EncodeDisallowing(text, ToSpecials(allowed), ToSpecials(disallowed), threads));
          },
          py::arg("text"), py::arg("allowed"), py::arg("disallowed"), py::arg("threads") = 1,
          py::call_guard<py::gil_scoped_release>())
      .def(
          "encode_batch",
          [](const Encoding& e, const std::vector<std::string>& texts,
             const std::vector<std::string>& allowed, const std::vector<std::string>& disallowed,
             int threads) {
            return ValueOrRaise(
                e.EncodeBatch(texts, ToSpecials(allowed), ToSpecials(disallowed), threads));
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

}  // namespace ember::python
