//===- HalideBufferLayout.h - halide_buffer_t as bytes ----------*- C++ -*-===//
//
// The kernel stubs that ffn-halide-lower builds fill Halide's buffer
// descriptors field by field with llvm.store, since ffnc cannot include
// HalideRuntime.h (the generator's side of the process boundary). These are
// the offsets of Halide 14's `halide_buffer_t` and `halide_dimension_t` on
// a 64-bit target; ffnc-halide-gen, which does include HalideRuntime.h,
// static_asserts every one of them against the real structs, so a stale
// offset breaks its build instead of a kernel.
//
// Plain C++17 with no dependency: the generator includes it too.
//
//===----------------------------------------------------------------------===//

#ifndef FFN_TARGET_HALIDE_HALIDEBUFFERLAYOUT_H
#define FFN_TARGET_HALIDE_HALIDEBUFFERLAYOUT_H

#include <cstdint>

namespace ffnc::halide {

/// The module attribute (a StringAttr) holding HalideRequest::print() of
/// every kernel ffn-halide-lower lowered, with the module's Halide target.
constexpr const char *kHalideRequestAttrName = "ffn.halide_request";

/// halide_buffer_t: sizeof and the byte offset of each field.
constexpr int64_t kBufferBytes = 56;
constexpr int64_t kBufferDevice = 0; ///< uint64_t device
constexpr int64_t kBufferDeviceInterface =
    8;                               ///< const halide_device_interface_t *
constexpr int64_t kBufferHost = 16;  ///< uint8_t *host
constexpr int64_t kBufferFlags = 24; ///< uint64_t flags
constexpr int64_t kBufferType =
    32; ///< halide_type_t {u8 code, u8 bits, u16 lanes}
constexpr int64_t kBufferDimensions = 36; ///< int32_t dimensions
constexpr int64_t kBufferDim = 40;        ///< halide_dimension_t *dim
constexpr int64_t kBufferPadding = 48;    ///< void *padding
constexpr int64_t kBufferAlignment = 8;

/// halide_dimension_t {int32_t min, extent, stride; uint32_t flags}.
constexpr int64_t kDimensionBytes = 16;
constexpr int64_t kDimensionMin = 0;
constexpr int64_t kDimensionExtent = 4;
constexpr int64_t kDimensionStride = 8;
constexpr int64_t kDimensionFlags = 12;

/// halide_type_code_t.
enum HalideTypeCode : uint8_t {
  kTypeInt = 0,
  kTypeUInt = 1,
  kTypeFloat = 2,
  kTypeHandle = 3,
  kTypeBFloat = 4,
};

/// halide_type_t as the one 32-bit word at kBufferType (little-endian:
/// code in the low byte, then bits, then lanes).
constexpr uint32_t halideTypeWord(uint8_t code, uint8_t bits,
                                  uint16_t lanes = 1) {
  return uint32_t(code) | uint32_t(bits) << 8 | uint32_t(lanes) << 16;
}

} // namespace ffnc::halide

#endif // FFN_TARGET_HALIDE_HALIDEBUFFERLAYOUT_H
