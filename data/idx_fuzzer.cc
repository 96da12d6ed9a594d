// libFuzzer target for the IDX reader (ember_fuzzer, base/fuzzer.bzl). For any bytes,
// read as they are (zlib reads a gzip stream, a plain file as it is) and, unless they
// are gzip already, gzip-compressed: ReadIdx gives the same answer for both (a tensor,
// or InvalidArgument), never crashes and never takes more memory than the data holds;
// a tensor it gives, WriteIdx writes and ReadIdx reads back unchanged.

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/fuzz_input.h"
#include "data/idx.h"

namespace {

bool SameTensor(const ember::Tensor& a, const ember::Tensor& b) {
  const size_t bytes = static_cast<size_t>(a.numel() * a.itemsize());
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (bytes == 0 || std::memcmp(a.raw_data(), b.raw_data(), bytes) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ember::FuzzCheck;
  const absl::StatusOr<ember::Tensor> plain =
      ember::data::ReadIdx(ember::FuzzInputFile("input.idx", data, size));
  if (!plain.ok()) {
    FuzzCheck(plain.status().code() == absl::StatusCode::kInvalidArgument,
              absl::StrCat("a malformed file is not InvalidArgument: ", plain.status().ToString()));
  }
  if (!(size >= 2 && data[0] == 0x1F &&
        data[1] == 0x8B)) {  // compressing gzip again would change it
    // A gzip stream (window bits 15 + 16), as in Fashion-MNIST's .gz files.
    std::string packed(compressBound(size) + 32, '\0');
    z_stream z = {};
    FuzzCheck(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK,
              "deflateInit2");
    z.next_in = const_cast<Bytef*>(data);
    z.avail_in = static_cast<uInt>(size);
    z.next_out = reinterpret_cast<Bytef*>(packed.data());
    z.avail_out = static_cast<uInt>(packed.size());
    FuzzCheck(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
    packed.resize(z.total_out);
    deflateEnd(&z);
    const absl::StatusOr<ember::Tensor> unpacked =
        ember::data::ReadIdx(ember::FuzzInputFile("input.idx.gz", packed));
    FuzzCheck(unpacked.ok() == plain.ok(), "gzip changes whether the file is read");
    if (plain.ok()) FuzzCheck(SameTensor(*plain, *unpacked), "gzip changes what is read");
  }
  if (!plain.ok()) return 0;
  const std::string path = ember::FuzzInputFile("rewritten.idx", "");
  FuzzCheck(ember::data::WriteIdx(*plain, path).ok(), "what was read cannot be written");
  const absl::StatusOr<ember::Tensor> back = ember::data::ReadIdx(path);
  FuzzCheck(back.ok() && SameTensor(*plain, *back), "what was written reads back differently");
  return 0;
}
