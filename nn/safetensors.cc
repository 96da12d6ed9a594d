#include "nn/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/atomic_file.h"
#include "base/error.h"
#include "base/status.h"
#include "nlohmann/json.hpp"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; ember copies it as it is");

namespace ember::nn {
namespace {

using json = nlohmann::json;

// The reference implementation refuses headers above this size too.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

constexpr std::pair<DType, const char*> kDTypeNames[] = {
    {DType::kF32, "F32"}, {DType::kF64, "F64"}, {DType::kBF16, "BF16"},
    {DType::kF16, "F16"}, {DType::kI32, "I32"}, {DType::kI64, "I64"},
    {DType::kU8, "U8"},   {DType::kU16, "U16"}, {DType::kBool, "BOOL"},
};

absl::Status Malformed(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed safetensors file: ", what));
}

absl::Status ErrnoError(absl::string_view action, const std::string& path) {
  const int err = errno;
  std::string message = absl::StrCat("cannot ", action, " ", path, ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  return absl::UnavailableError(message);
}

// One header entry, checked on its own; the layout is checked across entries after.
struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin, end;
};

absl::StatusOr<uint64_t> ReadUnsigned(const json& value, const std::string& what) {
  if (!value.is_number_unsigned()) {
    return Malformed(absl::StrCat(what, " is ", value.dump(), ", not a non-negative integer"));
  }
  return value.get<uint64_t>();
}

absl::StatusOr<Entry> ParseEntry(const std::string& name, const json& info) {
  const std::string where = absl::StrCat("tensor '", name, "'");
  if (!info.is_object()) return Malformed(absl::StrCat(where, " is not a JSON object"));
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    if (!info.contains(key)) return Malformed(absl::StrCat(where, " has no \"", key, "\""));
  }
  Entry entry;
  entry.name = name;

  const json& dtype = info["dtype"];
  if (!dtype.is_string())
    return Malformed(absl::StrCat(where, " has a dtype that is not a string"));
  const auto* known =
      std::find_if(std::begin(kDTypeNames), std::end(kDTypeNames),
                   [&](const auto& p) { return dtype.get<std::string>() == p.second; });
  if (known == std::end(kDTypeNames)) {
    std::vector<std::string> names;
    for (const auto& p : kDTypeNames) names.push_back(p.second);
    return absl::InvalidArgumentError(
        absl::StrCat("safetensors ", where, " has dtype ", dtype.dump(),
                     ", which ember does not support (it reads ", absl::StrJoin(names, ", "), ")"));
  }
  entry.dtype = known->first;

  const json& shape = info["shape"];
  if (!shape.is_array()) return Malformed(absl::StrCat(where, " has a shape that is not an array"));
  // Elements times item size, refusing anything that overflows 63 bits.
  uint64_t nbytes = static_cast<uint64_t>(ItemSize(entry.dtype));
  for (size_t i = 0; i < shape.size(); ++i) {
    ASSIGN_OR_RETURN(const uint64_t size,
                     ReadUnsigned(shape[i], absl::StrCat(where, " shape[", i, "]")));
    if (size > static_cast<uint64_t>(INT64_MAX) || __builtin_mul_overflow(nbytes, size, &nbytes) ||
        nbytes > static_cast<uint64_t>(INT64_MAX)) {
      return Malformed(absl::StrCat(where, " has shape ", shape.dump(), ", too large to address"));
    }
    entry.shape.push_back(static_cast<int64_t>(size));
  }

  const json& offsets = info["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    return Malformed(
        absl::StrCat(where, " has data_offsets ", offsets.dump(), ", not a pair [begin, end]"));
  }
  ASSIGN_OR_RETURN(entry.begin, ReadUnsigned(offsets[0], where + " data_offsets[0]"));
  ASSIGN_OR_RETURN(entry.end, ReadUnsigned(offsets[1], where + " data_offsets[1]"));
  if (entry.end < entry.begin) {
    return Malformed(
        absl::StrCat(where, " has data_offsets ", offsets.dump(), " that end before they begin"));
  }
  if (entry.end - entry.begin != nbytes) {
    return Malformed(absl::StrCat(
        where, " has shape ", shape.dump(), " and dtype ", dtype.get<std::string>(), ", which is ",
        nbytes, " bytes, but data_offsets ", offsets.dump(), " hold ", entry.end - entry.begin));
  }
  return entry;
}

