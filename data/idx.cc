#include "data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tensor/creation.h"

namespace ember::data {
namespace {

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

// Reads exactly n bytes (gzread reads plain files as they are); false at the end.
bool ReadExactly(gzFile f, void* out, size_t n) {
  auto* p = static_cast<unsigned char*>(out);
  while (n > 0) {
    const int chunk = static_cast<int>(std::min<size_t>(n, 1 << 30));
    const int got = gzread(f, p, static_cast<unsigned>(chunk));
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

struct IdxType {
  unsigned char code;
  int bytes;
  DType dtype;
  const char* name;
};

constexpr IdxType kTypes[] = {
    {0x08, 1, DType::kU8, "unsigned byte"}, {0x09, 1, DType::kI32, "signed byte"},
    {0x0B, 2, DType::kI32, "short"},        {0x0C, 4, DType::kI32, "int"},
    {0x0D, 4, DType::kF32, "float"},        {0x0E, 8, DType::kF64, "double"},
};

// Big-endian bytes -> host value of `bytes` bytes, sign-extended for the signed types.
template <typename T>
T FromBigEndian(const unsigned char* p, int bytes, bool is_signed) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = v << 8 | p[i];
  if constexpr (std::is_integral_v<T>) {
    if (is_signed && bytes < 8 && (v >> (8 * bytes - 1)) & 1) v |= ~uint64_t{0} << (8 * bytes);
    return static_cast<T>(static_cast<int64_t>(v));
  } else {
    if (bytes == 4) {
      const uint32_t w = static_cast<uint32_t>(v);
      float f;
      std::memcpy(&f, &w, 4);
      return f;
    }
    double d;
    std::memcpy(&d, &v, 8);
    return d;
  }
}

}  // namespace

absl::StatusOr<Tensor> ReadIdx(const std::string& path) {
  GzFile f(gzopen(path.c_str(), "rb"));
  if (f == nullptr) return absl::NotFoundError(absl::StrCat("cannot open IDX file ", path));
  auto bad = [&](size_t offset, absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": at byte ", offset, ": ", what));
  };
  unsigned char magic[4];
  if (!ReadExactly(f.get(), magic, 4)) return bad(0, "truncated: no 4-byte magic number");
  if (magic[0] != 0 || magic[1] != 0) {
    return bad(0,
               absl::StrCat("not an IDX file: the magic number starts ", static_cast<int>(magic[0]),
                            " ", static_cast<int>(magic[1]), ", not 0 0"));
  }
  const IdxType* type = nullptr;
  for (const IdxType& t : kTypes) {
    if (t.code == magic[2]) type = &t;
  }
  if (type == nullptr)
    return bad(2, absl::StrCat("unknown IDX type code ", static_cast<int>(magic[2])));
  const int ndims = magic[3];
  if (ndims == 0) return bad(3, "an IDX array needs at least one dimension");
  std::vector<int64_t> dims(ndims);
  // count: the elements; sizes: the product of the dimensions that are not 0, which
  // must stay addressable too (a tensor's shape is multiplied out in int64).
  int64_t count = 1, sizes = 1;
  for (int d = 0; d < ndims; ++d) {
    unsigned char b[4];
    const size_t offset = 4 + 4 * static_cast<size_t>(d);
    if (!ReadExactly(f.get(), b, 4)) return bad(offset, absl::StrCat("truncated in dimension ", d));
    dims[d] = static_cast<int64_t>(uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 |
                                   uint32_t{b[2]} << 8 | b[3]);
    if (dims[d] > (int64_t{1} << 31) - 1)
      return bad(offset, absl::StrCat("dimension ", d, " is negative"));
    if (dims[d] != 0 && sizes > (int64_t{1} << 40) / dims[d]) {
      return bad(offset, "the array would be over 1 TB (or, with a dimension of 0, its shape)");
    }
    sizes *= std::max<int64_t>(dims[d], 1);
    count *= dims[d];
  }
  const size_t header = 4 + 4 * static_cast<size_t>(ndims);
  const size_t data_bytes = static_cast<size_t>(count) * static_cast<size_t>(type->bytes);
  // Read in chunks of at most 1 MiB straight into `raw` (which grows geometrically), so
  // that a header promising terabytes fails at the end of the file rather than
  // allocating them first, and a small file takes no more than it holds.
  std::string raw;
  while (raw.size() < data_bytes) {
    const size_t held = raw.size();
    const size_t want = std::min<size_t>(data_bytes - held, size_t{1} << 20);
    raw.resize(held + want);
    const int got = gzread(f.get(), raw.data() + held, static_cast<unsigned>(want));
    raw.resize(held + static_cast<size_t>(std::max(got, 0)));
    if (got <= 0) {
      return bad(header + held,
                 absl::StrCat("truncated: the dimensions call for ", data_bytes, " bytes of ",
                              type->name, " data, the file holds ", held));
    }
  }
  unsigned char extra;
  if (gzread(f.get(), &extra, 1) == 1) {
    return bad(header + data_bytes, "trailing bytes after the data the dimensions call for");
  }
  Tensor t = Empty(dims, type->dtype);
  const bool is_signed = type->code == 0x09 || type->code == 0x0B || type->code == 0x0C;
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw.data());
  switch (type->dtype) {
    case DType::kU8:
      if (data_bytes > 0)
        std::memcpy(t.data<uint8_t>(), raw.data(),
                    data_bytes);  // an empty tensor has no data pointer
      break;
    case DType::kI32: {
      int32_t* out = t.data<int32_t>();
      for (int64_t i = 0; i < count; ++i)
        out[i] = FromBigEndian<int32_t>(bytes + i * type->bytes, type->bytes, is_signed);
      break;
    }
    case DType::kF32: {
      float* out = t.data<float>();
      for (int64_t i = 0; i < count; ++i) out[i] = FromBigEndian<float>(bytes + i * 4, 4, false);
      break;
    }
    default: {
      double* out = t.data<double>();
      for (int64_t i = 0; i < count; ++i) out[i] = FromBigEndian<double>(bytes + i * 8, 8, false);
    }
  }
  return t;
}

