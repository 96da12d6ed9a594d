#include "nn/safetensors.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/kill_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nn/layers.h"
#include "tensor/creation.h"
#include "tensor/random.h"

namespace ember::nn {
namespace {

using ::testing::HasSubstr;

std::string TempDir() { return std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp"; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A file made by hand: the 8-byte length, `header`, then `data`.
std::string File(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

void ExpectMalformed(const std::string& bytes, const std::string& message) {
  absl::StatusOr<Safetensors> result = ParseSafetensors(bytes);
  ASSERT_FALSE(result.ok()) << "accepted: " << bytes.substr(0, 200);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr(message));
}

TEST(Safetensors, RoundTripsEveryDTypeLayoutAndMetadata) {
  Generator gen(7);
  std::map<std::string, Tensor> tensors = {
      {"f32", Randn({3, 4}, gen)},
      {"f64", Randn({2, 2}, gen, DType::kF64)},
      {"bf16", Randn({5}, gen).To(DType::kBF16)},
      {"f16", Randn({2, 3}, gen).To(DType::kF16)},
      {"i32", FromVector<int32_t>({-1, 0, 1 << 30})},
      {"i64", FromVector<int64_t>({int64_t{1} << 40, -7})},
      {"u8", FromVector<uint8_t>({0, 255, 3})},
      {"u16", FromVector<uint16_t>({65535, 1})},
      {"bool", FromVector<bool>({true, false, true})},
      {"scalar", Full({}, 2.5)},
      {"empty", Zeros({0, 3})},
      {"transposed", Arange(6).View({2, 3}).Transpose(0, 1)},  // not contiguous
  };
  const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"step", "12"}};
  const std::string path = TempDir() + "/all.safetensors";
  ASSERT_TRUE(SaveSafetensors(path, tensors, metadata).ok());

