"""PyTorch's names that ember's ops already compute, composed here: torch.exp(x) as
x.exp() (and the other unary ops, reductions and views as functions), zeros_like and
the other creators, where/clamp/repeat, max/min along a dimension as (values, indices),
sum/max/min of integer tensors, all/any, std, chunk, norm, the dtype and shape helpers,
and the in-place arithmetic (refused on a tensor that requires grad while gradients are
recorded, as ember's other writes). Attached to the package and to Tensor by
ember/__init__.py."""

import collections
import math

from ember import _ember

Tensor = _ember.Tensor

# torch.max(x, dim) and x.max(dim): the values and where they are (the first, for ties).
_MaxMin = collections.namedtuple("max_min", ["values", "indices"])
_core_max, _core_min, _core_sum, _core_var = Tensor.max, Tensor.min, Tensor.sum, Tensor.var
_INTEGERS = (_ember.int64, _ember.int32, _ember.uint8, _ember.uint16)


def _integer_reduction(core, dtype):
    """core (a floating-point reduction) for an integer tensor: computed in f64, exact
    for |values| < 2^53, the result in `dtype` (PyTorch's: the tensor's own for max and
    min, int64 for sum)."""
    return lambda t, **kwargs: core(t.to(_ember.float64), **kwargs).to(dtype)


def _sum(self, dim=None, keepdim=False):
    core = _core_sum
    if self.dtype in _INTEGERS or self.dtype == _ember.bool:
        core = _integer_reduction(_core_sum, _ember.int64)
    return core(self, dim=dim, keepdim=keepdim)


def _max(self, dim=None, keepdim=False):
    if isinstance(dim, Tensor):  # torch.max(a, b): elementwise
        return _ember.maximum(self, dim)
    core = _integer_reduction(_core_max, self.dtype) if self.dtype in _INTEGERS else _core_max
    if dim is None:
        return core(self)
    return _MaxMin(core(self, dim=dim, keepdim=keepdim), self.argmax(dim=dim, keepdim=keepdim))


def _min(self, dim=None, keepdim=False):
    if isinstance(dim, Tensor):
        return _ember.minimum(self, dim)
    integer = self.dtype in _INTEGERS
    core = _integer_reduction(_core_min, self.dtype) if integer else _core_min
    if dim is None:
        return core(self)
    negated = -(self.to(_ember.float64) if integer else self)  # min's first index: -x's argmax
    return _MaxMin(core(self, dim=dim, keepdim=keepdim), negated.argmax(dim=dim, keepdim=keepdim))


_core_to = Tensor.to


def _to(self, *args, dtype=None, device=None, non_blocking=False, copy=False):
    """torch.Tensor.to: to a device, a dtype, both (either order), or another tensor's.
    non_blocking is accepted as the hint it is: ember's host <-> GPU copies are ordered
    with the host, large ones staged through pinned buffers."""
    targets = [t for a in args for t in ((a.device, a.dtype) if isinstance(a, Tensor) else (a,))]
    out = self
    for target in targets + [t for t in (device, dtype) if t is not None]:
        out = _core_to(out, target)
    unchanged = out.dtype == self.dtype and str(out.device) == str(self.device)  # the same memory
    return out.clone() if copy and unchanged else out


def _pin_memory(self):
    """The tensor itself: ember stages large host <-> GPU copies through pinned buffers
    of its own (kernels/cuda/copy.h), so a tensor needs no pinned copy to move fast."""
    if self.is_cuda:
        raise ValueError("pin_memory: the tensor is on a GPU already; only CPU tensors can be pinned")
    return self


def _as_tensor(value, like):
    return value if isinstance(value, Tensor) else _ember.full([], value, dtype=like.dtype, device=like.device)


def where(condition, input, other):
    """condition ? input : other, broadcast (numbers as tensors of the other operand's
    dtype); the gradient flows to each where it was chosen."""
    like = input if isinstance(input, Tensor) else other
    return _ember.where(condition, _as_tensor(input, like), _as_tensor(other, like))


