"""C ABI of kernel arguments: Triton type -> C parameter type (docs/design.md, "C ABI").

Deliberate differences from upstream triton/tools/compile.py:
- fp32 is `float` (upstream declares `double` and then passes 8 bytes to a 4-byte parameter);
- fp16/bf16 are `uint16_t` raw bits (C has no portable half type);
- i1 is `bool` in the C prototype but is passed to the kernel as one byte (`int8_t`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from triton_aot.core.errors import UserError


@dataclass(frozen=True)
class CType:
    """How one Triton scalar/pointer type crosses the C boundary."""

    ctype: str  # type in the generated C prototype
    size: int  # sizeof(ctype) on the supported (LP64) hosts
    kernel_ctype: str  # type of the value whose address goes into the cuLaunchKernel params


POINTER = CType("CUdeviceptr", 8, "CUdeviceptr")

# Keys are the canonical scalar type names of triton_aot.core.signature.
SCALARS: dict[str, CType] = {
    "i1": CType("bool", 1, "int8_t"),
    "i8": CType("int8_t", 1, "int8_t"),
    "i16": CType("int16_t", 2, "int16_t"),
    "i32": CType("int32_t", 4, "int32_t"),
    "i64": CType("int64_t", 8, "int64_t"),
    "u1": CType("uint8_t", 1, "uint8_t"),
    "u8": CType("uint8_t", 1, "uint8_t"),
    "u16": CType("uint16_t", 2, "uint16_t"),
    "u32": CType("uint32_t", 4, "uint32_t"),
    "u64": CType("uint64_t", 8, "uint64_t"),
    "fp16": CType("uint16_t", 2, "uint16_t"),
    "bf16": CType("uint16_t", 2, "uint16_t"),
    "fp32": CType("float", 4, "float"),
    "fp64": CType("double", 8, "double"),
}


def c_type(triton_type: str) -> CType:
    """C ABI of a canonical Triton type (`*fp16`, `i32`, ...)."""
    if triton_type.startswith("*"):
        return POINTER
    try:
        return SCALARS[triton_type]
    except KeyError:
        raise UserError(f"type {triton_type!r} has no C ABI; use one of: "
                        f"{', '.join(SCALARS)} or a pointer *T") from None


# Bytes per element behind a pointer `*T`, for what the launcher does to the memory itself
# (reset_to_zero's memsets): Triton stores i1/u1 as one byte, every fp8 format is one byte.
POINTEE_SIZES: dict[str, int] = {
    "i1": 1, "u1": 1, "i8": 1, "u8": 1, "fp8e4nv": 1, "fp8e4b8": 1, "fp8e4b15": 1, "fp8e5": 1,
    "fp8e5b16": 1, "i16": 2, "u16": 2, "fp16": 2, "bf16": 2, "i32": 4, "u32": 4, "fp32": 4,
    "i64": 8, "u64": 8, "fp64": 8,
}


def pointee_size(triton_type: str) -> int:
    """Element size in bytes of a canonical pointer type (`*fp16` -> 2, `*kfp32` -> 4)."""
    if not triton_type.startswith("*"):
        raise UserError(f"type {triton_type!r} is not a pointer")
    pointee = triton_type[1:]
    if pointee.startswith("k"):  # Triton's const pointers: *kfp16
        pointee = pointee[1:]
    try:
        return POINTEE_SIZES[pointee]
    except KeyError:
        raise UserError(f"pointer type {triton_type!r} has no known element size") from None


# One list of names that generated C cannot use for its identifiers (kernel parameters, the
# library name, variant symbols): C11 and C++20 keywords, and names the generated C needs itself
# (its types, cuda.h's, <stdint.h>'s). (`stream` and `algo_id` are fine: the generated C renames
# its own parameters then.)
# The C API's integer types -> (min, max) of the values a caller may pass (bound values are
# int64_t, so uint64_t stops at INT64_MAX), and its floating-point types.
C_INT_RANGES = {
    "int8_t": (-(1 << 7), (1 << 7) - 1),
    "int16_t": (-(1 << 15), (1 << 15) - 1),
    "int32_t": (-(1 << 31), (1 << 31) - 1),
    "int64_t": (-(1 << 63), (1 << 63) - 1),
    "uint8_t": (0, (1 << 8) - 1),
    "uint16_t": (0, (1 << 16) - 1),
    "uint32_t": (0, (1 << 32) - 1),
    "uint64_t": (0, (1 << 63) - 1),
}
C_FLOAT_TYPES = ("float", "double")

C_RESERVED = frozenset("""
    auto bool break case char const continue default do double else enum extern false float for
    goto if inline int long register restrict return short signed sizeof static struct switch
    true typedef union unsigned void volatile while alignas alignof asm catch char8_t char16_t
    char32_t class concept consteval constexpr constinit const_cast co_await co_return co_yield
    decltype delete dynamic_cast explicit export friend mutable namespace new noexcept nullptr
    operator private protected public reinterpret_cast requires static_assert static_cast
    template this thread_local throw try typeid typename using virtual wchar_t
    and and_eq bitand bitor compl not not_eq or or_eq xor xor_eq
    _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert
    _Thread_local
    NULL int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t
    CUdeviceptr CUstream CUresult CUcontext CUmodule CUfunction
    main errno uintptr_t unix linux CUDAAPI
