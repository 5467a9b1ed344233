#!/usr/bin/env python3
"""baton-split: cut a PyTorch model into one TorchScript file per pipeline stage.

usage: baton-split MODEL.py (--split-at NAME [--split-at NAME ...] | --stages N) --out DIR

MODEL.py defines make_model() (the nn.Module, with its weights) and example_inputs() (a tuple
of tensors its forward takes). baton-split traces the model with torch.fx, the example's
sizes as numbers and the batch symbolic (sized_tracing.py), cuts it before each named
submodule (or into N stages whose largest holds the fewest parameters it can),
places every parameter and buffer in the stage that uses it, scripts each stage, checks that
the stages chained together compute what the model's own forward computes, and writes

  DIR/stage-<i>.pt   one TorchScript module per stage, carrying the map from its parameter
                     and buffer names to the model's ("baton/names.json" inside the file)
  DIR/names.json     every stage's map, for reading
  DIR/model.yaml     a `model:` section to paste into a baton config

Stage i's forward takes stage i-1's outputs (one tensor, or a tuple unpacked as positional
arguments); the first takes the model's inputs. Parameter names are the model's own, so
`baton export` writes a state dict that make_model().load_state_dict() loads strictly.
See docs/your-model.md.
"""
import argparse
import contextlib
import difflib
import importlib.util
import json
import os
import re
import sys
import tempfile
import traceback
import uuid
import zipfile

NAMES_FILE = "baton/names.json"  # inside each stage's .pt; core/src/stage/stage_files_chain.cc


# baton-split's parts beside it (sized_tracing.py, model_outputs.py), imported once PyTorch is
# known to be there.
sized_tracing = None
model_outputs = None


def import_parts():
    global sized_tracing, model_outputs
    sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
    import sized_tracing as tracing_part
    import model_outputs as outputs_part
    sys.path.pop(0)
    sized_tracing, model_outputs = tracing_part, outputs_part


class SplitError(Exception):
    """A problem with the model or the request, said so the author can fix it."""


def import_torch():
    """Debian's PyTorch is python3-torch under /usr/bin/python3: another python3 first on the
    PATH (a pyenv, a venv without torch) is retried with it."""
    try:
        import torch  # noqa: F401
        return
    except ImportError:
        system_python = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(system_python) and \
                os.path.exists(system_python) and not os.environ.get("BATON_SPLIT_REEXEC"):
            os.environ["BATON_SPLIT_REEXEC"] = "1"
            os.execv(system_python, [system_python] + sys.argv)
        sys.exit("baton-split: needs PyTorch, which %s cannot import (on Debian: apt-get install "
                 "python3-torch)" % sys.executable)


def is_users_file(filename):
    """A frame of the user's code: not PyTorch's, not Python's own library, not baton-split's
    (a model file's code may live beside it or in a folder it imports from)."""
    import sysconfig
    import torch
    real = os.path.realpath(filename)
    theirs = [os.path.dirname(os.path.realpath(torch.__file__)),
              os.path.realpath(sysconfig.get_paths()["stdlib"]),
              os.path.dirname(os.path.realpath(__file__))]
    return not filename.startswith("<") and \
        not any(real.startswith(folder + os.sep) for folder in theirs)


@contextlib.contextmanager
def errors_named(path, doing):
    """A Python error raised by the user's file, as one message naming the file and the line
    it came from (the innermost frame in a file of the model's folder), not a traceback."""
    try:
        yield
    except SplitError:
        raise
    except Exception as error:  # the user's code: anything
        folder = os.path.dirname(os.path.abspath(path))
        where = ""
        for frame in reversed(traceback.extract_tb(error.__traceback__)):
            if is_users_file(frame.filename):
                where = " at %s:%d (`%s`)" % (os.path.basename(frame.filename), frame.lineno,
                                              (frame.line or "").strip())
                break
        hint = ""
        if isinstance(error, ModuleNotFoundError):
            hint = ("; baton-split puts the model file's own folder (%s) on the import path, "
                    "so a sibling module is found there, an installed one where Python finds "
                    "packages" % folder)
        raise SplitError("%s: %s failed%s: %s: %s%s"
                         % (path, doing, where, type(error).__name__, error, hint)) from None


