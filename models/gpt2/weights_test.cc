#include "models/gpt2/weights.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "autograd/autograd.h"
#include "gtest/gtest.h"
#include "models/gpt2/trainer.h"
#include "nn/safetensors.h"
#include "tensor/creation.h"

namespace ember::models::gpt2 {
namespace {

constexpr char kDir[] = "models/gpt2/testdata/";

// tiny_logits.txt (tools/reference/gpt2_export.py): PyTorch's numbers for its model.
std::map<std::string, std::vector<double>> Reference() {
  std::ifstream in(std::string(kDir) + "tiny_logits.txt");
  std::map<std::string, std::vector<double>> lines;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    double v;
    while (words >> v) lines[name].push_back(v);
  }
  return lines;
}

// The model from `path` reproduces PyTorch's logits and loss on the reference ids.
void ExpectPyTorchsNumbers(const std::string& path, const std::string& format) {
  const Weights w = ReadWeights(path).value();
  EXPECT_EQ(w.format, format);
  EXPECT_EQ(w.config.ToString(),
            "GPTConfig(vocab_size=96, block_size=16, n_layer=2, n_head=4, n_embd=32, dropout=0)");
  std::unique_ptr<GPT> model = LoadGpt(path).value();
  model->Eval();
  const auto ref = Reference();
  std::vector<int64_t> ids;
  for (double v : ref.at("ids")) ids.push_back(static_cast<int64_t>(v));
  autograd::NoGradGuard no_grad;
  const Tensor x = FromVector(std::vector<int64_t>(ids.begin(), ids.end() - 1), {1, 12});
  const Tensor y = FromVector(std::vector<int64_t>(ids.begin() + 1, ids.end()), {1, 12});
  EXPECT_NEAR(model->Loss(x, y).item<double>(), ref.at("loss")[0], 1e-5 * ref.at("loss")[0]);
  const std::vector<float> logits = (*model)(x).ToVector<float>();
  double sumsq = 0;
  for (float v : logits) sumsq += double(v) * v;
  EXPECT_NEAR(sumsq, ref.at("logits.sumsq")[0], 1e-5 * sumsq);
  const std::vector<double>& samples = ref.at("logits.samples");
  for (size_t k = 0; k < samples.size(); ++k) {
    EXPECT_NEAR(logits[(k * 7919 + 13) % logits.size()], samples[k], 1e-4) << k;
  }
}

TEST(WeightsTest, LlmcCheckpoint) {
  ExpectPyTorchsNumbers(std::string(kDir) + "tiny_llmc.bin", "llm.c");
}

TEST(WeightsTest, HuggingFaceFolderOrFile) {
  ExpectPyTorchsNumbers(std::string(kDir) + "tiny_hf", "huggingface");
  ExpectPyTorchsNumbers(std::string(kDir) + "tiny_hf/model.safetensors", "huggingface");
}

TEST(WeightsTest, EmberCheckpointRoundTrip) {
  // An ember checkpoint of the llm.c model (with a made-up optimizer entry) reads back as
  // the same weights.
  const Weights llmc = ReadWeights(std::string(kDir) + "tiny_llmc.bin").value();
  std::map<std::string, Tensor> tensors = llmc.state;
  tensors["optimizer.0.step"] = Zeros({}, DType::kI64);
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/ember.safetensors";
  ASSERT_TRUE(
      nn::SaveSafetensors(path, tensors,
                          {{"format", kCheckpointFormat}, {"config", ConfigJson(llmc.config)}})
          .ok());
  const Weights back = ReadWeights(path).value();
  EXPECT_EQ(back.format, "ember");
  EXPECT_EQ(back.state.size(), llmc.state.size());
  EXPECT_EQ(back.state.at("h.1.mlp.c_fc.weight").ToVector<float>(),
            llmc.state.at("h.1.mlp.c_fc.weight").ToVector<float>());
}

TEST(WeightsTest, TheTrainerStartsFromAnyFormat) {
  TrainOptions options;
  options.steps = 2;
  options.warmup_steps = 1;
  options.seq_len = 8;
  for (const char* file : {"tiny_llmc.bin", "tiny_hf"}) {
    auto trainer = Trainer::Create(GPTConfig::Preset("tiny").value(), options, {}, nullptr,
                                   std::string(kDir) + file)
                       .value();
    EXPECT_EQ(trainer->gpt()->config().vocab_size, 96) << file;
    EXPECT_EQ(trainer->step(), 0);
  }
  const auto resumed = Trainer::Create(GPTConfig::Preset("tiny").value(), options, {}, nullptr,
                                       std::string(kDir) + "tiny_llmc.bin", /*resume=*/true);
  EXPECT_NE(resumed.status().message().find("is not an ember GPT-2 checkpoint"), std::string::npos);
}

TEST(WeightsTest, BrokenFilesSayWhatIsWrong) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  std::ifstream in(std::string(kDir) + "tiny_llmc.bin", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir + "/cut.bin", std::ios::binary) << bytes.substr(0, bytes.size() - 4);
  EXPECT_NE(ReadWeights(dir + "/cut.bin").status().message().find("bytes, but its header"),
            std::string::npos);
  std::string v7 = bytes;
  v7[4] = 7;
  std::ofstream(dir + "/v7.bin", std::ios::binary) << v7;
  EXPECT_NE(ReadWeights(dir + "/v7.bin").status().message().find("llm.c checkpoint version 7"),
            std::string::npos);
  std::ofstream(dir + "/junk.bin", std::ios::binary) << "hello";
  EXPECT_NE(ReadWeights(dir + "/junk.bin").status().message().find("neither an llm.c checkpoint"),
            std::string::npos);
  EXPECT_EQ(ReadWeights(dir + "/missing").status().code(), absl::StatusCode::kNotFound);
  // A safetensors file without config.json beside it.
  ASSERT_TRUE(nn::SaveSafetensors(dir + "/lone.safetensors", {{"wte.weight", Zeros({2, 2})}}).ok());
  EXPECT_NE(ReadWeights(dir + "/lone.safetensors").status().message().find("needs config.json"),
            std::string::npos);
}