""".split())
# Object-like macros of the headers every generated C file includes (cuda.h, dlfcn.h, pthread.h,
# stddef.h, stdint.h, stdlib.h, string.h, stdbool.h) under -std=gnu11/-std=c11 (gcc -dM -E):
# a parameter with one of these names is rewritten by the preprocessor.
C_MACROS = frozenset("""
    BIG_ENDIAN BYTE_ORDER CLOCKS_PER_SEC CLOCK_BOOTTIME CLOCK_BOOTTIME_ALARM CLOCK_MONOTONIC
    CLOCK_MONOTONIC_COARSE CLOCK_MONOTONIC_RAW CLOCK_PROCESS_CPUTIME_ID CLOCK_REALTIME
    CLOCK_REALTIME_ALARM CLOCK_REALTIME_COARSE CLOCK_TAI CLOCK_THREAD_CPUTIME_ID CUDAAPI
    EXIT_FAILURE EXIT_SUCCESS FD_SETSIZE INT16_MAX INT16_MIN INT32_MAX INT32_MIN INT64_MAX
    INT64_MIN INT8_MAX INT8_MIN INTMAX_MAX INTMAX_MIN INTPTR_MAX INTPTR_MIN INT_FAST16_MAX
    INT_FAST16_MIN INT_FAST32_MAX INT_FAST32_MIN INT_FAST64_MAX INT_FAST64_MIN INT_FAST8_MAX
    INT_FAST8_MIN INT_LEAST16_MAX INT_LEAST16_MIN INT_LEAST32_MAX INT_LEAST32_MIN
    INT_LEAST64_MAX INT_LEAST64_MIN INT_LEAST8_MAX INT_LEAST8_MIN LITTLE_ENDIAN MB_CUR_MAX
    NFDBITS NULL PDP_ENDIAN PTHREAD_BARRIER_SERIAL_THREAD PTHREAD_CANCELED
    PTHREAD_CANCEL_ASYNCHRONOUS PTHREAD_CANCEL_DEFERRED PTHREAD_CANCEL_DISABLE
    PTHREAD_CANCEL_ENABLE PTHREAD_COND_INITIALIZER PTHREAD_CREATE_DETACHED
    PTHREAD_CREATE_JOINABLE PTHREAD_EXPLICIT_SCHED PTHREAD_INHERIT_SCHED
    PTHREAD_MUTEX_INITIALIZER PTHREAD_ONCE_INIT PTHREAD_PROCESS_PRIVATE PTHREAD_PROCESS_SHARED
    PTHREAD_RWLOCK_INITIALIZER PTHREAD_SCOPE_PROCESS PTHREAD_SCOPE_SYSTEM PTHREAD_STACK_MIN
    PTRDIFF_MAX PTRDIFF_MIN RAND_MAX RESOURCE_ABI_EXTERNAL_BYTES RESOURCE_ABI_VERSION
    RTLD_BINDING_MASK RTLD_DEEPBIND RTLD_DEFAULT RTLD_GLOBAL RTLD_LAZY RTLD_LOCAL RTLD_NEXT
    RTLD_NODELETE RTLD_NOLOAD RTLD_NOW SCHED_FIFO SCHED_OTHER SCHED_RR SIG_ATOMIC_MAX
    SIG_ATOMIC_MIN SIZE_MAX TIMER_ABSTIME TIME_UTC UINT16_MAX UINT32_MAX UINT64_MAX UINT8_MAX
    UINTMAX_MAX UINTPTR_MAX UINT_FAST16_MAX UINT_FAST32_MAX UINT_FAST64_MAX UINT_FAST8_MAX
    UINT_LEAST16_MAX UINT_LEAST32_MAX UINT_LEAST64_MAX UINT_LEAST8_MAX WCHAR_MAX WCHAR_MIN
    WCONTINUED WEXITED WINT_MAX WINT_MIN WNOHANG WNOWAIT WSTOPPED WUNTRACED bool cuArray3DCreate
    cuArray3DGetDescriptor cuArrayCreate cuArrayGetDescriptor cuCtxCreate cuCtxCreate_v3
    cuCtxCreate_v4 cuCtxDestroy cuCtxPopCurrent cuCtxPushCurrent cuDeviceGetUuid_v2
    cuDevicePrimaryCtxRelease cuDevicePrimaryCtxReset cuDevicePrimaryCtxSetFlags
    cuDeviceTotalMem cuEventDestroy cuGetProcAddress cuGraphAddKernelNode
    cuGraphExecKernelNodeSetParams cuGraphExecUpdate cuGraphInstantiate
    cuGraphKernelNodeGetParams cuGraphKernelNodeSetParams cuGraphicsResourceGetMappedPointer
    cuGraphicsResourceSetMapFlags cuIpcOpenMemHandle cuLinkAddData cuLinkAddFile cuLinkCreate
    cuMemAlloc cuMemAllocHost cuMemAllocPitch cuMemBatchDecompressAsync cuMemFree
    cuMemGetAddressRange cuMemGetInfo cuMemHostGetDevicePointer cuMemHostRegister cuMemcpy2D
    cuMemcpy2DAsync cuMemcpy2DUnaligned cuMemcpy3D cuMemcpy3DAsync cuMemcpy3DBatchAsync
    cuMemcpyAtoA cuMemcpyAtoD cuMemcpyAtoH cuMemcpyAtoHAsync cuMemcpyBatchAsync cuMemcpyDtoA
    cuMemcpyDtoD cuMemcpyDtoDAsync cuMemcpyDtoH cuMemcpyDtoHAsync cuMemcpyHtoA cuMemcpyHtoAAsync
    cuMemcpyHtoD cuMemcpyHtoDAsync cuMemsetD16 cuMemsetD2D16 cuMemsetD2D32 cuMemsetD2D8
    cuMemsetD32 cuMemsetD8 cuModuleGetGlobal cuStreamBatchMemOp cuStreamBeginCapture
    cuStreamDestroy cuStreamGetCaptureInfo cuStreamGetCaptureInfo_v2 cuStreamWaitValue32
    cuStreamWaitValue64 cuStreamWriteValue32 cuStreamWriteValue64 cuTexRefGetAddress
    cuTexRefSetAddress cuTexRefSetAddress2D false linux sched_priority true unix
