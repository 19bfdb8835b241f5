// dtype.h — element types (numbered as ONNX TensorProto.DataType).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tinyrt {

enum class DType : uint8_t {
  Undefined = 0,
  F32 = 1,
  U8 = 2,
  I8 = 3,
  U16 = 4,
  I16 = 5,
  I32 = 6,
  I64 = 7,
  String = 8,
  Bool = 9,
  F16 = 10,
  F64 = 11,
  U32 = 12,
  U64 = 13,
  BF16 = 16,
};

// The integer type of index arithmetic in generated code and in Expr.
constexpr DType kIndexType = DType::I32;

int dtype_bytes(DType t);  // 0 for Undefined/String
const char *dtype_name(DType t);
bool dtype_is_float(DType t);
bool dtype_is_int(DType t);  // signed or unsigned integer, not bool
bool dtype_is_signed(DType t);
// True for types the code generator computes with.
bool dtype_supported(DType t);
// float16 and bfloat16 are storage types: computed as float32, rounded
// when stored or cast.
bool dtype_is_half(DType t);
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);  // round to nearest even
float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float f);  // truncates, as ONNX's reference does

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape &s);

// Counts of an untrusted model's work and sizes that saturate at
// INT64_MAX instead of wrapping (non-negative operands).
inline int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}
inline int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
std::string shape_str(const Shape &s);
// Row-major strides in elements.
std::vector<int64_t> row_major_strides(const Shape &s);

}  // namespace tinyrt
