#include "ir/dtype.h"

#include "ir/error.h"

#include <cmath>
#include <cstring>

namespace tinyrt {

int dtype_bytes(DType t) {
  switch (t) {
    case DType::F32:
    case DType::I32:
    case DType::U32: return 4;
    case DType::U8:
    case DType::I8:
    case DType::Bool: return 1;
    case DType::U16:
    case DType::I16:
    case DType::F16:
    case DType::BF16: return 2;
    case DType::I64:
    case DType::U64:
    case DType::F64: return 8;
    default: return 0;
  }
}

const char *dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "float32";
    case DType::U8: return "uint8";
    case DType::I8: return "int8";
    case DType::U16: return "uint16";
    case DType::I16: return "int16";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::String: return "string";
    case DType::Bool: return "bool";
    case DType::F16: return "float16";
    case DType::F64: return "float64";
    case DType::U32: return "uint32";
    case DType::U64: return "uint64";
    case DType::BF16: return "bfloat16";
    default: return "undefined";
  }
}

bool dtype_is_float(DType t) { return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16; }

bool dtype_is_half(DType t) { return t == DType::F16 || t == DType::BF16; }

float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (man << 13);
  } else if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal half: normalize
      int e = -1;
      do {
        ++e;
        man <<= 1;
      } while (!(man & 0x400));
      bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
    }
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  float a = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7e00;
  if (a >= 65520.0f) return sign | 0x7c00;  // rounds to infinity
  if (a < 6.103515625e-05f) {               // subnormal or zero: multiples of 2^-24
    return sign | (uint16_t)std::nearbyint(a * 16777216.0f);
  }
  uint32_t e = ((x >> 23) & 0xff) - 127 + 15, m = x & 0x7fffff;
  uint32_t h = (e << 10) | (m >> 13);
  uint32_t rest = m & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // may carry into the exponent: correct
  return sign | (uint16_t)h;
}

float bf16_to_float(uint16_t h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_bf16(float f) {
  // Truncation, as ONNX's reference implementation (onnx 1.12) casts.
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f)) return (uint16_t)((x >> 16) | 0x40);
  return (uint16_t)(x >> 16);
}

bool dtype_is_int(DType t) {
  switch (t) {
    case DType::U8:
    case DType::I8:
    case DType::U16:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::U32:
    case DType::U64: return true;
    default: return false;
  }
}

bool dtype_is_signed(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64 || dtype_is_float(t);
}

bool dtype_supported(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F64:
    case DType::F16:
    case DType::BF16:
    case DType::Bool:
    case DType::I8:
    case DType::U8:
    case DType::I16:
    case DType::U16:
    case DType::I32:
    case DType::U32:
    case DType::I64:
    case DType::U64: return true;
    default: return false;
  }
}

int64_t shape_numel(const Shape &s) {
  // Dimensions come from untrusted models: the product must not wrap.
  int64_t n = 1;
  for (int64_t d : s)
    if (__builtin_mul_overflow(n, d, &n))
      fail_invalid("shape " + shape_str(s) + " has more elements than a 64-bit count holds");
  return n;
}

std::string shape_str(const Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

std::vector<int64_t> row_major_strides(const Shape &s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

}  // namespace tinyrt
