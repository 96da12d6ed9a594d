#ifndef EMBER_DATA_IDX_H_
#define EMBER_DATA_IDX_H_

// IDX files, the format of MNIST and Fashion-MNIST (plain or gzip-compressed): two zero
// bytes, a type byte, the number of dimensions, each dimension as a big-endian int32,
// then the values, big-endian, row-major. Every malformation is an InvalidArgument that
// names the file and the byte offset (in the decompressed data) where it was found.

#include <string>

#include "absl/status/statusor.h"
#include "tensor/tensor.h"

namespace ember::data {

// The array as a tensor: unsigned bytes as u8, signed bytes and shorts widened to i32,
// int32 as i32, float as f32, double as f64.
absl::StatusOr<Tensor> ReadIdx(const std::string& path);

// Writes `t` (u8, i32, f32 or f64) as an IDX file; gzip-compressed when the path ends
// in ".gz".
absl::Status WriteIdx(const Tensor& t, const std::string& path);

}  // namespace ember::data

#endif  // EMBER_DATA_IDX_H_