// Headers that promise more than the file holds are refused before the memory is
// taken: the allocator's peak stays where it was.
TEST(WeightsTest, HeadersThatPromiseTooMuchAllocateNothing) {
  const std::string dir = std::getenv("TEST_TMPDIR");
  std::ifstream in(std::string(kDir) + "tiny_llmc.bin", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // llm.c: 2^31 - 1 layers of one head 2^30 wide (no int64 holds the bytes that needs).
  std::string huge = bytes;
  const int32_t layers = INT32_MAX, heads = 1, width = 1 << 30;
  std::memcpy(&huge[16], &layers, 4);  // header[4], n_layer
  std::memcpy(&huge[20], &heads, 4);
  std::memcpy(&huge[24], &width, 4);
  std::ofstream(dir + "/huge.bin", std::ios::binary) << huge;
  GetCpuAllocator().ResetPeak();
  const int64_t before = GetCpuAllocator().peak_bytes();
  EXPECT_NE(ReadWeights(dir + "/huge.bin").status().message().find("needs more than 2^63"),
            std::string::npos);
  EXPECT_EQ(GetCpuAllocator().peak_bytes(), before);
  // An ember checkpoint whose config asks for 10^12 parameters.
  const std::string config =
      R"({"vocab_size":1000000,"block_size":1024,"n_layer":100,"n_head":8,"n_embd":8192,"dropout":0})";
  ASSERT_TRUE(nn::SaveSafetensors(dir + "/big_config.safetensors", {{"wte.weight", Zeros({2, 2})}},
                                  {{"format", kCheckpointFormat}, {"config", config}})
                  .ok());
  const absl::StatusOr<std::unique_ptr<GPT>> model = LoadGpt(dir + "/big_config.safetensors");
  EXPECT_NE(model.status().message().find("has 88741691392 parameters, the file holds 4"),
            std::string::npos)
      << model.status();
  EXPECT_LT(GetCpuAllocator().peak_bytes(), before + (int64_t{1} << 20));
}

TEST(WeightsTest, ConfigCountsItsParameters) {
  Generator gen(0);
  const GPTConfig tiny = *GPTConfig::Preset("tiny");
  EXPECT_EQ(tiny.NumParameters(), GPT(tiny, gen).NumParameters());
  GPTConfig huge = tiny;
  huge.n_layer = int64_t{1} << 40;
  EXPECT_EQ(huge.NumParameters(), INT64_MAX);
}

}  // namespace
}  // namespace ember::models::gpt2
