"""torch.autograd's custom functions: a subclass of ember.autograd.Function defines
forward(ctx, *args) and backward(ctx, *grad_outputs) as static methods, and its apply()
runs forward without recording and records one node whose gradient is backward's:

    class Exp(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    Exp.apply(x).sum().backward()

forward returns one tensor (a tuple of several is refused: ember's node has one
output). backward returns one value per argument of forward, None for those that are
not tensors or need no gradient, as PyTorch's does.
"""

from ember import _ember


class FunctionCtx:
    """The `ctx` of a Function: what forward keeps for backward (save_for_backward, or any
    attribute), and which inputs need a gradient (needs_input_grad)."""

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self._saved = ()

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, _ember.Tensor):
                raise TypeError(f"save_for_backward takes tensors or None, not {type(t).__name__}")
        self._saved = tensors
        self._versions = [t._version if t is not None else 0 for t in tensors]

    @property
    def saved_tensors(self):
        """The saved tensors; RuntimeError, as PyTorch's, if one was modified in place
        after it was saved (its _version changed)."""
        for i, (t, version) in enumerate(zip(self._saved, self._versions)):
            if t is not None and t._version != version:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified by an inplace "
                    f"operation: saved tensor {i} of shape {tuple(t.shape)} is at version {t._version}; expected "
                    f"version {version} instead")
        return self._saved

    def mark_non_differentiable(self, *tensors):
        raise NotImplementedError("mark_non_differentiable: an ember Function's output is differentiable")


class Function:
    """Subclass it with static forward(ctx, ...) and backward(ctx, grad_output); call
    apply(...), never forward directly."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass defines forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("a Function subclass defines backward(ctx, grad_output)")

    @classmethod
    def apply(cls, *args):
        needs = tuple(isinstance(a, _ember.Tensor) and a.requires_grad for a in args)
        ctx = FunctionCtx(needs)
        with _ember.no_grad():
            output = cls.forward(ctx, *args)
        if isinstance(output, (tuple, list)):
            raise NotImplementedError(f"{cls.__name__}.forward returned {len(output)} values; an ember "
                                      "Function has one output tensor")
        if not isinstance(output, _ember.Tensor):
            raise TypeError(f"{cls.__name__}.forward returned {type(output).__name__}, not a tensor")
        if not (_ember.is_grad_enabled() and any(needs)):
            return output
        positions = [i for i, a in enumerate(args) if isinstance(a, _ember.Tensor)]

        def backward(grad):
            grads = cls.backward(ctx, grad)
            if not isinstance(grads, tuple):
                grads = (grads,)
            if len(grads) != len(args):
                raise ValueError(f"{cls.__name__}.backward returned {len(grads)} values for "
                                 f"{len(args)} arguments of forward")
            for i, g in enumerate(grads):
                if g is not None and i not in positions:
                    raise ValueError(f"{cls.__name__}.backward returned a gradient for argument {i}, "
                                     "which is not a tensor")
            return [grads[i] for i in positions]

        return _ember._record(cls.__name__, output, [args[i] for i in positions], backward)


__all__ = ["Function", "FunctionCtx"]