def load_model_file(path):
    if not os.path.isfile(path):
        raise SplitError("%s: no such file" % path)
    spec = importlib.util.spec_from_file_location("baton_split_model", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["baton_split_model"] = module
    # The file's own folder first on the import path: a model file imports its siblings.
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    with errors_named(path, "loading it"):
        spec.loader.exec_module(module)
    for name in ("make_model", "example_inputs"):
        if not callable(getattr(module, name, None)):
            raise SplitError("%s defines no %s(); it must define make_model() (the nn.Module, "
                             "with its weights) and example_inputs() (a tuple of tensors its "
                             "forward takes)" % (path, name))
    import torch
    with errors_named(path, "make_model()"):
        model = module.make_model()
    if not isinstance(model, torch.nn.Module):
        raise SplitError("%s: make_model() returned a %s, not an nn.Module"
                         % (path, type(model).__name__))
    with errors_named(path, "example_inputs()"):
        inputs = module.example_inputs()
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    inputs = tuple(inputs)
    if not inputs or not all(isinstance(t, torch.Tensor) for t in inputs):
        raise SplitError("%s: example_inputs() must return a tuple of tensors, got %r"
                         % (path, [type(t).__name__ for t in inputs]))
    return model, inputs


@contextlib.contextmanager
def buffers_kept(*modules):
    """A probe (the checks below run the model) leaves every buffer as it was: in training
    mode a forward updates a BatchNorm's running statistics and num_batches_tracked, which the
    stage files would otherwise carry into training."""
    import torch
    kept = [(buffer, buffer.clone()) for module in modules for buffer in module.buffers()]
    try:
        yield
    finally:
        with torch.no_grad():
            for buffer, copy in kept:
                buffer.copy_(copy)


def user_line(stack_trace, model_file):
    """'MODEL.py:41: x = x + self.pos[: t]' from a node's or an exception's stack."""
    if not stack_trace:
        return None
    model_file = os.path.realpath(model_file)
    found = None
    lines = stack_trace.splitlines()
    for i, line in enumerate(lines):
        line = line.strip()
        if line.startswith('File "') and os.path.realpath(line[6:line.index('"', 6)]) == \
                model_file:
            number = line.split(", line ")[1].split(",")[0]
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            found = "%s:%s: %s" % (os.path.basename(model_file), number, code)
    return found


# Tensor factories that take sizes, not tensors: torch.fx sees them only through a tensor
# argument, so `torch.arange(0, t)` would be a constant of the graph, made at trace time.
FACTORIES = ("arange", "zeros", "ones", "full", "empty", "eye", "linspace")


class factories_traced(object):
    """While `tracer` traces, a factory forward() calls becomes a node of the graph, so the
    stage makes its tensor when it runs, on its device, at the microbatch's size (with sizes
    as numbers, `torch.arange(0, t)` has no symbolic argument left to tell torch.fx). While
    the tracer computes the example's values (sized_tracing.py) the factory just runs."""

    def __init__(self, tracer):
        self.tracer = tracer

    def __enter__(self):
        import torch
        self.originals = {name: getattr(torch, name) for name in FACTORIES}
        tracer = self.tracer

        def wrapped(original):
            def factory(*args, **kwargs):
                if sized_tracing.computing_values():
                    return original(*args, **kwargs)
                return tracer.create_proxy("call_function", original, args, kwargs)
            return factory

        for name, original in self.originals.items():
            setattr(torch, name, wrapped(original))

    def __exit__(self, *exception):
        import torch
        for name, original in self.originals.items():
            setattr(torch, name, original)


class proxies_unpacked_by_offset:
    """`x1, x2 = x.chunk(2, dim=-1)`, `b, t = x.size()`: torch.fx unpacks a symbolic value
    into as many as the caller's UNPACK_SEQUENCE names, found by bytecode index — which
    Python 3.11's inline caches moved (an IndexError, or the wrong instruction). While
    tracing, the instruction is found by its byte offset instead."""

    def __enter__(self):
        import dis
        import inspect
        import torch.fx as fx
        self.original = fx.Proxy.__iter__

        def unpacked(proxy):
            frame = inspect.currentframe().f_back  # the user's code
            for instruction in dis.get_instructions(frame.f_code):
                if instruction.offset == frame.f_lasti:
                    if instruction.opname == "UNPACK_SEQUENCE":
                        return (proxy[i] for i in range(instruction.argval))
                    break
            return proxy.tracer.iter(proxy)

        fx.Proxy.__iter__ = unpacked

    def __exit__(self, *exception):
        import torch.fx as fx
        fx.Proxy.__iter__ = self.original


def plain_tensors_as_constants(model):
    """A tensor kept as a plain attribute of a module (Meta's `self.freqs_cis`), neither a
    parameter nor a buffer, becomes a non-persistent buffer: torch.fx can then slice it with
    symbolic sizes, and the stage that uses it carries it as a constant. The state dict does
    not change. One tensor shared by several modules is copied for each. Returns the names."""
    import torch
    carried, seen = [], set()
    for prefix, module in model.named_modules():
        for attribute, value in list(vars(module).items()):
            if not isinstance(value, torch.Tensor) or isinstance(value, torch.nn.Parameter):
                continue
            delattr(module, attribute)
            module.register_buffer(attribute, value.clone() if id(value) in seen else value,
                                   persistent=False)
            seen.add(id(value))
            carried.append(prefix + "." + attribute if prefix else attribute)
    return carried


class Untraceable(Exception):
    """torch.fx stopped; `inside` is the innermost submodule it was in ("" for the model's own
    forward), `where` the line of the model file."""

    def __init__(self, error, inside, where):
        super().__init__(str(error))
        self.error, self.inside, self.where = error, inside, where

    def summary(self):
        first = str(self.error).split(". ")[0].strip().rstrip(".")  # torch.fx adds pages
        return "%s%s: %s" % ("at " + self.where + ": " if self.where else "",
                             type(self.error).__name__, first)


def sibling_pattern(name):
    """'layers.3.attention' -> 'layers.*.attention': the same submodule of every item."""
    import re
    return re.sub(r"(?<=\.)\d+(?=\.|$)", "*", name)


def expand_keep_whole(model, patterns):
    """--keep-whole NAME or PATTERN ('layers.*.attention', fnmatch's * and ?): every submodule
    it names. A pattern that names none is refused."""
    import fnmatch
    names = [m for m, _ in model.named_modules() if m]
    kept = set()
    for pattern in patterns:
        matched = [m for m in names if fnmatch.fnmatchcase(m, pattern)]
        if not matched:
            raise SplitError("--keep-whole %s: the model has no submodule %s '%s'%s"
                             % (pattern, "matching" if any(c in pattern for c in "*?[")
                                else "named", pattern, did_you_mean(pattern, names)))
        kept.update(matched)
    return kept


def trace(model, model_file, inputs, keep_whole=(), path=None):
    """torch.fx graph of the model, every node knowing the submodule it ran inside; submodules
    in `keep_whole` are one node each. When torch.fx stops inside a submodule, that submodule
    and its like in every item of a list (same place, same class) are kept whole and the trace
    is tried again; they run as TorchScript, which follows what torch.fx cannot. Returns the
    graph and the submodules kept whole that way, with why. `path` (model_outputs.py): the
    part of forward's return value the graph returns (the loss, the logits); None: all."""
    modules = dict(model.named_modules())
    kept = set(keep_whole)
    automatic = []
    while True:
        try:
            return trace_once(model, model_file, inputs, kept, path), automatic
        except Untraceable as failure:
            inside = failure.inside
            if not inside or inside in kept:
                raise untraceable_error(failure, model_file)
            pattern = sibling_pattern(inside)
            like = sorted(name for name in modules if sibling_pattern(name) == pattern and
                          type(modules[name]) is type(modules[inside]))
            kept.update(like)
            automatic.append((pattern if len(like) > 1 else inside, like, failure.summary()))


def untraceable_error(failure, model_file):
    inside = failure.inside
    return SplitError(
        "torch.fx cannot trace the model%s: %s: %s\n"
        "torch.fx follows forward() with symbolic values, so Python control flow that "
        "depends on a tensor's value (if/for over tensor data), or calls it cannot see "
        "into, stop it. %s, or write the stage modules by hand and give them to baton as "
        "model.stages (docs/your-model.md, \"Stage modules by hand\")."
        % (" at " + failure.where if failure.where else "", type(failure.error).__name__,
           failure.error,
           "It happens inside submodule '%s', which is kept whole already" % inside
           if inside else
           "It happens in the model's own forward(): move it into a submodule kept whole "
           "(--keep-whole NAME)"))


def trace_once(model, model_file, inputs, keep_whole, path=None):
    """One trace (sized_tracing.py: the example's sizes are numbers, the batch's symbolic).
    Returns the graph module; its `fixed_sizes` lists where forward() read a size that the
    trace fixed (empty: the stages run any shape)."""
    import torch.fx as fx

    class Tracer(sized_tracing.SizedTracer):
        record_stack_traces = True
        proxy_buffer_attributes = True  # `self.bias[:, :, :t, :t]`: the buffer's a node

        def __init__(self):
            super().__init__(sized_tracing.example_worlds(inputs), is_users_file)
            self.module_stack = [""]
            self.failed_inside = None

        def create_arg(self, a):
            return super().create_arg(model_outputs.as_graph_value(a))

        def is_leaf_module(self, m, qualified_name):
            return qualified_name in keep_whole or super().is_leaf_module(m, qualified_name)

        def call_module(self, m, forward, args, kwargs):
            if sized_tracing.computing_values():
                return forward(*args, **kwargs)
            self.module_stack.append(self.path_of_module(m))
            try:
                return super().call_module(m, forward, args, kwargs)
            except Exception:
                if self.failed_inside is None:
                    self.failed_inside = self.module_stack[-1]  # the innermost
                raise
            finally:
                self.module_stack.pop()

        def create_node(self, *args, **kwargs):
            node = super().create_node(*args, **kwargs)
            node.meta["baton_module"] = self.module_stack[-1]
            return node

    tracer = Tracer()
    # The arguments example_inputs() leaves out take their defaults, as in the model's call
    # on it (`targets=None` takes the branch without a loss).
    import inspect
    signature = inspect.signature(model.forward).parameters
    left_out = {name: signature[name].default
                for name in model_outputs.forward_arguments(model)[len(inputs):]
                if signature[name].default is not inspect.Parameter.empty}
    try:
        with factories_traced(tracer), proxies_unpacked_by_offset(), buffers_kept(model):
            graph = tracer.trace(model, concrete_args=left_out or None)
    except Exception as error:  # fx raises TraceError, TypeError, RuntimeError, ...
        where = None
        for frame in traceback.extract_tb(error.__traceback__):
            folder = os.path.dirname(os.path.realpath(model_file))
            if os.path.dirname(os.path.realpath(frame.filename)) == folder:
                where = "%s:%d (`%s`)" % (os.path.basename(frame.filename), frame.lineno,
                                          (frame.line or "").strip())
        raise Untraceable(error, tracer.failed_inside or "", where)
    without_defaults(graph, left_out)
    for node in graph.nodes:
        node.meta.pop("baton_values", None)  # the example's activations, twice: not kept
        if node.op == "output" and path is not None:
            node.args = (model_outputs.at_path(node.args[0], path),)
    graph_module = fx.GraphModule(model, graph)
    graph_module.fixed_sizes = tracer.fixed
    return graph_module


def without_defaults(graph, left_out):
    """torch.fx keeps an argument given a concrete value as a placeholder, with a check that
    it has that value (`_assert_is_none`, or `_assert(arg == value)`): the stages take only
    what example_inputs() gives, so those go."""
    import operator
    import torch
    import torch.fx._symbolic_trace as symbolic

    def left_out_placeholder(node):
        return node.op == "placeholder" and \
            any(str(node.target).startswith(name + "_") for name in left_out)

    def check_of_default(node):
        if node.op != "call_function":
            return False
        if node.target is symbolic._assert_is_none:
            return True
        if node.target is torch._assert and node.args:
            compared = node.args[0]
            return getattr(compared, "target", None) is operator.eq and \
                any(left_out_placeholder(a) for a in compared.args if hasattr(a, "op"))
        return False

    for node in list(graph.nodes):
        if check_of_default(node):
            compared = node.args[0] if node.target is torch._assert else None
            graph.erase_node(node)
            if compared is not None and not compared.users:
                graph.erase_node(compared)
    for node in list(graph.nodes):
        if left_out_placeholder(node) and not node.users:
            graph.erase_node(node)


def check_not_inside_kept(split_at, kept, kept_automatically):
    """A cut inside a submodule kept whole cannot be made: it runs as one piece."""
    why = {name: reason for _, names, reason in kept_automatically for name in names}
    for name in split_at:
        for whole in sorted(kept):
            if name != whole and belongs(name, whole):
                raise SplitError(
                    "--split-at %s: it is inside '%s', which is kept whole%s; cut before '%s' "
                    "or after it" % (name, whole, " (torch.fx cannot trace it, " + why[whole]
                                     + ")" if whole in why else " (--keep-whole)", whole))


def did_you_mean(name, choices):
    close = difflib.get_close_matches(name, choices, n=3)
    return "; did you mean %s?" % " or ".join(close) if close else ""


def is_container(module):
    import torch.nn as nn
    return isinstance(module, (nn.ModuleList, nn.Sequential, nn.ModuleDict))


def holds_repeated_blocks(module):
    """A container somewhere inside (itself included) holding two or more modules of one
    class: a model's blocks (`h`, `layers`, `encoder.layer`, a ResNet stage)."""
    for inner in module.modules():
        if is_container(inner):
            kinds = [type(item) for item in inner.children()]
            if len(kinds) >= 2 and len(set(kinds)) < len(kinds):
                return True
    return False


def units_of(model):
    """The cut points a --stages split chooses between: the smallest modules a cut can come
    before without going into a block. The model's children, and inside them, at any depth,
    every container (ModuleList, Sequential, ModuleDict) and every module that holds the
    model's blocks (`transformer.h.2`, `model.layers.5`, `encoder.layer.0`) expanded into
    its children; the blocks themselves are whole units."""
    units = []

    def expand(prefix, module):
        for name, child in module.named_children():
            path = prefix + name
            if is_container(child) or holds_repeated_blocks(child) and \
                    not is_block_of(module, child):
                expand(path + ".", child)
            else:
                units.append(path)

    expand("", model)
    return units


def is_block_of(parent, child):
    """`child` is one of `parent`'s repeated blocks (then it is a unit, not expanded)."""
    if not is_container(parent):
        return False
    kinds = [type(item) for item in parent.children()]
    return kinds.count(type(child)) >= 2


def belongs(path, name):
    return path == name or path.startswith(name + ".")


def first_node_of(graph_module, name):
    for index, node in enumerate(graph_module.graph.nodes):
        if node.op in ("placeholder", "output"):
            continue
        if belongs(node.meta.get("baton_module", ""), name) or \
                (node.op in ("call_module", "get_attr") and belongs(str(node.target), name)):
            return index
    return None


def cuts_at(graph_module, model, names):
    modules = dict(model.named_modules())
    cuts = []
    for name in names:
        if name not in modules or name == "":
            suggestion = did_you_mean(name, [m for m in modules if m]) or "."
            raise SplitError("--split-at %s: the model has no submodule named '%s'%s Its "
                             "units: %s" % (name, name, suggestion, ", ".join(units_of(model))))
        index = first_node_of(graph_module, name)
        if index is None:
            raise SplitError("--split-at %s: forward() never runs '%s', so there is nothing to "
                             "cut before" % (name, name))
        cuts.append((index, name))
    for (a, name_a), (b, name_b) in zip(cuts, cuts[1:]):
        if b <= a:
            raise SplitError("--split-at %s comes after --split-at %s but forward() runs it "
                             "first (or at the same point); give split points in the order "
                             "forward() runs them" % (name_b, name_a))
    return cuts


def balanced_cuts(graph_module, model, stages, balance, inputs, model_file):
    """The cut into `stages` whose largest stage is smallest, by parameters or (balance
    "time") by each unit's measured forward + backward on example_inputs(). Returns the cuts
    and each unit's cost (seconds for time) by unit name."""
    units = [(first_node_of(graph_module, u), u) for u in units_of(model)]
    units = sorted((index, u) for index, u in units if index is not None)
    units = [unit for i, unit in enumerate(units)
             if i == 0 or unit[0] > units[i - 1][0]]  # a module run inside another: no cut
    if stages < 1:
        raise SplitError("--stages must be at least 1")
    # A unit before which no cut can be made (a number would cross, or a parameter used on
    # both sides) runs with the one before it.
    allowed = cuttable_before(graph_module, model, inputs, [index for index, _ in units])
    modules = dict(model.named_modules())
    held = [sum(p.numel() for p in modules[u].parameters()) for _, u in units]
    kept = [i for i, can in enumerate(allowed) if can]
    # Each cut point's parameters: its unit's and those of the units after it that cannot
    # be cut before (each holder of a tied weight counts it).
    counts = [sum(held[a:b]) for a, b in zip(kept, kept[1:] + [len(units)])]
    units = [units[i] for i in kept]
    if len(units) < stages:
        raise SplitError("--stages %d: the model runs only %d units (%s); use --split-at to cut "
                         "inside them" % (stages, len(units), ", ".join(u for _, u in units)))
    costs = unit_seconds(graph_module, model, inputs, units, model_file) \
        if balance == "time" else counts
    return [units[i] for i in min_max_partition(costs, stages)], \
        {u: cost for (_, u), cost in zip(units, costs)}


def cuttable_before(graph_module, model, inputs, indices):
    """For each node index: whether a cut there passes only tensors to the next stage and
    leaves every parameter on one side (tied weights may be on both: baton sums them)."""
    import torch
    import torch.fx as fx
    nodes = list(graph_module.graph.nodes)
    values = {}

    class Recorder(fx.Interpreter):
        def run_node(self, node):
            values[node] = super().run_node(node)
            return values[node]

    with torch.no_grad(), buffers_kept(graph_module):
        Recorder(graph_module).run(*inputs)
    position = {node: i for i, node in enumerate(nodes)}
    last_use = {}
    for node in nodes:
        for used in node.all_input_nodes:
            last_use[used] = max(last_use.get(used, -1), position[node])
    by_tensor, uses = parameter_owners(graph_module, model)
    spans = [(min(position[n] for n in used), max(position[n] for n in used))
             for key, used in uses.items() if len(by_tensor[key]) == 1]
    allowed = []
    for index in indices:
        crossing = [n for n in nodes[:index] if n.op != "get_attr" and
                    last_use.get(n, -1) >= index]
        tensors = all(isinstance(values.get(n), torch.Tensor) for n in crossing)
        whole = all(not (first < index <= last) for first, last in spans)
        allowed.append(index == indices[0] or (tensors and whole))
    return allowed


def unit_seconds(graph_module, model, inputs, units, model_file, repeats=7):
    """Each unit's forward + backward on example_inputs(), the median of `repeats` timed
    passes after one untimed: the graph cut before every unit, run piece by piece as a
    pipeline runs its stages (every float input of a piece requires its gradient, every
    output's gradient is ones). Leaves the buffers and the gradients as they were."""
    import statistics
    import time
    import torch
    stage_of = assign_stages(graph_module, [index for index, _ in units[1:]])
    pieces, _ = build_stages(graph_module, stage_of, len(units))
    timings = [[] for _ in pieces]
    with buffers_kept(model):
        for attempt in range(repeats + 1):
            values = tuple(inputs)
            for index, piece in enumerate(pieces):
                arguments = [v.detach().requires_grad_(v.is_floating_point())
                             if isinstance(v, torch.Tensor) else v for v in values]
                started = time.perf_counter()
                with errors_named(model_file, "timing unit %s" % units[index][1]):
                    output = piece(*arguments)
                    roots = [t for t in flat_tensors(output) if t.requires_grad]
                    if roots:
                        torch.autograd.backward(roots, [torch.ones_like(t) for t in roots])
                if attempt > 0:
                    timings[index].append(time.perf_counter() - started)
                values = output if isinstance(output, tuple) else (output,)
    model.zero_grad(set_to_none=True)
    return [statistics.median(t) for t in timings]


def stage_seconds(unit_costs, cut_names):
    """Each stage's measured seconds: its units' sum (unit_costs is in the order they run)."""
    names = list(unit_costs)
    bounds = [0] + [names.index(name) for name in cut_names] + [len(names)]
    return [sum(unit_costs[n] for n in names[a:b]) for a, b in zip(bounds, bounds[1:])]


def min_max_partition(counts, stages):
    """Where to cut `counts` (each unit's parameters, in order) into `stages` non-empty runs
    so that the largest run is as small as it can be; among such cuts, the one whose runs'
    squares sum least (the most even). Returns the index of each run's first unit after the
    first. Exact (dynamic programming over the units, n^2 x stages)."""
    n = len(counts)
    prefix = [0]
    for count in counts:
        prefix.append(prefix[-1] + count)
    worst = (float("inf"), float("inf"))
    # best[k][i]: (largest run, sum of squares) of the first i units in k runs; start[k][i]:
    # where the last of those runs starts.
    best = [[worst] * (n + 1) for _ in range(stages + 1)]
    start = [[0] * (n + 1) for _ in range(stages + 1)]
    best[0][0] = (0, 0)
    for k in range(1, stages + 1):
        for i in range(k, n - (stages - k) + 1):
            for j in range(k - 1, i):
                if best[k - 1][j] == worst:
                    continue
                run = prefix[i] - prefix[j]
                value = (max(best[k - 1][j][0], run), best[k - 1][j][1] + run * run)
                if value < best[k][i]:
                    best[k][i], start[k][i] = value, j
    cuts, i = [], n
    for k in range(stages, 0, -1):
        i = start[k][i]
        if k > 1:
            cuts.append(i)
    return sorted(cuts)


def parameter_owners(graph_module, model):
    """For every parameter and buffer: the nodes that use it."""
    modules = dict(model.named_modules())
    by_tensor = {}
    # Every name of every tensor: a tied weight has two.
    for prefix, module in model.named_modules(remove_duplicate=False):
        for name, tensor in list(module._parameters.items()) + list(module._buffers.items()):
            if tensor is not None:
                full = prefix + "." + name if prefix else name
                if full not in by_tensor.setdefault(id(tensor), []):
                    by_tensor[id(tensor)].append(full)
    uses = {}
    for node in graph_module.graph.nodes:
        target = str(node.target)
        if node.op == "call_module":
            tensors = list(modules[target].parameters()) + list(modules[target].buffers())
        elif node.op == "get_attr":
            value = model
            for part in target.split("."):
                value = getattr(value, part)
            tensors = list(value.parameters()) + list(value.buffers()) \
                if hasattr(value, "parameters") else [value]
        else:
            continue
        for tensor in tensors:
            if id(tensor) in by_tensor:
                uses.setdefault(id(tensor), []).append(node)
    return by_tensor, uses


def assign_stages(graph_module, cut_indices):
    stage_of = {}
    stage = 0
    for index, node in enumerate(graph_module.graph.nodes):
        while stage < len(cut_indices) and index >= cut_indices[stage]:
            stage += 1
        stage_of[node] = stage
    return stage_of


def check_tied(graph_module, model, stage_of, cut_names):
    """Tied weights (one tensor under several names, GPT-2's head and embedding) are recorded:
    each stage file holds its copy under its own name, and baton makes the copies one tensor
    again, summing their gradients across the ranks that hold them. A tensor with one name
    used by two stages would be two tensors after the split: refused. Returns the ties, each
    a list of the model's names."""
    by_tensor, uses = parameter_owners(graph_module, model)
    def stage_label(s):
        return "stage %d (%s)" % (s, "start" if s == 0 else "from " + cut_names[s - 1])
    ties = []
    for key, nodes in uses.items():
        names = by_tensor[key]
        stages = sorted({stage_of[n] for n in nodes})
        if len(names) > 1:
            ties.append(sorted(names))
            continue
        if len(stages) > 1:
            raise SplitError(
                "'%s' is used by %s: a parameter or buffer belongs to one stage. Choose split "
                "points that keep its uses together (a module called twice, or a weight used "
                "in two places, must not straddle a cut)"
                % (names[0], " and ".join(stage_label(s) for s in stages)))
    return ties


def build_stages(graph_module, stage_of, num_stages, targets=None):
    """One GraphModule per stage, over the original model, so that submodules and attributes
    keep their qualified names. `targets`: the placeholder of forward's targets, which the
    last stage takes as its last input (no stage before it may use them)."""
    import torch.fx as fx
    nodes = list(graph_module.graph.nodes)
    targets_node = None
    if targets is not None:
        targets_node = next(n for n in nodes if n.op == "placeholder" and n.target == targets)
        early = sorted({stage_of[user] for user in targets_node.users} - {num_stages - 1})
        if early:
            user = next(u for u in targets_node.users if stage_of[u] == early[0])
            raise SplitError("forward() uses '%s' in stage %d (%s), before the last stage: baton "
                             "gives the targets to the last stage only, which computes the "
                             "loss; cut after that use" % (targets, early[0], user.name))
    index_of = {node: i for i, node in enumerate(nodes)}
    last_use = {}
    for node in nodes:
        for used in node.all_input_nodes:
            last_use[used] = max(last_use.get(used, -1), stage_of[node])
    # Values that cross the boundary after stage s: defined at or before s, used after.
    crossing = []
    for s in range(num_stages - 1):
        crossing.append([n for n in nodes if n.op != "get_attr" and stage_of[n] <= s and
                         last_use.get(n, -1) > s and n is not targets_node])
    stage_modules = []
    for s in range(num_stages):
        graph = fx.Graph()
        env = {}
        if s == 0:
            for node in nodes:
                if node.op == "placeholder" and node is not targets_node:
                    env[node] = graph.node_copy(node)
        else:
            for node in crossing[s - 1]:
                env[node] = graph.placeholder(node.name)
        if s == num_stages - 1 and targets_node is not None:
            env[targets_node] = graph.placeholder(targets_node.name)

        def lookup(used):
            if used not in env and used.op == "get_attr":
                env[used] = graph.node_copy(used, lookup)
            return env[used]

        for node in nodes:
            if stage_of[node] != s or node.op in ("placeholder", "get_attr"):
                continue
            if node.op == "output":
                env[node] = graph.node_copy(node, lookup)
                continue
            env[node] = graph.node_copy(node, lookup)
        if s < num_stages - 1:
            outputs = [lookup(n) for n in crossing[s]]
            graph.output(outputs[0] if len(outputs) == 1 else tuple(outputs))
        graph.lint()
        stage_modules.append(fx.GraphModule(graph_module, graph, "Stage%d" % s))
    return stage_modules, crossing


def with_article(noun):
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def check_crossing_values(graph_module, inputs, crossing, cut_names, model_file):
    """Only tensors cross ranks: a Python number or a tuple crossing a cut is refused."""
    import torch
    import torch.fx as fx
    values = {}

    class Recorder(fx.Interpreter):
        def run_node(self, node):
            result = super().run_node(node)
            values[node] = result
            return result

    with torch.no_grad(), buffers_kept(graph_module):
        Recorder(graph_module).run(*inputs)
    shapes, samples = [], []
    for s, nodes in enumerate(crossing):
        described = []
        samples.append([list(values[node].shape[1:]) for node in nodes
                        if isinstance(values.get(node), torch.Tensor)])
        for node in nodes:
            value = values.get(node)
            if not isinstance(value, torch.Tensor):
                where = user_line(node.stack_trace, model_file)
                raise SplitError(
                    "the cut before '%s' would pass '%s' (%s%s) to the next stage; stages "
                    "pass only tensors. Cut elsewhere, or compute it in the stage that uses it"
                    % (cut_names[s], node.name, with_article(type(value).__name__),
                       ", made at " + where if where else ""))
            described.append("%s %s" % (list(value.shape), str(value.dtype).replace("torch.", "")))
        shapes.append(described)
    return shapes, samples


# What TorchScript says about code it cannot compile, and the usual rewrite (works in
# PyTorch, torch.fx and TorchScript alike).
SCRIPT_REWRITES = (
    ("cannot statically infer the expected size of a list",
     "TorchScript cannot spread a shape into arguments (`reshape(*x.shape[:-1], -1, 2)`): "
     "write `x.unflatten(-1, (-1, 2))` to split the last dimension in pairs, or name every "
     "dimension (`x.reshape(b, t, h, -1, 2)`)"),
    ("cannot be used as a value",
     "TorchScript reads no module-level variable: keep the value on the module "
     "(`self.heads = HEADS` in __init__) and use `self.heads`"),
)


def script_stage(stage_module, index):
    import re
    import torch
    import warnings
    try:
        with warnings.catch_warnings():
            # TorchScript's notes on attributes fx's GraphModule carries: not the author's.
            warnings.simplefilter("ignore", UserWarning)
            return torch.jit.script(stage_module)
    except Exception as error:
        text = str(error).strip()
        lines = text.splitlines()
        what = lines[0].rstrip(":.") if lines else type(error).__name__
        where = None
        for i, line in enumerate(lines):
            found = re.search(r'File "([^"]+)", line (\d+)', line)
            if found and not found.group(1).startswith("<"):
                code = [lines[j] for j in range(i + 1, len(lines)) if "<--- HERE" in lines[j]]
                marker = lines.index(code[0]) if code else -1
                where = "%s:%s%s" % (os.path.basename(found.group(1)), found.group(2),
                                     " (`%s`)" % lines[marker - 1].strip() if marker > 0 else "")
                break
        hint = next((rewrite for said, rewrite in SCRIPT_REWRITES if said in text), None)
        if where:
            raise SplitError("stage %d cannot be scripted by TorchScript at %s: %s%s"
                             % (index, where, what, ". " + hint if hint else ""))
        raise SplitError("stage %d cannot be scripted by TorchScript: %s%s\nIts code, as "
                         "torch.fx wrote it:\n%s" % (index, " ".join(lines[:6]),
                                                      ". " + hint if hint else "",
                                                      stage_module.code))


def chained(stages, inputs, targets=None):
    """The stages one after another; the last also takes `targets` (when given)."""
    values = tuple(inputs)
    for index, stage in enumerate(stages):
        if targets is not None and index == len(stages) - 1:
            values = values + (targets,)
        out = stage(*values)
        values = out if isinstance(out, tuple) else (out,)
    return values


def flat_tensors(value):
    import torch
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in flat_tensors(item)]
    if isinstance(value, dict):
        return [t for key in sorted(value) for t in flat_tensors(value[key])]
    return []