// Little-endian uint64 from 8 bytes.
uint64_t ReadLength(const char* p) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(p[i]);
  return n;
}

}  // namespace

absl::string_view SafetensorsDTypeName(DType dtype) {
  for (const auto& [d, name] : kDTypeNames) {
    if (d == dtype) return name;
  }
  throw Error(absl::StrCat("safetensors has no dtype for ", DTypeName(dtype)));
}

namespace {

// ParseSafetensors, with the tensors reading `bytes` in place (a naturally aligned one)
// when `mapping` (what keeps them alive) is given.
absl::StatusOr<Safetensors> Parse(absl::string_view bytes, const std::shared_ptr<void>& mapping) {
  if (bytes.size() < 8) {
    return Malformed(
        absl::StrCat("it is ", bytes.size(), " bytes, too short for the 8-byte header length"));
  }
  const uint64_t header_bytes = ReadLength(bytes.data());
  if (header_bytes > kMaxHeaderBytes) {
    return Malformed(absl::StrCat("the header length is ", header_bytes,
                                  " bytes, more than the format's limit of ", kMaxHeaderBytes));
  }
  if (header_bytes > bytes.size() - 8) {
    return Malformed(absl::StrCat("the header length is ", header_bytes, " bytes but only ",
                                  bytes.size() - 8, " bytes follow it (truncated?)"));
  }
  const absl::string_view header = bytes.substr(8, header_bytes);
  const absl::string_view data = bytes.substr(8 + header_bytes);
  if (header.empty() || header.front() != '{') {
    return Malformed("the header does not start with '{'");
  }
  json root;
  try {
    // Rejects invalid JSON and strings that are not UTF-8; parses iteratively, so deep
    // nesting cannot exhaust the stack. A number too large for a double is an
    // out_of_range, not a parse_error: catch every json::exception.
    root = json::parse(header.begin(), header.end());
  } catch (const json::exception& e) {
    return Malformed(absl::StrCat("the header is not valid JSON: ", e.what()));
  }
  if (!root.is_object()) return Malformed("the header is not a JSON object");

  Safetensors result;
  std::vector<Entry> entries;
  for (const auto& [name, info] : root.items()) {
    if (name == "__metadata__") {
      if (!info.is_object()) return Malformed("__metadata__ is not a JSON object");
      for (const auto& [key, value] : info.items()) {
        if (!value.is_string()) {
          return Malformed(absl::StrCat("__metadata__ \"", key, "\" is not a string"));
        }
        result.metadata[key] = value.get<std::string>();
      }
      continue;
    }
    ASSIGN_OR_RETURN(Entry entry, ParseEntry(name, info));
    entries.push_back(std::move(entry));
  }

  // The tensors must tile the data exactly: in offset order each begins where the
  // previous ended, and the last ends at the end of the file.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  uint64_t expected = 0;
  const Entry* previous = nullptr;
  for (const Entry& e : entries) {
    if (e.end > data.size()) {
      return Malformed(absl::StrCat("tensor '", e.name, "' has data_offsets [", e.begin, ", ",
                                    e.end, "] beyond the ", data.size(), " data bytes"));
    }
    if (e.begin < expected) {
      return Malformed(absl::StrCat("tensor '", e.name, "' at [", e.begin, ", ", e.end,
                                    ") overlaps tensor '", previous->name, "' ending at ",
                                    expected));
    }
    if (e.begin > expected) {
      return Malformed(
          absl::StrCat("bytes [", expected, ", ", e.begin, ") of the data belong to no tensor"));
    }
    expected = e.end;
    previous = &e;
  }
  if (expected != data.size()) {
    return Malformed(absl::StrCat("the last tensor ends at byte ", expected,
                                  " of the data but the file has ", data.size(), " data bytes"));
  }

  for (const Entry& e : entries) {
    const char* src = data.data() + e.begin;
    const size_t n = e.end - e.begin;
    if (mapping != nullptr && e.dtype != DType::kBool && n > 0 &&
        reinterpret_cast<uintptr_t>(src) % ItemSize(e.dtype) == 0) {
      const Strides strides = ContiguousStrides(e.shape);
      result.tensors.emplace(e.name,
                             Tensor(Storage::Borrow(const_cast<char*>(src), static_cast<int64_t>(n),
                                                    Device::Cpu(), mapping),
                                    0, e.shape, strides, e.dtype));
      continue;
    }
    Tensor t = Empty(e.shape, e.dtype);
    if (e.dtype == DType::kBool) {
      // A byte other than 0 or 1 is not a valid C++ bool; read it as PyTorch does.
      bool* dst = t.data<bool>();
      for (size_t i = 0; i < n; ++i) dst[i] = src[i] != 0;
    } else if (n > 0) {
      std::memcpy(t.raw_data(), src, n);
    }
    result.tensors.emplace(e.name, std::move(t));
  }
  return result;
}

}  // namespace

