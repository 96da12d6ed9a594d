#include "data/loader.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tensor/random.h"

namespace ember::data {

BatchFn RowBatches(Tensor x, Tensor y) {
  x = x.Contiguous();
  y = y.Contiguous();
  return [x, y](absl::Span<const int64_t> indices) {
    auto gather = [&](const Tensor& t) {
      Shape shape = t.shape();
      const int64_t row_bytes = t.numel() / shape[0] * ItemSize(t.dtype());
      shape[0] = static_cast<int64_t>(indices.size());
      Tensor out = Empty(shape, t.dtype());
      const char* src = static_cast<const char*>(t.raw_data());
      char* dst = static_cast<char*>(out.raw_data());
      for (size_t i = 0; i < indices.size(); ++i)
        std::memcpy(dst + i * row_bytes, src + indices[i] * row_bytes, row_bytes);
      return out;
    };
    return Batch{gather(x), gather(y)};
  };
}

std::vector<int64_t> DataLoader::Order(int64_t size, uint64_t seed, int64_t epoch, bool shuffle) {
  std::vector<int64_t> order(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) order[i] = i;
  if (shuffle) {
    Generator gen(seed);
    gen.set_offset(static_cast<uint64_t>(epoch) << 40);  // each epoch its own Philox stream
    for (int64_t i = size - 1; i > 0; --i)
      std::swap(order[i], order[gen.NextBelow(static_cast<uint64_t>(i) + 1)]);
  }
  return order;
}

absl::StatusOr<std::unique_ptr<DataLoader>> DataLoader::Create(int64_t size, BatchFn fn,
                                                               LoaderOptions options) {
  if (size < 1) return absl::InvalidArgumentError("a data loader needs at least one example");
  if (options.batch_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch_size ", options.batch_size, " must be at least 1"));
  }
  if (options.drop_last && size < options.batch_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("with drop_last, ", size, " examples make no batch of ", options.batch_size));
  }
  return std::unique_ptr<DataLoader>(new DataLoader(size, std::move(fn), options));
}

DataLoader::DataLoader(int64_t size, BatchFn fn, LoaderOptions options)
    : size_(size), fn_(std::move(fn)), options_(options) {
  batches_ = options_.drop_last ? size_ / options_.batch_size
                                : (size_ + options_.batch_size - 1) / options_.batch_size;
  order_ = Order(size_, options_.seed, 0, options_.shuffle);
  if (options_.prefetch > 0) {
    for (int w = 0; w < std::max(1, options_.workers); ++w)
      workers_.emplace_back([this] { Work(); });
  }
}

DataLoader::~DataLoader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& w : workers_) w.join();
}

absl::Span<const int64_t> DataLoader::Indices(int64_t batch) const {
  const int64_t begin = batch * options_.batch_size;
  const int64_t end = std::min(size_, begin + options_.batch_size);
  return absl::MakeConstSpan(order_).subspan(static_cast<size_t>(begin),
                                             static_cast<size_t>(end - begin));
}

void DataLoader::StartEpoch(int64_t epoch, int64_t first_batch) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
    ready_.clear();
    order_ = Order(size_, options_.seed, epoch, options_.shuffle);
    next_to_make_ = next_to_hand_ = std::clamp<int64_t>(first_batch, 0, batches_);
  }
  cv_.notify_all();
}

void DataLoader::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] {
      return stop_ ||
             (next_to_make_ < batches_ && next_to_make_ < next_to_hand_ + options_.prefetch);
    });
    if (stop_) return;
    const int64_t batch = next_to_make_++;
    const int64_t generation = generation_;
    const std::vector<int64_t> indices(Indices(batch).begin(), Indices(batch).end());
    lock.unlock();
    Batch made = fn_(indices);
    lock.lock();
    if (generation == generation_) {
      ready_.emplace(batch, std::move(made));
      cv_.notify_all();
    }
  }
}

std::optional<Batch> DataLoader::Next() {
  if (workers_.empty()) {
    if (next_to_hand_ >= batches_) return std::nullopt;
    return fn_(Indices(next_to_hand_++));
  }
  std::unique_lock<std::mutex> lock(mu_);
  if (next_to_hand_ >= batches_) return std::nullopt;
  cv_.wait(lock, [&] { return ready_.count(next_to_hand_) > 0; });
  auto node = ready_.extract(next_to_hand_++);
  lock.unlock();
  cv_.notify_all();  // a worker may make the next one now
  return std::move(node.mapped());
}

}  // namespace ember::data