def check_equal(model, scripted, inputs, rtol, atol, targets_index=None, path=None):
    """The stages chained equal the model on example_inputs() and, as a stage runs any
    microbatch size, on the same with one more row (sized_tracing.example_worlds): the
    model's output, or the part of it at `path` (its loss, with the targets at
    `targets_index` given to the last stage)."""
    worst = 0.0
    for world, tensors in enumerate(sized_tracing.example_worlds(inputs)):
        on = "example_inputs()" if world == 0 else \
            "example_inputs() with one more row (a batch of %d)" % tensors[0].shape[0]
        worst = max(worst, check_equal_on(model, scripted, tensors, rtol, atol, on,
                                          targets_index, path))
    return worst


def check_equal_on(model, scripted, inputs, rtol, atol, on, targets_index, path):
    import torch
    model.eval()
    for stage in scripted:
        stage.eval()
    data = [t for i, t in enumerate(inputs) if i != targets_index]
    targets = inputs[targets_index] if targets_index is not None else None
    with torch.no_grad(), buffers_kept(model, *scripted):
        expected = model(*inputs)
        if path is not None:
            expected = model_outputs.at_path(expected, path)
        try:
            got = chained(scripted, data, targets)
        except Exception as error:  # TorchScript's RuntimeError, with its own traceback
            first = str(error).strip().splitlines()
            raise SplitError("the stages chained together fail on %s, where the model runs: "
                             "%s; a size forward() reads from the batch was fixed at the "
                             "example's (report it: baton-split keeps the batch symbolic)"
                             % (on, first[-1] if first else type(error).__name__)) from None
    expected = flat_tensors(expected)
    got = flat_tensors(got)
    if len(expected) != len(got):
        raise SplitError("the stages chained together return %d tensors, the model %d"
                         % (len(got), len(expected)))
    worst = 0.0
    for a, b in zip(got, expected):
        if a.shape != b.shape:
            raise SplitError("the stages chained together return %s where the model returns %s"
                             " on %s" % (list(a.shape), list(b.shape), on))
        if a.is_floating_point():
            difference = (a.double() - b.double()).abs()
            worst = max(worst, difference.max().item() if difference.numel() else 0.0)
            if not torch.allclose(a, b, rtol=rtol, atol=atol):
                raise SplitError("the stages chained together differ from the model's own "
                                 "forward on %s: largest difference %.3g (rtol "
                                 "%g, atol %g); something forward() does is not captured by "
                                 "the trace (randomness, state kept between calls)"
                                 % (on, difference.max().item(), rtol, atol))
        elif not torch.equal(a, b):
            raise SplitError("the stages chained together differ from the model's own forward "
                             "on %s" % on)
    return worst