absl::StatusOr<Safetensors> ParseSafetensors(absl::string_view bytes) {
  return Parse(bytes, nullptr);
}

absl::StatusOr<Safetensors> LoadSafetensors(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    absl::Status status = ErrnoError("stat", path);
    ::close(fd);
    return status;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a regular file"));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* mapped = nullptr;
  if (size > 0) {  // mmap refuses an empty mapping
    // Private and writable: a write to a tensor copies its page and never reaches the file.
    mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    const int mmap_errno = errno;
    ::close(fd);  // the mapping keeps the file open
    if (mapped == MAP_FAILED) {
      errno = mmap_errno;
      return ErrnoError("memory-map", path);
    }
  } else {
    ::close(fd);
  }
  // Unmapped when the last tensor reading it goes.
  const std::shared_ptr<void> mapping(mapped, [size](void* p) {
    if (p != nullptr) ::munmap(p, size);
  });
  absl::StatusOr<Safetensors> result =
      Parse(absl::string_view(static_cast<const char*>(mapped), size), mapping);
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrCat(path, ": ", result.status().message()));
  }
  return result;
}

namespace {

// The file's first bytes (the header's length, then the header padded to 8 bytes) and
// where each tensor's data begins after them, from the layout alone.
struct Head {
  std::string bytes;
  std::map<std::string, uint64_t> offsets;
  uint64_t size = 0;  // the whole file's
};

absl::StatusOr<Head> MakeHead(const std::string& path,
                              const std::map<std::string, TensorLayout>& layout,
                              const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  Head head;
  uint64_t offset = 0;
  for (const auto& [name, info] : layout) {
    if (name == "__metadata__") {
      return absl::InvalidArgumentError("a tensor cannot be named __metadata__ in safetensors");
    }
    const uint64_t nbytes = static_cast<uint64_t>(NumElements(info.shape) * ItemSize(info.dtype));
    header[name] = {{"dtype", SafetensorsDTypeName(info.dtype)},
                    {"shape", std::vector<int64_t>(info.shape.begin(), info.shape.end())},
                    {"data_offsets", {offset, offset + nbytes}}};
    head.offsets[name] = offset;
    offset += nbytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const json::type_error& e) {  // a name or metadata string that is not UTF-8
    return absl::InvalidArgumentError(absl::StrCat("cannot write ", path, ": ", e.what()));
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  for (int i = 0; i < 8; ++i)
    head.bytes.push_back(static_cast<char>((text.size() >> (8 * i)) & 0xff));
  head.bytes += text;
  for (auto& [name, o] : head.offsets) o += head.bytes.size();
  head.size = head.bytes.size() + offset;
  return head;
}

}  // namespace

absl::Status SaveSafetensors(const std::string& path,
                             const std::map<std::string, TensorLayout>& layout,
                             const std::function<Tensor(const std::string&)>& make,
                             const std::map<std::string, std::string>& metadata) {
  ASSIGN_OR_RETURN(const Head head, MakeHead(path, layout, metadata));
  // The head, then each tensor as make() gives it (on the host).
  bool first = true;
  auto next = layout.begin();
  Tensor current;
  return WriteFileAtomically(path, [&]() -> std::optional<absl::string_view> {
    if (first) {
      first = false;
      return absl::string_view(head.bytes);
    }
    if (next == layout.end()) return std::nullopt;
    const auto& [name, info] = *next++;
    current = make(name);
    EMBER_CHECK(current.defined() && current.shape() == info.shape && current.dtype() == info.dtype,
                "safetensors: tensor '", name, "' is not the ", ShapeToString(info.shape), " ",
                DTypeName(info.dtype), " laid out for ", path);
    current = current.To(Device::Cpu()).Contiguous();  // a GPU tensor is copied to the host
    return absl::string_view(static_cast<const char*>(current.raw_data()),
                             static_cast<size_t>(current.numel() * current.itemsize()));
  });
}

absl::Status SharedSafetensorsWriter::Create(const std::string& path,
                                             const std::map<std::string, TensorLayout>& layout,
                                             const std::map<std::string, std::string>& metadata) {
  ASSIGN_OR_RETURN(const Head head, MakeHead(path, layout, metadata));
  return SharedFileWriter::Create(path, head.bytes, head.size);
}

absl::StatusOr<SharedSafetensorsWriter> SharedSafetensorsWriter::Open(
    const std::string& path, const std::map<std::string, TensorLayout>& layout,
    const std::map<std::string, std::string>& metadata) {
  ASSIGN_OR_RETURN(Head head, MakeHead(path, layout, metadata));
  ASSIGN_OR_RETURN(SharedFileWriter file, SharedFileWriter::Open(path));
  return SharedSafetensorsWriter(std::move(file), layout, std::move(head.offsets));
}

absl::Status SharedSafetensorsWriter::WriteBlock(const std::string& name, IntSpan begin,
                                                 const Tensor& block) {
  const auto it = layout_.find(name);
  EMBER_CHECK(it != layout_.end(), "safetensors: no tensor '", name, "' in the layout");
  const Shape& whole = it->second.shape;
  const int dims = static_cast<int>(whole.size());
  EMBER_CHECK(block.dtype() == it->second.dtype && block.dim() == dims &&
                  static_cast<int>(begin.size()) == dims,
              "safetensors: a block of ", ShapeToString(block.shape()), " ",
              DTypeName(block.dtype()), " at ", ShapeToString(begin), " for tensor '", name, "', ",
              ShapeToString(whole), " ", DTypeName(it->second.dtype));
  for (int d = 0; d < dims; ++d) {
    EMBER_CHECK(begin[d] >= 0 && begin[d] + block.size(d) <= whole[d], "safetensors: a block of ",
                ShapeToString(block.shape()), " at ", ShapeToString(begin), " is outside '", name,
                "', ", ShapeToString(whole));
  }
  const Tensor host = block.To(Device::Cpu()).Contiguous();
  const char* data = static_cast<const char*>(host.raw_data());
  const int64_t item = host.itemsize();
  // Runs: the block's trailing dimensions that span the whole tensor's, with the one
  // before them, are contiguous in the file; one write per index of the dimensions
  // before those.
  int inner = dims;  // the first dimension of the run
  int64_t run = 1;
  while (inner > 0) {
    --inner;
    run *= block.size(inner);
    if (block.size(inner) != whole[inner]) break;
  }
  if (dims == 0 || block.numel() == 0) {
    return dims == 0 ? file_.Write(offsets_.at(name), absl::string_view(data, item))
                     : absl::OkStatus();
  }
  std::vector<int64_t> index(inner, 0);
  for (int64_t start = 0; start < block.numel(); start += run) {
    int64_t at = 0, stride = 1;
    for (int d = dims - 1; d >= 0; --d) {
      const int64_t i = d < inner ? index[d] : 0;  // a run starts at begin[d] from `inner` on
      at += (begin[d] + i) * stride;
      stride *= whole[d];
    }
    RETURN_IF_ERROR(file_.Write(offsets_.at(name) + static_cast<uint64_t>(at * item),
                                absl::string_view(data + start * item, run * item)));
    for (int d = inner - 1; d >= 0 && ++index[d] == block.size(d); --d) index[d] = 0;
  }
  return absl::OkStatus();
}

absl::Status SaveSafetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                             const std::map<std::string, std::string>& metadata) {
  std::map<std::string, TensorLayout> layout;
  for (const auto& [name, tensor] : tensors) {
    if (!tensor.defined()) {
      return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "' is undefined"));
    }
    layout[name] = {tensor.shape(), tensor.dtype()};
  }
  return SaveSafetensors(
      path, layout, [&tensors](const std::string& name) { return tensors.at(name); }, metadata);
}

}  // namespace ember::nn