""".split())

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# The generated code's own namespace: its locals, helpers and renamed parameters.
GENERATED_PREFIX = "trt_"


def _reserved_why(name: str) -> str | None:
    """Why `name` (a syntactically valid identifier) cannot appear in generated C as it is, or
    None when it can."""
    if name in C_RESERVED or name in C_MACROS or (
            len(name) > 1 and name[0] == "_" and (name[1].isupper() or name[1] == "_")):
        return "is a reserved C/C++ name"
    if name.lower().startswith(GENERATED_PREFIX):
        return "has the trt_ prefix, which is reserved for generated code"
    if name.startswith(("CU_", "CUDA_")):
        return "has a CU_/CUDA_ prefix, which belongs to cuda.h"
    if name.startswith("RULES_TRITON_"):
        return "has the RULES_TRITON_ prefix, which belongs to the generated headers"
    return None


def check_c_identifier(name: object, what: str) -> str:
    """The one identifier check for names that generated C uses exactly as written (the library
    name, variant symbols, the kernel's entry name): `name` can be a C identifier of the
    generated code, or a UserError says why not (`what` names the flag, field or parameter).
    Kernel parameters are not held to it: they get a C name (c_param_name)."""
    if not isinstance(name, str) or not _IDENT.match(name):
        raise UserError(f"{what} {name!r} is not a valid C identifier; use letters, digits and _ "
                        "(not starting with a digit)")
    why = _reserved_why(name)
    if why:
        raise UserError(f"{what} {name!r} {why}; rename it")
    return name


def c_param_name(name: str) -> str:
    """The C name of a kernel parameter (or launch argument) `name`: the name itself, or, for a
    name that C cannot use as it is (a C/C++ keyword such as `int`, a reserved `_X` name, a
    macro of the included headers, the CU_/CUDA_ prefixes of cuda.h, the trt_ prefix of the
    generated code), `trt_` + the name: `CU_SEQLENS` is `trt_CU_SEQLENS` in C.

    No two parameters share a C name: a renamed name starts with trt_, which no name kept as it
    is does (those are renamed themselves), and the generated code's own trt_ locals are never
    `trt_` + a renamed name. Depends on the name alone, so every variant, the header and the
    grid's C agree."""
    if not isinstance(name, str) or not _IDENT.match(name):
        raise UserError(f"kernel parameter {name!r} is not a valid C identifier; use ASCII "
                        "letters, digits and _ in parameter names")
    return name if _reserved_why(name) is None else GENERATED_PREFIX + name


def check_c_parameter_name(name: str) -> None:
    """Rejects kernel parameter names that cannot become C parameter names at all (only names
    outside C's identifier syntax: every identifier has a C name, c_param_name)."""
    c_param_name(name)
