#ifndef EMBER_NN_SAFETENSORS_H_
#define EMBER_NN_SAFETENSORS_H_

// Checkpoint files in the safetensors format (Hugging Face's), byte for byte:
//
//   [8 bytes]  N, the header length, unsigned little-endian
//   [N bytes]  a UTF-8 JSON object: for each tensor name
//                {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
//              and optionally "__metadata__": {string: string}
//   [rest]     the data: each tensor's bytes, row-major and little-endian, at
//              [begin, end) counted from the end of the header
//
// ember writes the header padded with spaces to a multiple of 8 bytes (so the data is
// aligned, as the reference writer does) and the tensors in name order. The reader
// checks everything the reference reader checks, so a malformed or hostile file is an
// InvalidArgument naming the problem, never a crash or a read outside the file.

#include <functional>
#include <map>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/atomic_file.h"
#include "tensor/tensor.h"

namespace ember::nn {

struct Safetensors {
  std::map<std::string, Tensor> tensors;        // contiguous CPU tensors
  std::map<std::string, std::string> metadata;  // "__metadata__"
};

// Writes the tensors (any layout, on any device: a GPU tensor is copied to the host)
// to `path` through a temporary file in the same folder that is renamed into place,
// so an existing file is replaced whole or not at all.
absl::Status SaveSafetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                             const std::map<std::string, std::string>& metadata = {});

// The same, for tensors made one at a time, so that only one of them is in memory at
// once (a sharded model's, each gathered from every rank): `layout` gives each
// tensor's shape and dtype, and make(name) returns it (with those; on any device),
// called once per name in name order, even after a write has failed.
struct TensorLayout {
  Shape shape;
  DType dtype = DType::kF32;
};
absl::Status SaveSafetensors(const std::string& path,
                             const std::map<std::string, TensorLayout>& layout,
                             const std::function<Tensor(const std::string&)>& make,
                             const std::map<std::string, std::string>& metadata = {});

// A safetensors file that several processes write at once, each its own blocks of the
// tensors (a sharded model's checkpoint: every rank its shards, none gathered), through
// base/atomic_file.h's SharedFileWriter: one process Create()s it (its header comes
// from the layout and metadata alone, so each process knows where every tensor lies),
// every process Open()s it with the same layout and metadata, WriteBlock()s and
// Close()s, and once all have, one Commit()s. The file is SaveSafetensors', byte for
// byte, and replaces `path` whole or not at all.
class SharedSafetensorsWriter {
 public:
  static absl::Status Create(const std::string& path,
                             const std::map<std::string, TensorLayout>& layout,
                             const std::map<std::string, std::string>& metadata = {});
  static absl::StatusOr<SharedSafetensorsWriter> Open(
      const std::string& path, const std::map<std::string, TensorLayout>& layout,
      const std::map<std::string, std::string>& metadata = {});
  static absl::Status Commit(const std::string& path) { return SharedFileWriter::Commit(path); }
  static void Abandon(const std::string& path) { SharedFileWriter::Abandon(path); }

  // Writes `block` (the tensor's dtype and rank, on any device) as the part of tensor
  // `name` that starts at index begin[d] along each dimension d (a whole tensor: all
  // zeros). Throws on a block outside the tensor.
  absl::Status WriteBlock(const std::string& name, IntSpan begin, const Tensor& block);
  absl::Status Close() { return file_.Close(); }

 private:
  SharedSafetensorsWriter(SharedFileWriter file, std::map<std::string, TensorLayout> layout,
                          std::map<std::string, uint64_t> offsets)
      : file_(std::move(file)), layout_(std::move(layout)), offsets_(std::move(offsets)) {}
  SharedFileWriter file_;
  std::map<std::string, TensorLayout> layout_;
  std::map<std::string, uint64_t> offsets_;  // each tensor's first byte in the file
};

// Memory-maps `path`; each tensor reads the mapping in place (its pages read from disk
// as they are first used; privately: writing to a tensor never changes the file), which
// lasts while any of them does. So a rank that slices its shards out of a sharded
// model's checkpoint reads only their pages. (A tensor whose offset is not a multiple of
// its element size, and a bool one, are copied out.) ember's writers replace a file
// rather than change it, so the mapping keeps reading the file as it was loaded; another
// program that truncated it in place while such tensors live would make them fault.
absl::StatusOr<Safetensors> LoadSafetensors(const std::string& path);

// The same, from the bytes of a whole file, each tensor copied out of them.
absl::StatusOr<Safetensors> ParseSafetensors(absl::string_view bytes);

// The format's dtype names ("F32", "BF16", "BOOL", ...).
absl::string_view SafetensorsDTypeName(DType dtype);

}  // namespace ember::nn

#endif  // EMBER_NN_SAFETENSORS_H_
