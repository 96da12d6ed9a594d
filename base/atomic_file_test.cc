#include "base/atomic_file.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/kill_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ember {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string FreshDir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(AtomicFile, WritesThePiecesInOrderAndReplacesTheOldFile) {
  const std::string dir = FreshDir("pieces");
  const std::string path = dir + "/a.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "an old, longer content").ok());
  const absl::string_view pieces[] = {"new ", "", "content"};
  ASSERT_TRUE(WriteFileAtomically(path, pieces).ok());
  EXPECT_EQ(Read(path), "new content");
  EXPECT_EQ(RemoveTornTemporaries(dir), 0);  // nothing left beside it
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

// Pieces made one at a time: each is written before the next is asked for; after a
// failed write (/dev/full: no space) the rest are still asked for (a writer whose
// pieces come from collectives stays in step with the other ranks), and the error says why.
TEST(AtomicFile, PiecesMadeOneAtATimeAreAllAskedForEvenAfterAFailure) {
  const std::string path = FreshDir("streamed") + "/a.txt";
  int asked = 0;
  std::string piece;
  auto next = [&]() -> std::optional<absl::string_view> {
    if (asked == 3) return std::nullopt;
    piece = std::string(1, static_cast<char>('a' + asked++));  // overwrites the last one
    return absl::string_view(piece);
  };
  ASSERT_TRUE(WriteFileAtomically(path, next).ok());
  EXPECT_EQ(Read(path), "abc");
  asked = 0;
  const absl::Status full = WriteFileAtomically("/dev/full", next);
  EXPECT_EQ(asked, 3);
  EXPECT_EQ(full.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(full.message()), HasSubstr("cannot write /dev/full: No space left"));
}

TEST(AtomicFile, GetsTheUsersUsualPermissions) {
  const std::string path = FreshDir("mode") + "/a.txt";
  const mode_t old = ::umask(022);
  ASSERT_TRUE(WriteFileAtomically(path, "x").ok());
  ::umask(old);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);  // not mkstemp's 0600
}

TEST(AtomicFile, AMissingDirectoryIsNotFoundAndNamesThePath) {
  const std::string path = FreshDir("missing") + "/no/such/dir/a.txt";
  const absl::Status status = WriteFileAtomically(path, "x");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()), HasSubstr("no/such/dir/a.txt"));
}

TEST(AtomicFile, APathThatIsADirectoryFailsAndLeavesNoTemporaryFile) {
  const std::string dir = FreshDir("isdir");
  fs::create_directory(dir + "/target");
  const absl::Status status = WriteFileAtomically(dir + "/target", "x");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("cannot write " + dir + "/target"));
  EXPECT_EQ(RemoveTornTemporaries(dir), 0);
  EXPECT_TRUE(fs::is_directory(dir + "/target"));
}

// Killed at random moments, the writer leaves either the old or the new whole file: each
// version is 4 MB of one repeated letter, so a torn file would mix two letters or be short.
// A pipe (as /dev/null, a device) is written to, not replaced by a file.
TEST(AtomicFile, APipeIsWrittenToNotReplaced) {
  const std::string path = FreshDir("fifo") + "/pipe";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = Read(path); });  // opening blocks until the writer opens
  const absl::string_view pieces[] = {"through ", "the pipe"};
  const absl::Status status = WriteFileAtomically(path, pieces);
  reader.join();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(got, "through the pipe");
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(
      std::distance(fs::directory_iterator(fs::path(path).parent_path()), fs::directory_iterator()),
      1);
}

TEST(AtomicFile, AKilledWriterNeverLeavesATornFile) {
  const std::string dir = FreshDir("killed");
  const std::string path = dir + "/a.bin";
  constexpr size_t kSize = 4 << 20;
  auto contents = [](int64_t version) {
    return std::string(kSize, static_cast<char>('a' + version % 26));
  };
  ASSERT_TRUE(WriteFileAtomically(path, contents(0)).ok());
  int torn = 0;
  for (int kill = 0; kill < 20; ++kill) {
    ASSERT_TRUE(WriteUntilKilled(
        [&](int64_t v) { return WriteFileAtomically(path, contents(v)).ok(); }, 1, 1, 30, kill));
    const std::string got = Read(path);
    ASSERT_EQ(got.size(), kSize) << "after kill " << kill;
    ASSERT_EQ(got.find_first_not_of(got[0]), std::string::npos) << "after kill " << kill;
    torn += RemoveTornTemporaries(dir);
  }
  EXPECT_GE(torn, 1) << "no kill landed inside a write; the test proved nothing";
}

