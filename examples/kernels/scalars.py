"""Writes each scalar argument back into its own 8-byte slot of `out_ptr`, at its own width.

Slot k (bytes 8k .. 8k+7) holds argument k+1 (slot 0: v_i1, ..., slot 13: v_fp64); the caller
zero-fills the buffer first, so the unused high bytes stay 0. A test reads the bytes back and
checks each value bit for bit: this is how the C ABI of every scalar type is confirmed
(docs/design.md: fp16/bf16 travel as uint16_t raw bits, fp32 as float, i1 as bool).
"""
import triton
import triton.language as tl


@triton.jit
def _put(out_ptr, slot: tl.constexpr, value, dtype: tl.constexpr):
    tl.store((out_ptr + slot * 8).to(tl.pointer_type(dtype)), value.to(dtype))


@triton.jit
def scalars_kernel(out_ptr, v_i1, v_i8, v_i16, v_i32, v_i64, v_u1, v_u8, v_u16, v_u32, v_u64,
                   v_fp16, v_bf16, v_fp32, v_fp64):
    _put(out_ptr, 0, v_i1, tl.int8)
    _put(out_ptr, 1, v_i8, tl.int8)
    _put(out_ptr, 2, v_i16, tl.int16)
    _put(out_ptr, 3, v_i32, tl.int32)
    _put(out_ptr, 4, v_i64, tl.int64)
    _put(out_ptr, 5, v_u1, tl.uint8)
    _put(out_ptr, 6, v_u8, tl.uint8)
    _put(out_ptr, 7, v_u16, tl.uint16)
    _put(out_ptr, 8, v_u32, tl.uint32)
    _put(out_ptr, 9, v_u64, tl.uint64)
    _put(out_ptr, 10, v_fp16, tl.float16)
    _put(out_ptr, 11, v_bf16, tl.bfloat16)
    _put(out_ptr, 12, v_fp32, tl.float32)
    _put(out_ptr, 13, v_fp64, tl.float64)