def name_map(stage_module, model):
    """own name -> the model's name, for parameters and for the buffers its state dict keeps
    (TorchScript forgets which buffers are persistent)."""
    persistent = set(model.state_dict().keys())
    parameters = {name: name for name, _ in stage_module.named_parameters()}
    buffers = {name: name for name, _ in stage_module.named_buffers() if name in persistent}
    return {"parameters": parameters, "buffers": buffers}


# What baton-split writes into --out: a folder holding anything else is not its to fill.
STAGE_FILE = re.compile(r"stage-\d+\.pt$")
YAML_MARK = "# From baton-split "


def written_by_split(folder, name):
    path = os.path.join(folder, name)
    if STAGE_FILE.match(name):
        try:
            with zipfile.ZipFile(path) as archive:
                return any(entry.endswith("/extra/" + NAMES_FILE) for entry in archive.namelist())
        except (OSError, zipfile.BadZipFile):
            return False
    if name == "model.yaml":
        with open(path, errors="replace") as text:
            return text.read(len(YAML_MARK)) == YAML_MARK
    if name == "names.json":
        try:
            with open(path) as text:
                maps = json.load(text)
        except (OSError, ValueError):
            return False
        return isinstance(maps, dict) and all(STAGE_FILE.match(k) for k in maps)
    return False