// Several writers (here: three handles, as three ranks would hold) each write their own
// byte ranges, in any order; the committed file is their bytes over the head, and it
// replaces the old file only at the commit.
TEST(SharedFile, WritersFillTheirRangesAndTheCommitReplacesTheOldFile) {
  const std::string dir = FreshDir("shared");
  const std::string path = dir + "/a.bin";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  ASSERT_TRUE(SharedFileWriter::Create(path, "head:", 11).ok());
  std::vector<SharedFileWriter> writers;
  for (int w = 0; w < 3; ++w) {
    absl::StatusOr<SharedFileWriter> writer = SharedFileWriter::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.status();
    writers.push_back(*std::move(writer));
  }
  ASSERT_TRUE(writers[2].Write(9, "ef").ok());
  ASSERT_TRUE(writers[0].Write(5, "ab").ok());
  ASSERT_TRUE(writers[1].Write(7, "cd").ok());
  EXPECT_EQ(Read(path), "old") << "not before the commit";
  for (SharedFileWriter& w : writers) ASSERT_TRUE(w.Close().ok());
  ASSERT_TRUE(SharedFileWriter::Commit(path).ok());
  EXPECT_EQ(Read(path), "head:abcdef");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  // An abandoned write leaves the file as it was and nothing beside it.
  ASSERT_TRUE(SharedFileWriter::Create(path, "x", 4).ok());
  SharedFileWriter::Abandon(path);
  EXPECT_EQ(Read(path), "head:abcdef");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  EXPECT_THAT(SharedFileWriter::Open(dir + "/missing.bin").status().message(),
              HasSubstr("missing.bin"));
  // /dev/null is written to, never replaced or removed.
  ASSERT_TRUE(SharedFileWriter::Create("/dev/null", "head", 8).ok());
  absl::StatusOr<SharedFileWriter> null = SharedFileWriter::Open("/dev/null");
  ASSERT_TRUE(null.ok() && null->Write(4, "abcd").ok() && null->Close().ok());
  ASSERT_TRUE(SharedFileWriter::Commit("/dev/null").ok());
  SharedFileWriter::Abandon("/dev/null");
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST(SharedFile, AKilledWriterNeverLeavesATornFile) {
  const std::string dir = FreshDir("shared_killed");
  const std::string path = dir + "/a.bin";
  constexpr size_t kSize = 4 << 20;
  auto write = [&](int64_t version) {
    const std::string half(kSize / 2, static_cast<char>('a' + version % 26));
    if (!SharedFileWriter::Create(path, "", kSize).ok()) return false;
    for (int w = 0; w < 2; ++w) {
      absl::StatusOr<SharedFileWriter> writer = SharedFileWriter::Open(path);
      if (!writer.ok() || !writer->Write(w * kSize / 2, half).ok() || !writer->Close().ok())
        return false;
    }
    return SharedFileWriter::Commit(path).ok();
  };
  ASSERT_TRUE(write(0));
  int torn = 0;
  for (int kill = 0; kill < 20; ++kill) {
    ASSERT_TRUE(WriteUntilKilled(write, 1, 1, 30, kill));
    const std::string got = Read(path);
    ASSERT_EQ(got.size(), kSize) << "after kill " << kill;
    ASSERT_EQ(got.find_first_not_of(got[0]), std::string::npos) << "after kill " << kill;
    torn += RemoveTornTemporaries(dir);
  }
  EXPECT_GE(torn, 1) << "no kill landed inside a write; the test proved nothing";
}

}  // namespace
}  // namespace ember