  absl::StatusOr<Safetensors> loaded = LoadSafetensors(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->metadata, metadata);
  ASSERT_EQ(loaded->tensors.size(), tensors.size());
  for (const auto& [name, tensor] : tensors) {
    SCOPED_TRACE(name);
    const Tensor& got = loaded->tensors.at(name);
    EXPECT_EQ(got.dtype(), tensor.dtype());
    EXPECT_EQ(got.shape(), tensor.shape());
    EXPECT_TRUE(got.is_contiguous());
    const Tensor want = tensor.Contiguous();
    EXPECT_EQ(
        std::string(static_cast<const char*>(got.raw_data()), got.numel() * got.itemsize()),
        std::string(static_cast<const char*>(want.raw_data()), want.numel() * want.itemsize()));
  }
  EXPECT_EQ(loaded->tensors.at("transposed").ToVector<int64_t>(),
            (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
}

TEST(Safetensors, WritesThePaddedLayoutOfTheFormat) {
  const std::string path = TempDir() + "/layout.safetensors";
  ASSERT_TRUE(SaveSafetensors(path,
                              {{"b", FromVector<float>({1, 2})}, {"a", Zeros({1}, DType::kI64)}},
                              {{"k", "v"}})
                  .ok());
  const std::string bytes = ReadFile(path);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ((8 + n) % 8, 0u) << "the data starts 8-byte aligned";
  const std::string header = bytes.substr(8, n);
  // Keys in name order, offsets in the same order, then padding spaces.
  EXPECT_THAT(header, HasSubstr("\"__metadata__\":{\"k\":\"v\"}"));
  EXPECT_THAT(header, HasSubstr("\"a\":{\"data_offsets\":[0,8],\"dtype\":\"I64\",\"shape\":[1]}"));
  EXPECT_THAT(header, HasSubstr("\"b\":{\"data_offsets\":[8,16],\"dtype\":\"F32\",\"shape\":[2]}"));
  EXPECT_EQ(bytes.size(), 8 + n + 16);
  float second;
  std::memcpy(&second, bytes.data() + 8 + n + 12, 4);
  EXPECT_EQ(second, 2.0f);
}

// A file written a tensor at a time (a sharded checkpoint's gathers) is the same file,
// asking for each tensor once, in name order; a tensor that is not its layout's is a bug.
TEST(Safetensors, TensorsMadeOneAtATimeWriteTheSameFile) {
  Generator gen(4);
  const std::map<std::string, Tensor> tensors = {{"b", Randn({3, 2}, gen)},
                                                 {"a", Arange(0, 5).To(DType::kI64)}};
  const std::string whole = TempDir() + "/whole.safetensors",
                    streamed = TempDir() + "/streamed.safetensors";
  ASSERT_TRUE(SaveSafetensors(whole, tensors, {{"step", "3"}}).ok());
  std::vector<std::string> asked;
  const std::map<std::string, TensorLayout> layout = {{"a", {{5}, DType::kI64}},
                                                      {"b", {{3, 2}, DType::kF32}}};
  ASSERT_TRUE(SaveSafetensors(streamed, layout,
                              [&](const std::string& name) {
                                asked.push_back(name);
                                return tensors.at(name);
                              },
                              {{"step", "3"}})
                  .ok());
  EXPECT_EQ(asked, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ReadFile(streamed), ReadFile(whole));
  EXPECT_THROW(
      SaveSafetensors(streamed, layout, [&](const std::string&) { return tensors.at("b"); }),
      Error);
}

// Three writers, as three ranks: a [4, 6] tensor in blocks of columns (a split along
// the last dimension: one write per row), a [6, 3, 2] one in blocks of rows and of the
// middle dimension, a scalar and a whole tensor; written in any order, they make
// SaveSafetensors' file byte for byte.
TEST(Safetensors, SharedWritersMakeTheSameFile) {
  Generator gen(5);
  const std::map<std::string, Tensor> tensors = {{"cols", Randn({4, 6}, gen)},
                                                 {"rows", Randn({6, 3, 2}, gen)},
                                                 {"scalar", Full({}, 7, DType::kI64)},
                                                 {"whole", Arange(0, 5).To(DType::kBF16)}};
  const std::map<std::string, std::string> metadata = {{"step", "3"}};
  const std::string want = TempDir() + "/one.safetensors", got = TempDir() + "/shared.safetensors";
  ASSERT_TRUE(SaveSafetensors(want, tensors, metadata).ok());
  std::map<std::string, TensorLayout> layout;
  for (const auto& [name, t] : tensors) layout[name] = {t.shape(), t.dtype()};
  ASSERT_TRUE(SharedSafetensorsWriter::Create(got, layout, metadata).ok());
  std::vector<SharedSafetensorsWriter> writers;
  for (int w = 0; w < 3; ++w) {
    absl::StatusOr<SharedSafetensorsWriter> writer =
        SharedSafetensorsWriter::Open(got, layout, metadata);
    ASSERT_TRUE(writer.ok()) << writer.status();
    writers.push_back(*std::move(writer));
  }
  const Tensor& cols = tensors.at("cols");
  const Tensor& rows = tensors.at("rows");
  for (int w = 2; w >= 0; --w) {
    ASSERT_TRUE(writers[w].WriteBlock("cols", {0, 2 * w}, cols.Narrow(1, 2 * w, 2)).ok());
    ASSERT_TRUE(writers[w].WriteBlock("rows", {2 * w, 0, 0}, rows.Narrow(0, 2 * w, 2)).ok());
  }
  ASSERT_TRUE(writers[1].WriteBlock("scalar", {}, tensors.at("scalar")).ok());
  ASSERT_TRUE(writers[0].WriteBlock("whole", {0}, tensors.at("whole")).ok());
  EXPECT_EQ(ReadFile(got + ".tmp-shared").size(), ReadFile(want).size());
  for (SharedSafetensorsWriter& w : writers) ASSERT_TRUE(w.Close().ok());
  ASSERT_TRUE(SharedSafetensorsWriter::Commit(got).ok());
  EXPECT_EQ(ReadFile(got), ReadFile(want));

  // The middle dimension of the [6, 3, 2] tensor in blocks of 1 (runs of 2 elements).
  ASSERT_TRUE(SharedSafetensorsWriter::Create(got, layout, metadata).ok());
  absl::StatusOr<SharedSafetensorsWriter> writer =
      SharedSafetensorsWriter::Open(got, layout, metadata);
  ASSERT_TRUE(writer.ok());
  for (int k = 0; k < 3; ++k)
    ASSERT_TRUE(writer->WriteBlock("rows", {0, k, 0}, rows.Narrow(1, k, 1)).ok());
  for (const char* name : {"cols", "scalar", "whole"}) {
    const std::vector<int64_t> zeros(tensors.at(name).dim(), 0);
    ASSERT_TRUE(writer->WriteBlock(name, zeros, tensors.at(name)).ok());
  }
  ASSERT_TRUE(writer->Close().ok());
  ASSERT_TRUE(SharedSafetensorsWriter::Commit(got).ok());
  EXPECT_EQ(ReadFile(got), ReadFile(want));
  EXPECT_THROW((void)writer->WriteBlock("cols", {3, 0}, cols.Narrow(0, 0, 2)), Error);
}

// Loaded tensors read the file's mapping in place, privately: writing to one changes
// neither the file nor a second load, and the tensors outlive the Safetensors struct.
TEST(Safetensors, LoadedTensorsAreMappedPrivately) {
  const std::string path = TempDir() + "/mapped.safetensors";
  ASSERT_TRUE(SaveSafetensors(path, {{"w", Arange(0, 6).Reshape({2, 3})}}).ok());
  const std::string bytes = ReadFile(path);
  Tensor w;
  {
    absl::StatusOr<Safetensors> file = LoadSafetensors(path);
    ASSERT_TRUE(file.ok()) << file.status();
    w = file->tensors.at("w");
  }
  EXPECT_EQ(w.ToVector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  w.Fill(7);
  EXPECT_EQ(w.ToVector<float>(), std::vector<float>(6, 7));
  EXPECT_EQ(ReadFile(path), bytes);
  EXPECT_EQ(LoadSafetensors(path)->tensors.at("w").ToVector<float>(),
            (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST(Safetensors, ModuleStateDictRoundTrips) {
  Generator gen(1);
  Linear a(4, 3, true, gen), b(4, 3, true, gen);
  const std::string path = TempDir() + "/linear.safetensors";
  ASSERT_TRUE(SaveSafetensors(path, a.StateDict()).ok());
  absl::StatusOr<Safetensors> loaded = LoadSafetensors(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(b.LoadStateDict(loaded->tensors).ok());
  EXPECT_EQ(b.weight().ToVector<float>(), a.weight().ToVector<float>());
  EXPECT_EQ(b.bias().ToVector<float>(), a.bias().ToVector<float>());
}

TEST(Safetensors, ReplacesAnExistingFileWholeAndLeavesNoTemporaryFile) {
  const std::string dir = TempDir() + "/replace";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/model.safetensors";
  ASSERT_TRUE(SaveSafetensors(path, {{"x", Ones({1000})}}).ok());
  ASSERT_TRUE(SaveSafetensors(path, {{"y", Zeros({2})}}).ok());
  absl::StatusOr<Safetensors> loaded = LoadSafetensors(path);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->tensors.count("x"), 0u);
  EXPECT_EQ(loaded->tensors.at("y").numel(), 2);

  // A failed save leaves the old file as it was.
  const std::string before = ReadFile(path);
  EXPECT_FALSE(SaveSafetensors(path, {{"bad\xff", Ones({1})}}).ok());
  EXPECT_FALSE(SaveSafetensors(path, {{"__metadata__", Ones({1})}}).ok());
  EXPECT_FALSE(SaveSafetensors(path, {{"undefined", Tensor()}}).ok());
  EXPECT_EQ(ReadFile(path), before);
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1) << "a temporary file was left in " << dir;
}

TEST(Safetensors, FileErrorsAreStatuses) {
  EXPECT_EQ(LoadSafetensors(TempDir() + "/missing.safetensors").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(LoadSafetensors(TempDir()).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SaveSafetensors(TempDir() + "/no/such/dir/x.safetensors", {{"x", Ones({1})}}).code(),
            absl::StatusCode::kNotFound);
  const std::string empty = TempDir() + "/empty.safetensors";
  WriteFile(empty, "");
  absl::Status status = LoadSafetensors(empty).status();
  EXPECT_THAT(std::string(status.message()), HasSubstr(empty));
  EXPECT_THAT(std::string(status.message()), HasSubstr("too short"));
}

TEST(Safetensors, EmptyHeaderObjectIsAnEmptyFile) {
  absl::StatusOr<Safetensors> result = ParseSafetensors(File("{}"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->tensors.empty());
}

TEST(Safetensors, ReadsBoolBytesAsPyTorchDoes) {
  absl::StatusOr<Safetensors> result =
      ParseSafetensors(File(R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})",
                            std::string("\x00\x02\x01", 3)));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->tensors.at("m").ToVector<bool>(), (std::vector<bool>{false, true, true}));
}

TEST(SafetensorsMalformed, TruncatedFiles) {
  ExpectMalformed("", "too short");
  ExpectMalformed(std::string("\x10\x00\x00", 3), "too short");
  ExpectMalformed(File("{}").substr(0, 9), "only 1 bytes follow");
  const std::string whole =
      File(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", std::string(8, '\0'));
  ASSERT_TRUE(ParseSafetensors(whole).ok());
  ExpectMalformed(whole.substr(0, whole.size() - 1), "beyond the 7 data bytes");
  ExpectMalformed(whole.substr(0, 30), "follow it");
}

TEST(SafetensorsMalformed, HeaderLongerThanTheFileOrTheLimit) {
  std::string bytes = File("{}");
  bytes[0] = 100;  // claims 100 header bytes; 2 follow
  ExpectMalformed(bytes, "header length is 100 bytes but only 2");
  bytes[5] = 1;  // 2^40 + 100
  ExpectMalformed(bytes, "limit");
  bytes = std::string(8, '\xff');  // 2^64 - 1: no overflow in the bounds check
  ExpectMalformed(bytes, "limit");
}

TEST(SafetensorsMalformed, HeaderThatIsNotAJsonObject) {
  ExpectMalformed(File("[1, 2]"), "does not start with '{'");
  ExpectMalformed(File(" {}"), "does not start with '{'");
  ExpectMalformed(File(R"({"x": })"), "not valid JSON");
  ExpectMalformed(File(R"({"x": 1} trailing)"), "not valid JSON");
  ExpectMalformed(File("{\"x\xff\": 1}"), "not valid JSON");             // not UTF-8
  ExpectMalformed(File("{\"\xc3\x28\": 1}"), "not valid JSON");          // a bad continuation byte
  ExpectMalformed(File("{\"x\": \"\xed\xa0\x80\"}"), "not valid JSON");  // a UTF-16 surrogate
  // Deep nesting is parsed without recursion (and then refused).
  ExpectMalformed(File("{\"x\":" + std::string(200000, '[') + std::string(200000, ']') + "}"),
                  "not a JSON object");
}

TEST(SafetensorsMalformed, BadEntries) {
  const std::string data(8, '\0');
  ExpectMalformed(File(R"({"x":{"dtype":"I8","shape":[8],"data_offsets":[0,8]}})", data),
                  "dtype \"I8\", which ember does not support");
  ExpectMalformed(File(R"({"x":{"dtype":7,"shape":[2],"data_offsets":[0,8]}})", data),
                  "not a string");
  ExpectMalformed(File(R"({"x":{"shape":[2],"data_offsets":[0,8]}})", data), "has no \"dtype\"");
  ExpectMalformed(File(R"({"x":{"dtype":"F32","data_offsets":[0,8]}})", data), "has no \"shape\"");
  ExpectMalformed(File(R"({"x":{"dtype":"F32","shape":[2]}})", data), "has no \"data_offsets\"");
  ExpectMalformed(File(R"({"x":[1]})", data), "is not a JSON object");
  ExpectMalformed(File(R"({"x":{"dtype":"F32","shape":2,"data_offsets":[0,8]}})", data),
                  "shape that is not an array");
  ExpectMalformed(File(R"({"x":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data),
                  "shape[0] is -2, not a non-negative integer");
  ExpectMalformed(File(R"({"x":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", data),
                  "not a non-negative integer");
  ExpectMalformed(
      File(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", data),
      "too large to address");
  ExpectMalformed(File(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data),
                  "which is 12 bytes, but data_offsets [0,8] hold 8");
  ExpectMalformed(File(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", data),
                  "not a pair");
  ExpectMalformed(File(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", data),
                  "end before they begin");
  ExpectMalformed(File(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,"8"]}})", data),
                  "data_offsets[1]");
  ExpectMalformed(File(R"({"__metadata__":[1]})"), "__metadata__ is not a JSON object");
  ExpectMalformed(File(R"({"__metadata__":{"a":1}})"), "__metadata__ \"a\" is not a string");
}

TEST(SafetensorsMalformed, OffsetsOutOfBoundsOverlappingOrLeavingGaps) {
  const std::string data(16, '\0');
  ExpectMalformed(File(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})", data),
                  "beyond the 16 data bytes");
  ExpectMalformed(
      File(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[18446744073709551608,0]}})", data),
      "end before they begin");
  ExpectMalformed(File(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
                       R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                       data),
                  "overlaps tensor 'a'");
  ExpectMalformed(File(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                       R"("b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})",
                       data),
                  "bytes [8, 12) of the data belong to no tensor");
  ExpectMalformed(File(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", data),
                  "the last tensor ends at byte 8 of the data but the file has 16");
}

// SIGKILLed at 20 random moments while it saves one 8 MB checkpoint after another, the
// writer always leaves a checkpoint that loads whole: version v holds the value v % 4 in
// every element and "v" in its metadata, so a torn or mixed file would show. The tensors
// are made before the fork, so that the child spends its life saving.
TEST(Safetensors, AWriterKilledMidSaveAlwaysLeavesALoadableCheckpoint) {
  const std::string dir = TempDir() + "/killed";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/model.safetensors";
  constexpr int64_t kElements = 2 << 20;
  std::vector<Tensor> values;
  for (int v = 0; v < 4; ++v) values.push_back(Full({kElements}, static_cast<float>(v)));
  auto save = [&](int64_t version) {
    return SaveSafetensors(path, {{"w", values[version % 4]}},
                           {{"version", std::to_string(version)}})
        .ok();
  };
  ASSERT_TRUE(save(0));
  int64_t last = 0;
  int torn = 0;
  for (int kill = 0; kill < 20; ++kill) {
    ASSERT_TRUE(WriteUntilKilled(save, last + 1, 1, 100, kill));
    absl::StatusOr<Safetensors> loaded = LoadSafetensors(path);
    ASSERT_TRUE(loaded.ok()) << "after kill " << kill << ": " << loaded.status();
    const int64_t version = std::stoll(loaded->metadata.at("version"));
    ASSERT_GE(version, last);
    const Tensor& w = loaded->tensors.at("w");
    ASSERT_EQ(w.numel(), kElements);
    ASSERT_EQ(
        std::count(w.data<float>(), w.data<float>() + kElements, static_cast<float>(version % 4)),
        kElements)
        << "after kill " << kill;
    last = version;
    torn += RemoveTornTemporaries(dir);
  }
  EXPECT_GE(torn, 1) << "no kill landed inside a save; the test proved nothing";
}

}  // namespace
}  // namespace ember::nn