def _clamp(self, min=None, max=None):
    """min <= x <= max elementwise; the gradient passes where x lies within (bounds
    included), as PyTorch's; NaN stays NaN."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    out = self
    if min is not None:
        out = where(out < _as_tensor(min, self), _as_tensor(min, self), out)
    if max is not None:
        out = where(out > _as_tensor(max, self), _as_tensor(max, self), out)
    return out


def _repeat(self, *sizes):
    """The tensor tiled sizes[d] times along each dimension (leading sizes add
    dimensions), as torch.Tensor.repeat."""
    sizes = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes
    if len(sizes) < self.dim():
        raise ValueError(f"repeat: {len(sizes)} sizes for a tensor of {self.dim()} dimensions")
    shape = (1,) * (len(sizes) - self.dim()) + tuple(self.shape)
    # [.., 1, s, ..] expanded to [.., r, s, ..] and merged: copy r of dimension d is outer.
    spread = self.reshape(*[v for s in shape for v in (1, s)])
    tiled = spread.expand(*[v for r, s in zip(sizes, shape) for v in (r, s)])
    # A copy, as PyTorch's: the merged shape can still be a stride-0 view of self.
    return tiled.reshape(*[r * s for r, s in zip(sizes, shape)]).contiguous()


def _in_place(name, op):
    def method(self, other):
        # self's old values stay saved for op's backward: a copy of them when self is
        # rebased onto the result (copy_ writes over self's own memory).
        old = self.clone() if self.requires_grad and _ember.is_grad_enabled() else self
        return self.copy_(op(old, other))

    method.__name__ = name
    method.__doc__ = f"self = self {name[:-1]} other, in place (self's dtype kept); returns self."
    return method


def _scaled(other, alpha):
    return other if alpha == 1 else other * alpha


def add(input, other, *, alpha=1):
    """torch.add: input + alpha * other."""
    return input + _scaled(other, alpha)


def sub(input, other, *, alpha=1):
    """torch.sub: input - alpha * other."""
    return input - _scaled(other, alpha)


def _type(self, dtype=None, non_blocking=False):
    """With no dtype, PyTorch's name of the tensor's type ('torch.FloatTensor'); with a
    dtype (or such a name), the tensor in it."""
    if dtype is None:
        return _TYPE_NAMES.get(self.dtype, "torch.Tensor")
    if isinstance(dtype, str):
        names = {name: d for d, name in _TYPE_NAMES.items()}
        if dtype not in names:
            raise ValueError(f"type: unknown type {dtype!r}; known: {', '.join(sorted(names))}")
        dtype = names[dtype]
    return self.to(dtype)


_TYPE_NAMES = {_ember.float32: "torch.FloatTensor", _ember.float64: "torch.DoubleTensor",
               _ember.float16: "torch.HalfTensor", _ember.bfloat16: "torch.BFloat16Tensor",
               _ember.int64: "torch.LongTensor", _ember.int32: "torch.IntTensor", _ember.uint8: "torch.ByteTensor",
               _ember.bool: "torch.BoolTensor"}


def _dims(dims, ndim, name):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(f"{name}: dimension {d} is out of range for a tensor of {ndim} dimensions")
    return tuple(d % ndim for d in dims)


def narrow(input, dim, start, length):
    """The view of `length` entries of dimension dim from `start` (negative from the end)."""
    (dim,) = _dims(dim, input.dim(), "narrow")
    size = input.shape[dim]
    if isinstance(start, Tensor):
        start = int(start.item())
    if not -size <= start <= size or length < 0 or start % (size or 1) + length > size:
        raise IndexError(f"narrow: start {start} and length {length} exceed dimension {dim} of size {size}")
    start = start + size if start < 0 else start
    return input[(slice(None),) * dim + (slice(start, start + length),)]


def roll(input, shifts, dims=None):
    """The entries shifted along each dimension, those pushed off the end coming back at
    the start (without dims: over the flattened tensor, then the shape restored)."""
    if dims is None:
        if not isinstance(shifts, int) and len(shifts) != 1:
            raise ValueError("roll: without dims, shifts must be one number")
        flat = input.flatten()
        return roll(flat, shifts if isinstance(shifts, int) else shifts[0], 0).view(*input.shape)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = _dims(dims, input.dim(), "roll")
    if len(shifts) != len(dims):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(dims)} dims")
    out = input
    for shift, dim in zip(shifts, dims):
        size = out.shape[dim]
        s = shift % size if size else 0
        if s:  # the last s entries, then the first size - s
            out = _ember.cat([narrow(out, dim, size - s, s), narrow(out, dim, 0, size - s)], dim)
    return out


def flip(input, dims):
    """The entries in reverse order along each of dims (a copy, as PyTorch's)."""
    out = input
    for dim in _dims(dims, input.dim(), "flip"):
        size = out.shape[dim]
        out = out.index_select(dim, _ember.arange(size - 1, -1, -1).to(out.device))
    return out if out is not input else input.clone()


def _scatter_positions(input, dim, index, src, name):
    """Where index's entries point in input, as flat positions of input's contiguous
    layout (index's shape): position p's dim-th coordinate replaced by index[p]. Checks
    PyTorch's shape rules (index.size(d) <= src.size(d), and <= input.size(d) but for
    dim) and the range of index (IndexError naming the entry)."""
    if index.dim() != input.dim() or (src is not None and src.dim() != input.dim()):
        raise ValueError(f"{name}: index{' and src' if src is not None else ''} must have as many "
                         f"dimensions as input ({input.dim()})")
    for d in range(input.dim()):
        if d != dim and index.shape[d] > input.shape[d]:
            raise ValueError(f"{name}: index.size({d}) = {index.shape[d]} exceeds input.size({d}) = "
                             f"{input.shape[d]}")
        if src is not None and index.shape[d] > src.shape[d]:
            raise ValueError(f"{name}: index.size({d}) = {index.shape[d]} exceeds src.size({d}) = "
                             f"{src.shape[d]}")
    size = input.shape[dim]
    if index.numel() and (bool((index < 0).any()) or bool((index >= size).any())):
        bad = [v for v in index.reshape(-1).tolist() if not 0 <= v < size][0]
        raise IndexError(f"{name}: index {bad} is out of bounds for dimension {dim} with size {size}")
    strides, step = [0] * input.dim(), 1
    for d in range(input.dim() - 1, -1, -1):  # input's contiguous strides
        strides[d], step = step, step * input.shape[d]
    linear = index.to(_ember.int64) * strides[dim]
    for d in range(input.dim()):
        if d != dim:
            shape = [1] * input.dim()
            shape[d] = index.shape[d]
            linear = linear + _ember.arange(index.shape[d]).to(index.device).view(*shape) * strides[d]
    return linear.reshape(-1)


def gather(input, dim, index, *, sparse_grad=False):
    """torch.gather: out[p] = input[p with its dim-th coordinate replaced by index[p]],
    of index's shape (index.size(d) <= input.size(d) for every other d). Through one
    index_select of the flattened input, so the gradient scatter-adds into input."""
    if sparse_grad:
        raise ValueError("gather: sparse_grad=True (a sparse gradient) is not supported")
    (dim,) = _dims(dim, input.dim(), "gather")
    linear = _scatter_positions(input, dim, index, None, "gather")
    return input.reshape(-1).index_select(0, linear).view(*index.shape)


def diagonal(input, offset=0, dim1=0, dim2=1):
    """torch.diagonal: the entries [..., i, i + offset, ...] of dimensions dim1 and dim2 as
    a new last dimension, the others in order. A view of input's memory, as PyTorch's
    (writes reach input), except while input records gradients: then a copy through
    advanced indexing, whose gradient goes back to the diagonal."""
    dim1, dim2 = _dims((dim1, dim2), input.dim(), "diagonal")
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    rest = [d for d in range(input.dim()) if d not in (dim1, dim2)]
    start1, start2 = (0, offset) if offset >= 0 else (-offset, 0)
    length = max(0, min(input.shape[dim1] - start1, input.shape[dim2] - start2))
    if input.requires_grad and _ember.is_grad_enabled():
        i = _ember.arange(length).to(input.device)
        return input.permute(*rest, dim1, dim2)[..., i + start1, i + start2]
    stride = input.stride()
    return input.as_strided([input.shape[d] for d in rest] + [length],
                            [stride[d] for d in rest] + [stride[dim1] + stride[dim2]],
                            input.storage_offset() + start1 * stride[dim1] + start2 * stride[dim2])


def einsum(equation, *operands):
    """torch.einsum for operands whose subscripts are distinct letters each ("...": the
    broadcast dimensions, at most once an operand): the letters of no output are summed;
    two operands contract by one batched matmul (shared output letters as the batch, shared
    summed ones as the inner dimension), several fold from the left. A letter repeated
    within one operand takes that operand's diagonal first ("ii->i", "ii->", "bii->bi")."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    equation = equation.replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: {len(terms)} operands in {equation!r}, {len(operands)} given")
    ellipsis = max((t.dim() - len(term.replace("...", "")) for term, t in zip(terms, operands) if "..." in term),
                   default=0)
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in equation][:ellipsis]
    subs, diagonals, written = [], [], ""  # written: every letter as often as it was written
    for term, t in zip(terms, operands):
        if "..." in term:
            before, after = term.split("...")
            term = before + "".join(spare[ellipsis - (t.dim() - len(before) - len(after)):]) + after
        if len(term) != t.dim():
            raise ValueError(f"einsum: subscripts {term!r} for a tensor of {t.dim()} dimensions")
        written += term
        while len(set(term)) != len(term):  # a repeated letter: that diagonal, last
            c = next(c for c in term if term.count(c) > 1)
            a, b = term.index(c), term.index(c, term.index(c) + 1)
            if t.shape[a] != t.shape[b]:
                raise ValueError(f"einsum: subscript {c} repeated over dimensions of {t.shape[a]} and {t.shape[b]}")
            t = diagonal(t, 0, a, b)
            term = term[:a] + term[a + 1:b] + term[b + 1:] + c
        subs.append(term)
        diagonals.append(t)
    if not arrow:  # the implicit output: letters seen once, in order
        counts = {c: written.count(c) for c in written}
        output = "".join(spare) + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in spare))
    else:
        output = output.replace("...", "".join(spare))
    operands = diagonals
    sizes = {}
    for term, t in zip(subs, operands):
        for c, n in zip(term, t.shape):
            if sizes.setdefault(c, n) != n and n != 1 and sizes[c] != 1:
                raise ValueError(f"einsum: subscript {c} is {sizes[c]} in one operand and {n} in another")
            sizes[c] = max(sizes[c], n)

    def reduce_unshared(term, t, keep):  # sum letters nobody else needs
        gone = [i for i, c in enumerate(term) if c not in keep]
        if gone:
            t = t.sum(dim=tuple(gone))
            term = "".join(c for c in term if c not in set(term[i] for i in gone))
        return term, t

    term, acc = subs[0], operands[0]
    for k in range(1, len(subs)):
        later = set(output) | set("".join(subs[k + 1:]))
        other, t = subs[k], operands[k]
        term, acc = reduce_unshared(term, acc, later | set(other))
        other, t = reduce_unshared(other, t, later | set(term))
        batch = [c for c in term if c in other and c in later]
        inner = [c for c in term if c in other and c not in later]
        left = [c for c in term if c not in other]
        right = [c for c in other if c not in term]
        a = acc.permute(*[term.index(c) for c in batch + left + inner])
        b = t.permute(*[other.index(c) for c in batch + inner + right])
        a = a.expand(*[sizes[c] for c in batch] + list(a.shape[len(batch):]))
        b = b.expand(*[sizes[c] for c in batch] + list(b.shape[len(batch):]))
        prod = lambda cs: math.prod(sizes[c] for c in cs)
        a = a.reshape(prod(batch), prod(left), prod(inner))
        b = b.reshape(prod(batch), prod(inner), prod(right))
        acc = (a @ b).reshape(*[sizes[c] for c in batch + left + right])
        term = "".join(batch + left + right)
    term, acc = reduce_unshared(term, acc, set(output))
    missing = [c for c in output if c not in term]
    if missing:
        raise ValueError(f"einsum: output subscripts {missing} appear in no operand")
    return acc.permute(*[term.index(c) for c in output]) if len(term) > 1 else acc


def index_add(input, dim, index, source, *, alpha=1):
    """torch.index_add: input with alpha * source's slices added at index along dim
    (repeated indices add up); differentiable in input and source."""
    return input._index_add(dim, index, _scaled(source, alpha))


def _index_add_(self, dim, index, source, *, alpha=1):
    return self.copy_(index_add(self, dim, index, source, alpha=alpha))


def scatter_add(input, dim, index, src):
    """torch.scatter_add: input with src[p] added at p's position with its dim-th
    coordinate replaced by index[p], for p over index's shape (src.size(d) and, but for
    dim, input.size(d) at least index.size(d)); repeated targets add up."""
    (dim,) = _dims(dim, input.dim(), "scatter_add")
    linear = _scatter_positions(input, dim, index, src, "scatter_add")
    picked = src[tuple(slice(0, n) for n in index.shape)]
    return input.reshape(-1)._index_add(0, linear, picked.reshape(-1)).view(*input.shape)


def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """torch.scatter: input with src[p] (or the number `value`, or a number given as src)
    written at p's position with its dim-th coordinate replaced by index[p], for p over
    index's shape; differentiable in input (zero where written) and src. reduce="add"
    is scatter_add; "multiply" is refused by name. A tensor src that writes one position
    twice is refused (PyTorch leaves which write wins undefined); a number may."""
    if (src is None) == (value is None):
        raise TypeError("scatter: give exactly one of src (a tensor or a number) and value")
    if src is None:
        src = value
    (dim,) = _dims(dim, input.dim(), "scatter")
    number = not isinstance(src, Tensor)
    if reduce == "add":
        full = _ember.full(list(index.shape), src, dtype=input.dtype, device=input.device) if number else src
        return scatter_add(input, dim, index, full)
    if reduce is not None:
        raise NotImplementedError(f"scatter: reduce={reduce!r} is not supported (None or 'add')")
    linear = _scatter_positions(input, dim, index, None if number else src, "scatter")
    out = input.reshape(-1).clone()
    out[linear] = src if number else src[tuple(slice(0, n) for n in index.shape)].reshape(-1)
    return out.view(*input.shape)


def _deepcopy(self, memo):
    """copy.deepcopy of a tensor a user made (a leaf): a clone that requires grad as it
    did; a Parameter stays a Parameter (copy.deepcopy(module) copies its weights)."""
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                           "protocol at the moment")
    if id(self) in memo:
        return memo[id(self)]
    data = self.detach().clone()
    copied = type(self)(data, self.requires_grad) if type(self) is not Tensor else \
        data.requires_grad_(self.requires_grad)
    memo[id(self)] = copied
    return copied


def _var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """torch.var: with unbiased (the old form) or correction (the number subtracted from
    the count), 1 by default."""
    if unbiased is not None and correction is not None:
        raise ValueError("var: give unbiased or correction, not both")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return _core_var(self, dim=dim, correction=correction, keepdim=keepdim)


def _reduce_bool(self, dim, keepdim, any_):
    counts = self.to(_ember.float32).__ne__(0).to(_ember.float32)
    total = counts.sum() if dim is None else counts.sum(dim=dim, keepdim=keepdim)
    if any_:
        return total > 0
    n = self.numel() if dim is None else self.shape[dim]
    return total == float(n)


def _all(self, dim=None, keepdim=False):
    """Whether every element is nonzero (along dim), as a bool tensor."""
    return _reduce_bool(self, dim, keepdim, any_=False)


def _any(self, dim=None, keepdim=False):
    """Whether some element is nonzero (along dim), as a bool tensor."""
    return _reduce_bool(self, dim, keepdim, any_=True)


def _std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _var(self, dim, unbiased, keepdim, correction=correction).sqrt()


def _chunk(self, chunks, dim=0):
    """At most `chunks` pieces along dim, each ceil(size / chunks) but the last."""
    if chunks < 1:
        raise ValueError(f"chunk: expected at least 1 chunk, got {chunks}")
    return self.split(max(1, math.ceil(self.shape[dim] / chunks)), dim)


def _norm(self, p="fro", dim=None, keepdim=False):
    """The 2-norm (p=2 or "fro") or the 1-norm (p=1) of the elements, or along dim."""
    if p in ("fro", 2, 2.0):
        squares = self * self
        return (squares.sum() if dim is None else squares.sum(dim=dim, keepdim=keepdim)).sqrt()
    if p in (1, 1.0):
        return self.abs().sum() if dim is None else self.abs().sum(dim=dim, keepdim=keepdim)
    raise ValueError(f"norm: p={p!r} is not supported (2, 'fro' or 1)")


def _new(fill):
    def method(self, *size, dtype=None, device=None, requires_grad=False):
        shape = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
        return fill(list(shape), dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    return method


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    return _ember.full(list(size), fill_value, dtype=dtype or self.dtype, device=device or self.device,
                       requires_grad=requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    return _ember.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)


def _normal_(self, mean=0.0, std=1.0):
    from ember.nn import init
    return init.normal_(self, mean, std)


def _uniform_(self, a=0.0, b=1.0):
    from ember.nn import init
    return init.uniform_(self, a, b)


def _log_softmax(self, dim):
    from ember.nn import functional as F
    return F.log_softmax(self, dim=dim)


METHODS = {
    "to": _to,
    "pin_memory": _pin_memory,
    "sum": _sum,
    "clamp": _clamp,
    "clip": _clamp,
    "clamp_min": lambda self, min: _clamp(self, min=min),
    "clamp_max": lambda self, max: _clamp(self, max=max),
    "repeat": _repeat,
    "max": _max,
    "min": _min,
    "all": _all,
    "any": _any,
    "std": _std,
    "chunk": _chunk,
    "norm": _norm,
    "pow": lambda self, exponent: self ** exponent,
    "eq": lambda self, other: self == other,
    "ne": lambda self, other: self != other,
    "lt": lambda self, other: self < other,
    "le": lambda self, other: self <= other,
    "gt": lambda self, other: self > other,
    "ge": lambda self, other: self >= other,
    "int": lambda self: self.to(_ember.int32),
    "bool": lambda self: self.to(_ember.bool),
    "half": lambda self: self.to(_ember.float16),
    "bfloat16": lambda self: self.to(_ember.bfloat16),
    "type_as": lambda self, other: self.to(other.dtype),
    "view_as": lambda self, other: self.view(*other.shape),
    "reshape_as": lambda self, other: self.reshape(*other.shape),
    "is_floating_point": lambda self: self.dtype.is_floating_point,
    "element_size": lambda self: {_ember.float64: 8, _ember.int64: 8, _ember.float32: 4, _ember.int32: 4,
                                  _ember.float16: 2, _ember.bfloat16: 2, _ember.uint16: 2}.get(self.dtype, 1),
    "new_zeros": _new(_ember.zeros),
    "new_ones": _new(_ember.ones),
    "new_empty": _new(_ember.zeros),
    "new_full": _new_full,
    "new_tensor": _new_tensor,
    "add_": lambda self, other, *, alpha=1: self.copy_(self + _scaled(other, alpha)),
    "sub_": lambda self, other, *, alpha=1: self.copy_(self - _scaled(other, alpha)),
    "add": add,
    "sub": sub,
    "var": _var,
    "type": _type,
    "nelement": lambda self: self.numel(),
    "mm": lambda self, mat2: mm(self, mat2),
    "narrow": narrow,
    "roll": roll,
    "flip": flip,
    "gather": gather,
    "diagonal": diagonal,
    "index_add": index_add,
    "index_add_": _index_add_,
    "scatter_add": scatter_add,
    "scatter_add_": lambda self, dim, index, src: self.copy_(scatter_add(self, dim, index, src)),
    "scatter": scatter,
    "scatter_": lambda self, dim, index, src=None, value=None, *, reduce=None: self.copy_(
        scatter(self, dim, index, src, value, reduce=reduce)),
    "__deepcopy__": _deepcopy,
    "mul_": _in_place("mul_", lambda a, b: a * b),
    "div_": _in_place("div_", lambda a, b: a / b),
    "masked_fill_": lambda self, mask, value: self.copy_(_ember.masked_fill(self, mask, value)),
    "normal_": _normal_,
    "uniform_": _uniform_,
    "log_softmax": _log_softmax,
}


def _like(fill):
    def like(input, *, dtype=None, device=None, requires_grad=False):
        return fill(*input.shape, dtype=dtype or input.dtype, device=device or input.device,
                    requires_grad=requires_grad)

    return like


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    return _ember.full(list(input.shape), fill_value, dtype=dtype or input.dtype,
                       device=device or input.device, requires_grad=requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    """torch.empty: a tensor of that shape (ember's holds zeros)."""
    return _ember.zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """steps values from start to end, evenly spaced (both ends included)."""
    if steps < 0:
        raise ValueError(f"linspace: number of steps must be non-negative, got {steps}")
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    values = [start + i * step for i in range(steps - 1)] + ([end] if steps > 0 else [])
    return _ember.tensor(values, dtype=dtype or _ember.float32, device=device, requires_grad=requires_grad)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol |other| everywhere (in f64), as torch.allclose."""
    a, b = input.to(_ember.float64), other.to(_ember.float64)
    diff, bound = (a - b).abs(), (b.abs() * rtol + atol)
    ok = (diff <= bound).to(_ember.float32)
    if equal_nan:  # NaN != NaN: where both are NaN counts as close
        ok = ok + (a != a).to(_ember.float32) * (b != b).to(_ember.float32)
    return bool(_all(ok).item())


def mm(input, mat2):
    """torch.mm: [n, m] @ [m, p]."""
    if input.dim() != 2 or mat2.dim() != 2:
        raise ValueError(f"mm: expected 2-D tensors, got {input.dim()}-D and {mat2.dim()}-D")
    return _ember.matmul(input, mat2)


def bmm(input, mat2):
    """torch.bmm: [b, n, m] @ [b, m, p]."""
    if input.dim() != 3 or mat2.dim() != 3 or input.shape[0] != mat2.shape[0]:
        raise ValueError(f"bmm: expected [b, n, m] and [b, m, p], got {tuple(input.shape)} and "
                         f"{tuple(mat2.shape)}")
    return _ember.matmul(input, mat2)


def _method_as_function(name):
    def function(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)

    function.__name__ = name
    function.__doc__ = f"torch.{name}(input, ...): input.{name}(...)."
    return function


FUNCTIONS = {name: _method_as_function(name) for name in [
    "exp", "log", "sqrt", "rsqrt", "tanh", "sin", "cos", "sigmoid", "relu", "abs", "neg", "square", "reciprocal", "softmax",
    "log_softmax", "sum", "mean", "var", "std", "max", "min", "argmax", "flatten", "reshape", "transpose",
    "permute", "squeeze", "unsqueeze", "clone", "numel", "chunk", "norm", "pow", "eq", "ne", "lt", "le", "gt",
    "ge", "all", "any", "t", "detach", "is_floating_point", "clamp", "clip"]}
FUNCTIONS.update({
    "zeros_like": _like(_ember.zeros),
    "ones_like": _like(_ember.ones),
    "rand_like": _like(_ember.rand),
    "randn_like": _like(_ember.randn),
    "empty_like": _like(_ember.zeros),
    "full_like": full_like,
    "empty": empty,
    "where": where,
    "maximum": _ember.maximum,
    "minimum": _ember.minimum,
    "linspace": linspace,
    "allclose": allclose,
    "is_tensor": lambda obj: isinstance(obj, Tensor),
    "get_default_dtype": lambda: _ember.float32,
    "mm": mm,
    "bmm": bmm,
    "add": add,
    "sub": sub,
    "narrow": narrow,
    "roll": roll,
    "flip": flip,
    "index_select": _ember.index_select,
    "gather": gather,
    "diagonal": diagonal,
    "einsum": einsum,
    "index_add": index_add,
    "scatter_add": scatter_add,
    "scatter": scatter,
    "nonzero": _ember.nonzero,
})
