"""A battery of small launchers of ours, each written to break the capture in one way; the
capture must build an op that computes what the launcher computes, or refuse in one line naming
the launcher's line here, never build a wrong op (tests/capture/test_battery.py holds what each
must do). Kernels are small and run in Triton's interpreter (TRITON_INTERPRET=1) on CPU.

- aliasing: launches into slices of one allocation or at an offset into it, returned views of
  an allocation, views and transposes of inputs, an input written in place and returned, a
  dummy buffer the kernel writes but the launcher drops: an op whose outputs are allocated
  fresh per launch pointer would put the data in the wrong place or alias an input.
- outputs: several outputs, an output filled (zeros, full) before the kernel, size 1 and size 0
  inputs: the outputs' count, fills and degenerate shapes must survive.
- sizes: a size only in the grid, a second launch whose grid and arguments read the sizes of
  tensors it does not take: each launch's binding must find the size elsewhere.
- constexprs from sizes: next_power_of_2 of a dynamic size (refused, readably) and of a static
  one (fine); a (batch, seq, dim) input viewed as rows, with seq == 1 and batch == 1.
- dtypes: one launcher called in fp16 and bf16: one op over both.
- structure: two launches chained through an intermediate, a choice of BLOCK/num_warps by a
  size threshold, float and int scalar arguments, keyword-only arguments, a lambda grid.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(X, Y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < n), mask=i < n)


@triton.jit
def scale_kernel(X, Y, n, factor, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < n) * factor, mask=i < n)


@triton.jit
def scale_shift_kernel(X, Y, n, factor, shift, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + i, tl.load(X + i, mask=i < n) * factor + shift, mask=i < n)


@triton.jit
def add_one_in_place_kernel(X, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(X + i, tl.load(X + i, mask=i < n) + 1.0, mask=i < n)


@triton.jit
def accumulate_kernel(X, ACC, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ACC + i, tl.load(ACC + i, mask=i < n) + tl.load(X + i, mask=i < n), mask=i < n)


@triton.jit
def split_kernel(X, LO, HI, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + i, mask=i < n)
    tl.store(LO + i, tl.minimum(x, 0.0), mask=i < n)
    tl.store(HI + i, tl.maximum(x, 0.0), mask=i < n)


@triton.jit
def with_scratch_kernel(X, SCRATCH, Y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(SCRATCH + i, tl.load(X + i, mask=i < n) * 2.0, mask=i < n)
    tl.store(Y + i, tl.load(X + i, mask=i < n) + 1.0, mask=i < n)


@triton.jit
def row_sum_kernel(X, Y, stride_row, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    j = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride_row + j, mask=j < cols, other=0.0)
    tl.store(Y + row, tl.sum(x, axis=0))


@triton.jit
def row_scale_kernel(X, Y, stride_x, stride_y, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    j = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride_x + j, mask=j < cols)
    tl.store(Y + row * stride_y + j, x * 2.0, mask=j < cols)


@triton.jit
def fixed_row_copy_kernel(X, Y, COLS: tl.constexpr):
    row = tl.program_id(0)
    j = tl.arange(0, COLS)
    tl.store(Y + row * COLS + j, tl.load(X + row * COLS + j))


@triton.jit
def copy2d_kernel(X, Y, rows, cols, sxr, sxc, syr, syc, BLOCK_R: tl.constexpr,
                  BLOCK_C: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)[:, None]
    c = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]
    mask = (r < rows) & (c < cols)
    tl.store(Y + r * syr + c * syc, tl.load(X + r * sxr + c * sxc, mask=mask), mask=mask)


def _copy(x, y):
    n = x.numel()
    copy_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)


def _copy2d(x, y):
    rows, cols = x.shape
    grid = (triton.cdiv(rows, 16), triton.cdiv(cols, 16))
    copy2d_kernel[grid](x, y, rows, cols, *x.stride(), *y.stride(), BLOCK_R=16, BLOCK_C=16)


# --- aliasing ---------------------------------------------------------------------------------

def two_slices(x, y):
    """Copies x and y into the two halves of one allocation of 2 * n."""
    n = x.numel()
    out = torch.empty(2 * n, dtype=x.dtype, device=x.device)
    _copy(x, out[:n])  # SLICE_FIRST
    _copy(y, out[n:])  # SLICE_SECOND
    return out


def offset_slice(x):
    """Copies x into out[1:]; out[0] is a 0 written by torch."""
    n = x.numel()
    out = torch.zeros(n + 1, dtype=x.dtype, device=x.device)
    _copy(x, out[1:])  # OFFSET_LAUNCH
    return out


def returned_flat_view(x):
    """Row-scales x into a (rows, cols) allocation and returns it flattened."""
    rows, cols = x.shape
    out = torch.empty(rows, cols, dtype=x.dtype, device=x.device)
    row_scale_kernel[(rows,)](x, out, x.stride(0), out.stride(0), cols, BLOCK=64)
    return out.view(-1)  # RETURN_FLAT


def returned_transpose(x):
    """Copies x into a (rows, cols) allocation and returns its transpose (a strided view)."""
    out = torch.empty_like(x)
    _copy2d(x, out)
    return out.t()  # RETURN_T


def transposed_input(x):
    """Copies x.t() (a strided view of the input) into a dense (cols, rows) output."""
    xt = x.t()
    out = torch.empty(xt.shape, dtype=x.dtype, device=x.device)
    _copy2d(xt, out)
    return out


def flattened_input(x):
    """Scales x.view(-1) of a (rows, cols) input into a flat output."""
    flat = x.view(-1)
    out = torch.empty_like(flat)
    n = flat.numel()
    scale_kernel[(triton.cdiv(n, 256),)](flat, out, n, 2.0, BLOCK=256)
    return out


def input_column_slice(x):
    """Copies the second half of each row of x: a pointer into the input at an offset."""
    half = x[:, 32:]
    out = torch.empty(half.shape, dtype=x.dtype, device=x.device)
    _copy2d(half, out)  # INPUT_SLICE
    return out


def in_place_return_input(x):
    """Adds 1 to x in place and returns x itself."""
    n = x.numel()
    add_one_in_place_kernel[(triton.cdiv(n, 256),)](x, n, BLOCK=256)
    return x  # RETURN_INPUT


def in_place_return_input_view(x):
    """Adds 1 to x in place and returns a view of it."""
    n = x.numel()
    add_one_in_place_kernel[(triton.cdiv(n, 256),)](x, n, BLOCK=256)
    return x.view(-1)  # RETURN_INPUT_VIEW


def in_place_return_none(x):
    """Adds 1 to x in place and returns None: an in-place op."""
    n = x.numel()
    add_one_in_place_kernel[(triton.cdiv(n, 256),)](x, n, BLOCK=256)


def same_tensor_twice(x):
    """Scales x in place by passing it as both the kernel's input and its output."""
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 256),)](x, x, n, 2.0, BLOCK=256)