absl::Status WriteIdx(const Tensor& t, const std::string& path) {
  const IdxType* type = nullptr;
  for (const IdxType& k : kTypes) {
    if (k.dtype == t.dtype() &&
        (k.code == 0x08 || k.code == 0x0C || k.code == 0x0D || k.code == 0x0E))
      type = &k;
  }
  if (type == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("IDX holds u8, i32, f32 or f64, not ", DTypeName(t.dtype())));
  }
  if (t.dim() == 0 || t.dim() > 255)
    return absl::InvalidArgumentError("IDX arrays have 1 to 255 dimensions");
  const Tensor c = t.Contiguous();
  std::string bytes = {0, 0, static_cast<char>(type->code), static_cast<char>(t.dim())};
  auto put = [&](uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) bytes.push_back(static_cast<char>(v >> (8 * i)));
  };
  for (const int64_t d : t.shape()) put(static_cast<uint64_t>(d), 4);
  const auto* p = static_cast<const unsigned char*>(c.raw_data());
  for (int64_t i = 0; i < c.numel(); ++i) {
    uint64_t v = 0;
    std::memcpy(&v, p + i * type->bytes, type->bytes);  // host (little-endian) order
    put(v, type->bytes);
  }
  GzFile f(gzopen(path.c_str(), absl::EndsWith(path, ".gz") ? "wb" : "wbT"));
  if (f == nullptr || gzwrite(f.get(), bytes.data(), static_cast<unsigned>(bytes.size())) !=
                          static_cast<int>(bytes.size())) {
    return absl::InternalError(absl::StrCat("cannot write ", path));
  }
  if (gzclose(f.release()) != Z_OK) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace ember::data
