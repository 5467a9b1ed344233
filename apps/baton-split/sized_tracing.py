"""Tracing with the example's sizes as numbers: what baton-split's torch.fx tracer adds.

torch.fx follows forward() with symbolic values, so `b, t = idx.size(); assert t <= n` or
`if t > cached:` stops it: a symbolic size cannot decide Python control flow. A stage's
shapes are fixed when it is cut (baton preallocates its buffers from them), so the sizes can
be numbers at trace time, as Hugging Face's fx tracer and torch.export make them.

While tracing, every node also computes its value twice, on example_inputs() and on the same
inputs with one more row (the first repeated). A size that is the same in both is a number
(`t`, `n_embd // n_head`, a buffer's length); one that differs follows the batch and stays
symbolic, so a stage still runs any microbatch size. Only sizes become numbers: a branch on a
tensor's values still stops the trace, as torch.fx says. What was fixed is recorded
(SizedTracer.fixed) so the stage files can say which input shapes they were traced for.
"""
import os
import traceback

import torch
import torch.fx as fx
from torch.fx.node import map_aggregate

SIZE_METHODS = ("size", "dim", "numel")
SIZE_ATTRIBUTES = ("shape", "ndim")


class _Unknown(Exception):
    """A value the tracer could not compute: its sizes stay symbolic, as in plain torch.fx."""


class _Computing:
    """Set while the tracer computes a node's real value: the model's own code then runs as
    plain PyTorch (no proxies for its parameters, no nodes for its submodules or factories)."""
    active = False


def computing_values():
    return _Computing.active


def example_worlds(inputs):
    """example_inputs(), and the same with the first row repeated once more."""
    grown = tuple(torch.cat([t, t[:1]]) if t.dim() >= 1 else t for t in inputs)
    return [tuple(inputs), grown]


def _user_line(is_users_file):
    """'MODEL.py:41 (`code`)' of the innermost frame of the user's code, for what was fixed."""
    if is_users_file is None:
        return None
    for frame in reversed(traceback.extract_stack()):
        if is_users_file(frame.filename):
            return "%s:%d (`%s`)" % (os.path.basename(frame.filename), frame.lineno,
                                     (frame.line or "").strip())
    return None


class SizedProxy(fx.Proxy):
    """A proxy whose sizes are numbers where the two example runs agree."""

    def _values(self):
        values = self.node.meta.get("baton_values")
        if values is None or not all(isinstance(v, torch.Tensor) for v in values):
            return None
        return values

    def _size(self, dim=None):
        values = self._values()
        if values is None:
            return self.tracer.create_proxy("call_method", "size",
                                            (self,) if dim is None else (self, dim), {})
        if dim is not None:
            sizes = [v.size(dim) for v in values]
            if len(set(sizes)) == 1:
                self.tracer.record_fixed(self.node, "size(%d)" % dim)
                return sizes[0]
            return self.tracer.create_proxy("call_method", "size", (self, dim), {})
        first = values[0].size()
        if all(v.size() == first for v in values):
            self.tracer.record_fixed(self.node, "size()")
            return first
        # The batch follows the microbatch; every other dimension is a number.
        mixed = []
        for d in range(len(first)):
            if all(v.dim() == len(first) and v.size(d) == first[d] for v in values):
                mixed.append(first[d])
            else:
                mixed.append(self.tracer.create_proxy("call_method", "size", (self, d), {}))
        self.tracer.record_fixed(self.node, "size()")
        return tuple(mixed)

    def _dim(self):
        values = self._values()
        if values is not None and len({v.dim() for v in values}) == 1:
            return values[0].dim()
        return self.tracer.create_proxy("call_method", "dim", (self,), {})

    def _numel(self):
        values = self._values()
        if values is not None and len({v.numel() for v in values}) == 1:
            self.tracer.record_fixed(self.node, "numel()")
            return values[0].numel()
        return self.tracer.create_proxy("call_method", "numel", (self,), {})

    def __getattr__(self, name):
        if name == "size":
            return self._size
        if name == "dim":
            return self._dim
        if name == "numel":
            return self._numel
        if name == "shape":
            return self._size()
        if name == "ndim":
            return self._dim()
        return SizedAttribute(self, name)

    def __len__(self):
        values = self._values()
        if values is not None and values[0].dim() >= 1 and \
                len({v.size(0) for v in values}) == 1:
            self.tracer.record_fixed(self.node, "len()")
            return values[0].size(0)
        return super().__len__()


class SizedAttribute(SizedProxy):
    """`x.T`, `x.device`: as torch.fx's Attribute (its node added only when used as a value),
    with sizes as SizedProxy's."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


class SizedTracer(fx.Tracer):
    """torch.fx's tracer, each node computing its values in every example world (see the
    module's text). `worlds`: a list of input tuples; None traces as plain torch.fx does.
    `is_users_file(filename)`: whether a frame is the model's code, for where sizes were read."""

    def __init__(self, worlds=None, is_users_file=None):
        super().__init__()
        self.worlds = worlds
        self.is_users_file = is_users_file
        self.placeholders = 0
        self.fixed = []  # where forward() read a size that became a number

    def record_fixed(self, node, what):
        if node.op == "get_attr":
            return  # a parameter's or buffer's size is the model's, whatever the inputs
        where = _user_line(self.is_users_file)
        entry = where or what
        if entry not in self.fixed:
            self.fixed.append(entry)

    def proxy(self, node):
        return SizedProxy(node, self)

    def call_module(self, m, forward, args, kwargs):
        if _Computing.active:
            return forward(*args, **kwargs)
        return super().call_module(m, forward, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        if _Computing.active:
            return attr_val
        return super().getattr(attr, attr_val, parameter_proxy_cache)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr,
                                     proxy_factory_fn)
        if self.worlds is not None and isinstance(proxy, fx.Proxy):
            index = None
            if kind == "placeholder":
                index = self.placeholders
                self.placeholders += 1
            proxy.node.meta["baton_values"] = self._compute(kind, target, args, kwargs, index)
        return proxy

    def _compute(self, kind, target, args, kwargs, placeholder):
        """The node's value in every world, or None when one cannot be computed."""
        if kind == "output":
            return None
        values = []
        _Computing.active = True
        try:
            with torch.no_grad():
                for world, inputs in enumerate(self.worlds):
                    values.append(self._compute_in(world, inputs, kind, target, args, kwargs,
                                                   placeholder))
        except Exception:  # the trace itself says what went wrong, if anything did
            return None
        finally:
            _Computing.active = False
        return tuple(values)

    def _compute_in(self, world, inputs, kind, target, args, kwargs, placeholder):
        if kind == "placeholder":
            if placeholder < len(inputs):
                return inputs[placeholder]
            if args:
                return args[0]  # the parameter's default (targets=None)
            raise _Unknown()

        def value(argument):
            if isinstance(argument, fx.Proxy):
                known = argument.node.meta.get("baton_values")
                if known is None:
                    raise _Unknown()
                return known[world]
            return argument

        args = map_aggregate(args, value)
        kwargs = map_aggregate(kwargs, value)
        if kind == "get_attr":
            found = self.root
            for part in target.split("."):
                found = getattr(found, part)
            return found
        if kind == "call_module":
            return self.root.get_submodule(target)(*args, **kwargs)
        if kind == "call_function":
            return target(*args, **kwargs)
        if kind == "call_method":
            return getattr(args[0], target)(*args[1:], **kwargs)
        raise _Unknown()
