"""torch.utils.tensorboard's SummaryWriter for scalars, writing TensorBoard's own event
files without TensorBoard installed: each record is its length (uint64, little-endian),
the length's masked CRC-32C, an Event protocol buffer, and the Event's masked CRC-32C, in
log_dir/events.out.tfevents.<time>.<host>.<pid>.<n><suffix>. An Event here is
wall_time (field 1, double), step (2, varint) and either file_version (3) or a Summary
(5) of one Value: tag (1) and simple_value (2, float). `tensorboard --logdir` reads
them; so does anything that reads TFRecords."""

import os
import socket
import struct
import time

__all__ = ["SummaryWriter"]


def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1  # Castagnoli's polynomial, reflected
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _masked(crc: int) -> int:
    """TFRecord's masking, so that a CRC stored in the data does not checksum itself."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative steps as two's complement, as protobuf's int64
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:  # a length-delimited field
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _event(wall_time: float, step: int, file_version: str = None, tag: str = None, value: float = None) -> bytes:
    event = b"\x09" + struct.pack("<d", wall_time) + b"\x10" + _varint(step)
    if file_version is not None:
        return event + _field(3, file_version.encode("utf-8"))
    summary_value = _field(1, tag.encode("utf-8")) + b"\x15" + struct.pack("<f", value)
    return event + _field(5, _field(1, summary_value))


def _record(data: bytes) -> bytes:
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", _masked(crc32c(length))) + data + struct.pack("<I", _masked(crc32c(data)))


class SummaryWriter:
    """Scalars to an event file in log_dir (default runs/<date>_<host><comment>). Events
    are kept until max_queue of them wait or flush_secs have passed since the last
    write to disk, and written then, at flush() and at close()."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if purge_step is not None:
            raise ValueError("SummaryWriter: purge_step is not supported (ember's writer only appends)")
        if log_dir is None:
            log_dir = os.path.join("runs", time.strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname() + comment)
        os.makedirs(log_dir, exist_ok=True)
        self.log_dir, self.max_queue, self.flush_secs = log_dir, max_queue, flush_secs
        name = f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}.0{filename_suffix}"
        self._path = os.path.join(log_dir, name)
        self._file = open(self._path, "ab")
        self._pending = [_record(_event(time.time(), 0, file_version="brain.Event:2"))]
        self._last_flush = time.time()
        self.flush()

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """One value of the series `tag` at global_step (0 when None)."""
        if new_style or double_precision:
            raise ValueError("add_scalar: new_style and double_precision (tensor summaries) are not supported")
        if self._file is None:
            raise ValueError("add_scalar: the SummaryWriter is closed")
        value = float(scalar_value.item() if hasattr(scalar_value, "item") else scalar_value)
        step = int(global_step) if global_step is not None else 0
        wall = float(walltime) if walltime is not None else time.time()
        self._pending.append(_record(_event(wall, step, tag=tag, value=value)))
        if len(self._pending) >= self.max_queue or time.time() - self._last_flush >= self.flush_secs:
            self.flush()

    def flush(self):
        if self._file is None:
            return
        self._file.write(b"".join(self._pending))
        self._file.flush()
        self._pending = []
        self._last_flush = time.time()

    def close(self):
        if self._file is not None:
            self.flush()
            self._file.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
