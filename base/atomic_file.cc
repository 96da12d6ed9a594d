#include "base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace ember {
namespace {

absl::Status ErrnoError(absl::string_view action, const std::string& path) {
  const int err = errno;
  std::string message = absl::StrCat("cannot ", action, " ", path, ": ", std::strerror(err));
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM || err == EROFS) return absl::PermissionDeniedError(message);
  return absl::UnavailableError(message);
}

// Writes all of `data` to fd, through short writes and interrupts.
bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

bool SyncDirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  return ::close(fd) == 0 && ok;
}

}  // namespace

absl::Status CreateDirectories(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (!error) return absl::OkStatus();
  errno = error.value();
  return ErrnoError("create the folder", dir);
}

absl::Status WriteFileAtomically(const std::string& path,
                                 const std::function<std::optional<absl::string_view>()>& next) {
  // Writes every piece to fd; after a failed write, only drains next() (errno kept for
  // the message: what next() does may change it).
  auto write_all = [&next](int fd) {
    bool ok = true;
    int error = 0;
    while (const std::optional<absl::string_view> piece = next()) {
      if (ok && !(ok = WriteAll(fd, *piece))) error = errno;
    }
    if (!ok) errno = error;
    return ok;
  };
  auto drain = [&next] {
    while (next()) {
    }
  };
  // A device or a pipe (--save_checkpoint=/dev/null, a FIFO) is written to, not replaced:
  // renaming a file over /dev/null would put a checkpoint where every program's discarded
  // output goes.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 &&
      (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      const absl::Status status = ErrnoError("open", path);
      drain();
      return status;
    }
    const bool ok = write_all(fd);
    return ::close(fd) == 0 && ok ? absl::OkStatus() : ErrnoError("write", path);
  }
  std::string temp = absl::StrCat(path, kAtomicTempInfix, "XXXXXX");
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) {
    const absl::Status status = ErrnoError("create a temporary file beside", path);
    drain();
    return status;
  }
  bool ok = write_all(fd);
  // mkstemp makes the file 0600; what ember writes is as readable as any file the user makes.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ok = ok && ::fchmod(fd, 0666 & ~mask) == 0 && ::fsync(fd) == 0;
  ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(temp.c_str(), path.c_str()) == 0) {
    if (!SyncDirectoryOf(path)) return ErrnoError("sync the directory of", path);
    return absl::OkStatus();
  }
  absl::Status status = ErrnoError("write", path);
  ::unlink(temp.c_str());
  return status;
}

namespace {

// A device or a pipe is written to, not replaced (as WriteFileAtomically does).
bool IsSpecial(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 &&
         (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

std::string SharedTemp(const std::string& path) {
  return IsSpecial(path) ? path : absl::StrCat(path, kAtomicTempInfix, "shared");
}

}  // namespace

absl::Status SharedFileWriter::Create(const std::string& path, absl::string_view head,
                                      uint64_t size) {
  const std::string temp = SharedTemp(path);
  // 0666 less the umask: as readable as any file the user makes.
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return ErrnoError("create a temporary file beside", path);
  bool ok = WriteAll(fd, head) && (temp == path || ::ftruncate(fd, static_cast<off_t>(size)) == 0);
  ok = ::close(fd) == 0 && ok;
  if (ok) return absl::OkStatus();
  absl::Status status = ErrnoError("write", path);
  Abandon(path);
  return status;
}

absl::StatusOr<SharedFileWriter> SharedFileWriter::Open(const std::string& path) {
  std::string temp = SharedTemp(path);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open the temporary file beside", path);
  return SharedFileWriter(std::move(temp), fd);
}

SharedFileWriter::SharedFileWriter(SharedFileWriter&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

SharedFileWriter::~SharedFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status SharedFileWriter::Write(uint64_t offset, absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (written < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("write", path_);
    }
    bytes.remove_prefix(static_cast<size_t>(written));
    offset += static_cast<uint64_t>(written);
  }
  return absl::OkStatus();
}

absl::Status SharedFileWriter::Close() {
  const bool ok = ::fsync(fd_) == 0 || errno == EINVAL;  // EINVAL: a device with nothing to sync
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) == 0 && ok) return absl::OkStatus();
  return ErrnoError("write", path_);
}

absl::Status SharedFileWriter::Commit(const std::string& path) {
  const std::string temp = SharedTemp(path);
  if (temp == path) return absl::OkStatus();  // a device: written in place
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    absl::Status status = ErrnoError("write", path);
    ::unlink(temp.c_str());
    return status;
  }
  if (!SyncDirectoryOf(path)) return ErrnoError("sync the directory of", path);
  return absl::OkStatus();
}

void SharedFileWriter::Abandon(const std::string& path) {
  const std::string temp = SharedTemp(path);
  if (temp != path) ::unlink(temp.c_str());
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::Span<const absl::string_view> pieces) {
  size_t i = 0;
  return WriteFileAtomically(path, [&]() -> std::optional<absl::string_view> {
    if (i == pieces.size()) return std::nullopt;
    return pieces[i++];
  });
}

}  // namespace ember