def out_and_none(x):
    """Returns (out, None): a tuple with a None in it."""
    out = torch.empty_like(x)
    _copy(x, out)
    return out, None  # OUT_NONE


def same_output_twice(x):
    """Returns one allocation twice."""
    out = torch.empty_like(x)
    _copy(x, out)
    return out, out  # OUT_TWICE


def dummy_buffer(x):
    """Passes a scratch buffer the kernel writes, and returns only y."""
    scratch = torch.empty_like(x)
    y = torch.empty_like(x)
    n = x.numel()
    with_scratch_kernel[(triton.cdiv(n, 256),)](x, scratch, y, n, BLOCK=256)
    return y


def out_argument_slice(x, out):
    """Writes x into the first n elements of the caller's out (of 2 * n): a pointer into an
    input at offset 0, of another shape."""
    n = x.numel()
    _copy(x, out[:n])  # OUT_ARG_SLICE


def out_argument_offset(x, out):
    """Writes x into out[n:] of the caller's out (of 2 * n): a pointer into an input at an
    offset the launcher computed."""
    n = x.numel()
    _copy(x, out[n:])  # OUT_ARG_OFFSET


# --- outputs ----------------------------------------------------------------------------------

def two_outputs(x):
    """min(x, 0) and max(x, 0)."""
    lo, hi = torch.empty_like(x), torch.empty_like(x)
    n = x.numel()
    split_kernel[(triton.cdiv(n, 256),)](x, lo, hi, n, BLOCK=256)
    return lo, hi


def zeros_then_kernel(x):
    acc = torch.zeros(x.shape, dtype=torch.float32, device=x.device)
    accumulate_kernel[(triton.cdiv(x.numel(), 256),)](x, acc, x.numel(), BLOCK=256)
    return acc