def check_out_folder(out):
    """--out is a new folder, an empty one, or one an earlier baton-split filled: never a file,
    never a folder with a user's files (they would be replaced or mixed with the stages)."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise SplitError("--out %s exists and is not a folder; give a folder for the stage files"
                         % out)
    if not os.path.isdir(out):
        return
    for name in sorted(os.listdir(out)):
        if not os.path.isfile(os.path.join(out, name)) or not written_by_split(out, name):
            raise SplitError("--out %s holds %s, which baton-split did not write: it fills only a "
                             "new or empty folder, or one it filled before; give another --out"
                             % (out, name))


def write_atomically(path, write):
    folder = os.path.dirname(os.path.abspath(path))
    # TorchScript names the archive's root after the file: no leading dot, same extension.
    handle, temporary = tempfile.mkstemp(dir=folder, prefix="baton-split-partial-",
                                         suffix=os.path.splitext(path)[1])
    os.close(handle)
    try:
        write(temporary)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # as open() would have made it
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def input_declarations(inputs, output):
    import torch
    declarations = []
    width = None
    first = flat_tensors(output)
    if first and first[0].is_floating_point() and first[0].dim() >= 2:
        width = first[0].shape[-1]
    notes = []
    for index, tensor in enumerate(inputs):
        dtype = str(tensor.dtype).replace("torch.", "")
        text = "%s%s" % (dtype, list(tensor.shape[1:]))
        integer = not tensor.is_floating_point() and tensor.dtype != torch.bool
        if integer and tensor.numel():
            low, high = int(tensor.min()), int(tensor.max())
            if low >= 0 and high <= 1:
                # A mask (0 and 1 only, as tokenizers return one): synthetic data draws 0 or 1.
                text += "<2"
                notes.append("input %d holds only 0 and 1 in example_inputs(): declared <2, a "
                             "mask" % index)
            elif width is not None and low >= 0 and high < width:
                # Token ids are below the vocabulary, which a language model's output scores.
                text += "<%d" % width
            else:
                notes.append("input %d (%d to %d in example_inputs()) is left unbounded: "
                             "synthetic data would draw it up to the model's output width; "
                             "add <N to its declaration if it has a bound" % (index, low, high))
        declarations.append(text)
    return declarations, notes


def model_loss_record(model, output, targets):
    """What the stage files say of the model's own loss: the targets' shape (one sample),
    dtype and classes (the logits' width, for synthetic targets below it)."""
    logits = model_outputs.logits_path(output)
    classes = model_outputs.at_path(output, logits).shape[-1] if logits is not None else 0
    return {"targets": {"shape": list(targets.shape[1:]),
                        "dtype": str(targets.dtype).replace("torch.", ""),
                        "classes": int(classes)}}


def loss_ignore_index(graph_module):
    """The ignore_index of the cross entropy the model's forward computes its loss with, and
    whether forward has one (else PyTorch's default, -100)."""
    import torch
    import torch.nn.functional as F
    modules = dict(graph_module.named_modules())
    for node in graph_module.graph.nodes:
        if node.op == "call_function" and node.target in (F.cross_entropy, F.nll_loss):
            if "ignore_index" in node.kwargs:
                return int(node.kwargs["ignore_index"]), True
            position = 4  # cross_entropy(input, target, weight, size_average, ignore_index)
            return (int(node.args[position]) if len(node.args) > position else -100), True
        if node.op == "call_module" and isinstance(
                modules.get(str(node.target)), (torch.nn.CrossEntropyLoss, torch.nn.NLLLoss)):
            return int(modules[str(node.target)].ignore_index), True
    return -100, False


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="baton-split",
        description="Cut a PyTorch model into one TorchScript file per pipeline stage "
                    "(model.stages in a baton config). MODEL.py defines make_model() and "
                    "example_inputs().")
    parser.add_argument("model_file", metavar="MODEL.py")
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--split-at", action="append", metavar="NAME",
                     help="cut before this submodule (its name in named_modules(), e.g. "
                          "blocks.2); repeat for more stages")
    how.add_argument("--stages", type=int, metavar="N",
                     help="cut into N stages between the model's units (its children, and "
                          "the items of ModuleList, Sequential and ModuleDict containers at "
                          "any depth: transformer.h.2), the largest stage as small as it can "
                          "be by parameters")
    parser.add_argument("--balance", choices=("params", "time"), default="params",
                        help="with --stages: what the largest stage holds least of — "
                             "parameters (params, the default), or the forward + backward "
                             "time measured on example_inputs() (time)")
    parser.add_argument("--out", required=True, metavar="DIR", help="where the files go")
    parser.add_argument("--keep-whole", action="append", default=[], metavar="NAME",
                        help="do not trace into this submodule, or those a pattern names "
                             "(layers.*.attention): each stays one piece, scripted as it is "
                             "(for control flow torch.fx cannot follow); repeatable. A "
                             "submodule torch.fx stops in is kept whole without it, and said")
    parser.add_argument("--targets-arg", metavar="NAME",
                        help="forward's argument that takes the targets, when it is not named "
                             "targets or labels; example_inputs() gives them, the last stage "
                             "takes them, and the model's own loss trains (model.loss: "
                             "from_model)")
    parser.add_argument("--rtol", type=float, default=1e-5,
                        help="relative tolerance of the check against the model (1e-5)")
    parser.add_argument("--atol", type=float, default=1e-5,
                        help="absolute tolerance of the check against the model (1e-5)")
    args = parser.parse_args(argv)
    import_torch()
    import_parts()
    import torch

    try:
        model, inputs = load_model_file(args.model_file)
        check_out_folder(args.out)
        with torch.no_grad(), buffers_kept(model), \
                errors_named(args.model_file, "forward() on example_inputs()"):
            output = model(*inputs)
        try:
            targets_at = model_outputs.targets_argument(model, inputs, args.targets_arg)
            targets_name, targets_index = targets_at or (None, None)
            output_path = model_outputs.output_path(output, targets_index is not None)
        except model_outputs.OutputError as error:
            raise SplitError(str(error)) from None
        model_loss = None
        if targets_index is not None:
            model_loss = model_loss_record(model, output, inputs[targets_index])
        constants = plain_tensors_as_constants(model)
        kept = expand_keep_whole(model, args.keep_whole)
        graph_module, kept_automatically = trace(model, args.model_file, inputs, kept,
                                                 output_path)
        ignore_found = False
        if model_loss is not None:
            model_loss["ignore_index"], ignore_found = loss_ignore_index(graph_module)
        for _, names, _ in kept_automatically:
            kept.update(names)
        unit_costs = None
        if args.split_at:
            if args.balance != "params":
                raise SplitError("--balance %s chooses where --stages N cuts; --split-at says "
                                 "where already" % args.balance)
            check_not_inside_kept(args.split_at, kept, kept_automatically)
            cuts = cuts_at(graph_module, model, args.split_at)
        else:
            cuts, unit_costs = balanced_cuts(graph_module, model, args.stages, args.balance,
                                             inputs, args.model_file)
        cut_indices = [index for index, _ in cuts]
        cut_names = [name for _, name in cuts]
        num_stages = len(cuts) + 1
        stage_of = assign_stages(graph_module, cut_indices)
        ties = check_tied(graph_module, model, stage_of, cut_names)
        stage_modules, crossing = build_stages(
            graph_module, stage_of, num_stages, targets_name if model_loss is not None else None)
        shapes, crossing_samples = check_crossing_values(graph_module, inputs, crossing,
                                                         cut_names, args.model_file)
        try:
            scripted = [script_stage(m, i) for i, m in enumerate(stage_modules)]
        except SplitError as error:
            if not kept_automatically:
                raise
            raise SplitError("%s\n(%s kept whole, as torch.fx cannot trace %s; TorchScript "
                             "compiles %s as written)" % (
                                 error, " and ".join(p for p, _, _ in kept_automatically),
                                 " nor ".join(r for _, _, r in kept_automatically),
                                 "it" if len(kept_automatically) == 1 else "them")) from None
        worst = check_equal(model, scripted, inputs, args.rtol, args.atol, targets_index,
                            output_path)
    except SplitError as error:
        print("baton-split: %s" % error, file=sys.stderr)
        return 1

    os.makedirs(args.out, exist_ok=True)
    maps, paths = {}, []
    # The split's identity: baton runs the files of one split, all of them, in order (files of
    # two splits cut at other places would make a model nobody wrote).
    stage_maps = [name_map(module, model) for module in stage_modules]
    every_name = sorted({original for names in stage_maps
                         for section in ("parameters", "buffers")
                         for original in names[section].values()})
    split_id = uuid.uuid4().hex
    command_line = " ".join(sys.argv[1:]) if argv is None else " ".join(argv)
    data_inputs = [t for i, t in enumerate(inputs) if i != targets_index]
    traced_inputs = [[list(t.shape[1:]) for t in data_inputs]] + crossing_samples
    if model_loss is not None:
        traced_inputs[-1] = traced_inputs[-1] + [model_loss["targets"]["shape"]]
    for i, (stage, names) in enumerate(zip(scripted, stage_maps)):
        if ties:
            names["ties"] = ties
        names["split"] = {"id": split_id, "stage": i, "stages": num_stages, "names": every_name}
        if model_loss is not None and i == num_stages - 1:
            # Its last input is the targets; it returns the model's own loss (a mean over
            # the targets other than ignore_index), which baton weighs by their count.
            names["model_loss"] = model_loss
        if graph_module.fixed_sizes:
            # The sizes forward() read are numbers in the stage: it runs these input shapes
            # only (a sample each; the batch is free), which baton checks at set-up.
            names["split"]["traced_for"] = {
                "inputs": traced_inputs[i],
                "command": "baton-split " + command_line,
                "fixed_at": graph_module.fixed_sizes[:3]}
        path = os.path.join(args.out, "stage-%d.pt" % i)
        stage.train()
        write_atomically(path, lambda p, s=stage, n=names: torch.jit.save(
            s, p, _extra_files={NAMES_FILE: json.dumps(n, indent=1)}))
        maps["stage-%d.pt" % i] = names
        paths.append(path)
    write_atomically(os.path.join(args.out, "names.json"),
                     lambda p: open(p, "w").write(json.dumps(maps, indent=1) + "\n"))
    logits = model_outputs.logits_path(output)
    width_from = model_outputs.at_path(output, logits) if logits is not None else \
        (output if output_path is None else model_outputs.at_path(output, output_path))
    declarations, input_notes = input_declarations(data_inputs, width_from)
    loss_lines = ""
    if model_loss is not None:
        loss_lines = "  loss: from_model\n"
        if model_loss["ignore_index"] != -100:
            loss_lines += "  ignore_index: %d\n" % model_loss["ignore_index"]
    yaml = ("# From baton-split %s: paste into your config.\n"
            "model:\n  name: torchscript\n%s  stages: [%s]\n  params:\n    inputs: [%s]\n"
            % (command_line, loss_lines,
               ", ".join(paths),  # as given: relative to where baton-split ran
               ", ".join('"%s"' % d for d in declarations)))
    write_atomically(os.path.join(args.out, "model.yaml"),
                     lambda p: open(p, "w").write(yaml))
    # An earlier split into this folder had more stages: its extra files are not this split's.
    for name in os.listdir(args.out):
        if STAGE_FILE.match(name) and int(name[6:-3]) >= num_stages:
            os.unlink(os.path.join(args.out, name))

    total = sum(p.numel() for p in model.parameters())
    print("baton-split: %d stages of %s (%d parameters), equal to its forward on "
          "example_inputs() (largest difference %.3g)" %
          (num_stages, os.path.basename(args.model_file), total, worst))
    measured = stage_seconds(unit_costs, cut_names) if args.balance == "time" else None
    counts = [sum(p.numel() for p in module.parameters()) for module in stage_modules]
    for i, count in enumerate(counts):
        start = "the inputs" if i == 0 else cut_names[i - 1]
        passes = ", passes %s" % ", ".join(shapes[i]) if i < len(shapes) else ""
        took = ", %.3g ms forward + backward" % (1e3 * measured[i]) if measured else ""
        print("  stage-%d.pt: from %s, %d parameters%s%s" % (i, start, count, took, passes))
    if unit_costs is not None and num_stages > 1:
        weights = measured or counts
        smallest = min(weights)
        print("  balance by %s: the largest stage as small as any cut between these %d units "
              "allows%s" % ("time" if measured else "parameters", len(unit_costs),
                            " (%.2fx the smallest)" % (max(weights) / smallest)
                            if smallest > 0 else ""))
    for pattern, names, reason in kept_automatically:
        print("  kept whole: %s (%s) — torch.fx cannot trace %s (%s); TorchScript runs %s "
              "as written" % (pattern, ", ".join(names) if len(names) > 1 else "1 submodule",
                              "them" if len(names) > 1 else "it", reason,
                              "them" if len(names) > 1 else "it"))
    if constants:
        print("  carried as constants (plain tensor attributes, not in the state dict): %s"
              % ", ".join(constants))
    if model_loss is not None:
        print("  the model's own loss: forward(%s) returns %s; the last stage takes '%s' as "
              "its last input and returns %s (model.loss: from_model, ignore_index %d%s)"
              % (", ".join(model_outputs.forward_arguments(model)[:len(inputs)]),
                 model_outputs.describe(output), targets_name,
                 model_outputs.path_text(output_path),
                 model_loss["ignore_index"], " from its cross_entropy"
                 if ignore_found else ", cross_entropy's default"))
    elif output_path is not None:
        picked = model_outputs.at_path(output, output_path)
        print("  the model returns %s: the stages return %s (%s %s)%s"
              % (model_outputs.describe(output), model_outputs.path_text(output_path),
                 list(picked.shape), str(picked.dtype).replace("torch.", ""),
                 "; forward takes '%s': give them in example_inputs() to train on the "
                 "model's own loss" % targets_name if targets_name else ""))
    if graph_module.fixed_sizes:
        print("  traced for inputs %s: the stages keep the sizes forward() reads as numbers "
              "(%s); the batch is free. For another sequence length, split again with "
              "example_inputs() of that shape" % (", ".join("%s%s" % (str(t.dtype).replace("torch.", ""),
                                                        list(t.shape[1:])) for t in data_inputs),
                                   ", ".join(graph_module.fixed_sizes[:3]) +
                                   (", …" if len(graph_module.fixed_sizes) > 3 else "")))
    for note in input_notes:
        print("  %s" % note)
    for tie in ties:
        print("  tied: %s (one tensor: each stage holding a name keeps a copy, baton sums "
              "their gradients)" % " = ".join(tie))
    print("wrote %s/stage-0..%d.pt, names.json and model.yaml:\n\n%s"
          % (args.out, num_stages - 1, yaml))
    return 0


if __name__ == "__main__":
    sys.exit(main())
