#ifndef EMBER_BASE_ATOMIC_FILE_H_
#define EMBER_BASE_ATOMIC_FILE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace ember {

// Replaces the file at `path` with the concatenation of `pieces`, so that a reader, a
// killed process or a power cut finds either the old file or the whole new one, never a
// torn one. Every file ember writes for a user to keep goes through here (checkpoints,
// token shards, vocabularies, metrics summaries, loss pictures).
//
// The steps, each needed for the promise:
//   1. the bytes go to a fresh temporary file beside `path` (`path.tmp-XXXXXX`, same
//      directory so that the rename cannot cross file systems);
//   2. it gets the permissions any new file of the user gets (0666 & ~umask);
//   3. fsync(file): its data is on disk before its name is;
//   4. rename(temp, path): atomic on POSIX; readers see old or new;
//   5. fsync(directory): the rename itself survives a power cut.
// A `path` that is a device or a pipe (/dev/null, a FIFO) is simply written to: it is not
// a file to keep, and replacing it would be wrong.
// On failure the temporary file is removed and `path` is untouched. A process killed
// between 1 and 4 leaves a `path.tmp-*` file behind, which is never read as `path`
// (checkpoints.cc's pruning removes the checkpoints' ones).
//
// Errors: NotFound (the directory does not exist), PermissionDenied, or Unavailable
// (disk full, I/O error), each naming the path and the system's reason.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::Span<const absl::string_view> pieces);

inline absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  return WriteFileAtomically(path, absl::MakeConstSpan(&contents, 1));
}

// The same, with the pieces made one at a time, so that a file larger than the memory
// at hand can be written (a sharded checkpoint, gathered a tensor at a time): next()
// returns the next piece, valid until the following call, or nullopt after the last. It
// is called to the end even after a write has failed, so that a writer whose pieces
// come from collectives stays in step with the ranks that make them with it.
absl::Status WriteFileAtomically(const std::string& path,
                                 const std::function<std::optional<absl::string_view>()>& next);

// The same promise for a file that several processes write at once, each its own byte
// ranges (a sharded checkpoint: every rank its shards). One process Create()s the
// temporary file `path.tmp-shared` with its first bytes and its whole size; every
// writer then Open()s it, Write()s at offsets and Close()s it (which syncs its data);
// once all have, one process Commit()s: the rename into place and the directory's sync.
// A process killed before the rename leaves `path` as it was. A device such as /dev/null
// is written in place, as above.
class SharedFileWriter {
 public:
  static absl::Status Create(const std::string& path, absl::string_view head, uint64_t size);
  static absl::StatusOr<SharedFileWriter> Open(const std::string& path);
  static absl::Status Commit(const std::string& path);
  // Removes the temporary file of a write that failed on some process.
  static void Abandon(const std::string& path);

  SharedFileWriter(SharedFileWriter&& other) noexcept;
  SharedFileWriter& operator=(SharedFileWriter&&) = delete;
  ~SharedFileWriter();

  absl::Status Write(uint64_t offset, absl::string_view bytes);
  absl::Status Close();  // fsync, then close

 private:
  SharedFileWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;  // the temporary file's
  int fd_;
};

// Creates `dir` and its missing parents, as `mkdir -p`: a folder a binary writes to
// (--out_dir). An error names the folder and the system's reason.
absl::Status CreateDirectories(const std::string& dir);

// The suffix of the temporary files above, for code that cleans up after a crash.
inline constexpr char kAtomicTempInfix[] = ".tmp-";

}  // namespace ember

#endif  // EMBER_BASE_ATOMIC_FILE_H_