def full_then_kernel(x):
    acc = torch.full(x.shape, 3.0, dtype=torch.float32, device=x.device)
    accumulate_kernel[(triton.cdiv(x.numel(), 256),)](x, acc, x.numel(), BLOCK=256)
    return acc


def copy(x):
    """The plain copy (size 1, size 0, dtypes)."""
    y = torch.empty_like(x)
    _copy(x, y)
    return y


def row_sums(x):
    """Sums each row of a (rows, cols) input, cols <= 64."""
    rows, cols = x.shape
    y = torch.empty(rows, dtype=torch.float32, device=x.device)
    row_sum_kernel[(rows,)](x, y, x.stride(0), cols, BLOCK=64)
    return y


# --- sizes ------------------------------------------------------------------------------------

def size_only_in_grid(x):
    """Copies a (rows, 64) input row by row: rows is in the grid only."""
    y = torch.empty_like(x)
    fixed_row_copy_kernel[(x.shape[0],)](x, y, COLS=64)
    return y


def other_tensors_sizes(x, w):
    """Scales x into tmp, then copies tmp into out; the second launch's grid and n come from
    w, a tensor it does not take (the caller passes w with w.numel() == x.numel())."""
    tmp = torch.empty_like(x)
    _copy(x, tmp)
    out = torch.empty_like(x)
    m = w.numel()
    scale_kernel[(triton.cdiv(m, 256),)](tmp, out, m, 2.0, BLOCK=256)
    return out


def rows_from_other(x, y):
    """Sums the rows of x; the grid reads y's rows, a tensor the kernel does not take."""
    out = torch.empty(y.shape[0], dtype=torch.float32, device=x.device)
    row_sum_kernel[(y.shape[0],)](x, out, x.stride(0), x.shape[1], BLOCK=64)
    return out


# --- constexprs from sizes --------------------------------------------------------------------

def next_pow2_block(x):
    """One program per row, BLOCK the next power of 2 of the row length."""
    rows, cols = x.shape
    y = torch.empty_like(x)
    BLOCK = triton.next_power_of_2(cols)
    row_scale_kernel[(rows,)](x, y, x.stride(0), y.stride(0), cols, BLOCK=BLOCK)  # POW2
    return y


def rows_of_3d(x):
    """A (batch, seq, dim) input viewed as rows of dim, row-scaled."""
    dim = x.shape[-1]
    rows = x.view(-1, dim)
    y = torch.empty_like(rows)
    BLOCK = triton.next_power_of_2(dim)  # dim is static
    row_scale_kernel[(rows.shape[0],)](rows, y, rows.stride(0), y.stride(0), dim, BLOCK=BLOCK)
    return y.view(x.shape)


# --- structure --------------------------------------------------------------------------------

def chained(x):
    """k1 writes tmp = 2 * x, k2 reads tmp into out."""
    tmp = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 256),)](x, tmp, n, 2.0, BLOCK=256)
    out = torch.empty_like(x)
    _copy(tmp, out)
    return out


def by_threshold(x):
    """BLOCK and num_warps by the size: small inputs one way, large another."""
    n = x.numel()
    y = torch.empty_like(x)
    if n > 4096:
        BLOCK, warps = 1024, 8
    else:
        BLOCK, warps = 128, 4
    scale_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, 2.0, BLOCK=BLOCK, num_warps=warps)
    return y


def float_and_int(x, factor, shift):
    """factor * x + shift, a float and an int argument reaching the kernel."""
    n = x.numel()
    y = torch.empty_like(x)
    scale_shift_kernel[(triton.cdiv(n, 256),)](x, y, n, factor, shift, BLOCK=256)  # INT_ARG
    return y


def keyword_only(x, *, factor=2.0):
    """factor * x, the factor keyword-only."""
    n = x.numel()
    y = torch.empty_like(x)
    scale_kernel[(triton.cdiv(n, 256),)](x, y, n, factor, BLOCK=256)
    return y


def keyword_only_tensor(x, *, out):
    """Copies x into a keyword-only out."""
    _copy(x, out)


def lambda_grid(x):
    n = x.numel()
    y = torch.empty_like(x)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)  # noqa: E731
    scale_kernel[grid](x, y, n, 0.5, BLOCK=128)
    return y


def early_return_empty(x):
    """Returns an empty output without launching when x is empty (a size-0 guard)."""
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    _copy(x, y)
    return y
