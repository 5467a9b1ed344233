"""An unpipelined reference for baton's runs, written with nothing from baton but its files.

usage: torch_reference.py --dumps DIR --ranks N [--rtol R] [--atol A]
                          [--python-model FILE] [--config FILE] SETTING...

SETTING is what the test passed to `baton launch --set` (key=value), over the keys of the
YAML file given with --config, over baton's documented defaults. From them this script
builds the model in plain PyTorch (a Python definition of baton's built-in MLP and GPT, the
TorchScript file itself, the stage files of model.stages run one after another, or — with
--python-model — the author's own class from make_model() in FILE), loads the initial parameters baton's ranks dumped
(DIR/rank<r>.pt, `initial.<name>`), reads the data the way the configuration reference
describes it (synthetic, .npy/.pt files, a token file), runs the loss (cross entropy, mse
or the scripted loss file) and torch.optim's
optimizer for every step on the whole batch, and compares with what the ranks dumped:

  * every parameter of the model comes from exactly one rank, under its full-model name;
  * the loss of every step (reported by exactly one rank);
  * every parameter's gradient after step 1;
  * every parameter after the last step.

How close is close enough is one rule for every comparison, sized from what can differ
between a pipelined run and this one — the order of float32 sums (microbatches, replicas,
the BLAS kernel's blocking for other matrix shapes, threads) — and carried through the
optimizer's own update (docs/testing.md, "Tolerances"; the class Tolerance below).

With world.data_parallel D in the settings the ranks are D replicas of a pipeline (rank =
replica x ranks/D + pipeline rank): the reference still trains one model on the whole batch,
and every replica, on its own, must start from the same parameters and match all of the above.

Exit status 0 when everything matches within rtol/atol, 1 with a report otherwise, 2 when
the settings ask for something this reference does not implement.
"""
import argparse
import copy
import importlib.util
import json
import math
import os
import re
import sys
import zipfile

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F
import torch.utils.checkpoint

# baton's documented defaults (docs/configuration.md) for the keys this reference reads.
DEFAULTS = {
    "model.name": "gpt",
    "model.loss": "cross_entropy",
    "model.ignore_index": -100,
    "model.label_smoothing": 0.0,
    "model.targets": "auto",
    "data.source": "text",
    "data.batch_size": 16,
    "data.token_format": "auto",
    # empty: the text shipped with baton
    "data.tokens": os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "configs", "data", "declaration.txt"),
    "optimizer.name": "adam",
    "optimizer.lr": 0.001,
    "optimizer.momentum": 0.0,
    "optimizer.weight_decay": 0.0,
    "optimizer.nesterov": False,
    "optimizer.betas": [0.9, 0.999],
    "optimizer.eps": 1e-8,
    "optimizer.decay": "all",
    "optimizer.clip_grad_norm": 0.0,
    "lr_schedule.name": "constant",
    "lr_schedule.warmup_steps": 0,
    "lr_schedule.min_lr": 0.0,
    "lr_schedule.decay_steps": 0,
    "eval.every": 0,
    "eval.inputs": [],
    "eval.targets": "",
    "eval.tokens": "",
    "eval.batches": 4,
    "run.steps": 20,
    "run.seed": 0,
    "world.data_parallel": 1,
    "schedule.microbatches": 4,
    "model.recompute": "off",
    "precision.compute": "fp32",
    "precision.wire": "auto",
    "precision.reduce": "fp32",
    "precision.params": "fp32",
}

# Each built-in model's documented model.params defaults (docs/configuration.md, "model").
MODEL_DEFAULTS = {
    "mlp": {"in_features": 64, "hidden": 256, "layers": 8, "out_features": 10, "head": True},
    "gpt": {"vocab_size": 256, "seq_len": 64, "d_model": 128, "heads": 4, "layers": 4,
            "tie_embeddings": False},
    "identity": {"width": 1024, "units": 4},
}


class Unsupported(Exception):
    pass


def parameters_by_name(model):
    """Every name the model holds a parameter under: a tied tensor under each of its names, as
    state_dict() lists them (named_parameters() gives each tensor once, under its first)."""
    named = dict(model.named_parameters())
    if isinstance(model, StageFiles):  # names each copy of a tie by the files' own map
        return named
    try:
        names_of = {}
        for name, value in model.state_dict(keep_vars=True).items():
            names_of.setdefault(id(value), []).append(name)
    except TypeError:  # a TorchScript module: its parameters are its own, never shared
        return named
    for param in list(named.values()):
        if len(names_of.get(id(param), [])) > 1:  # tied: every name it has
            for name in names_of[id(param)]:
                named[name] = param
    return named


def parse_value(text):
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            return json.loads(text)  # ["int64[32]<256", "bool[32]"]
        except ValueError:
            pass
        inner = text[1:-1].strip()
        return [parse_value(item) for item in inner.split(",")] if inner else []
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def flatten(tree, prefix=""):
    """A YAML mapping as dotted keys: {"model": {"params": {"width": 8}}} -> model.params.width."""
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(flatten(value, prefix + str(key) + "."))
        else:
            flat[prefix + str(key)] = value
    return flat


def parse_settings(items, config=None):
    """The defaults, then the YAML file's keys, then the --set assignments, as baton reads them."""
    settings = dict(DEFAULTS)
    if config:
        import yaml  # python3-yaml; only runs from a configuration file need it
        with open(config) as f:
            settings.update(flatten(yaml.safe_load(f) or {}))
    for item in items:
        key, _, value = item.partition("=")
        settings[key] = parse_value(value)
    for key, value in MODEL_DEFAULTS.get(settings["model.name"], {}).items():
        settings.setdefault("model.params." + key, value)
    return settings


# --- the built-in models, as the configuration reference describes them -----------------


class DenseRelu(nn.Module):
    def __init__(self, inputs, outputs):
        super().__init__()
        self.fc = nn.Linear(inputs, outputs)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Mlp(nn.Module):
    """input (Linear + ReLU), layers.<i> (Linear + ReLU), head (Linear, optional)."""

    def __init__(self, s):
        super().__init__()
        hidden = s["model.params.hidden"]
        self.input = DenseRelu(s["model.params.in_features"], hidden)
        self.layers = nn.ModuleList(
            [DenseRelu(hidden, hidden) for _ in range(s["model.params.layers"])])
        self.head = nn.Linear(hidden, s["model.params.out_features"]) \
            if s["model.params.head"] else None

    def forward(self, x):
        x = self.input(x)
        for layer in self.layers:
            x = layer(x)
        return self.head(x) if self.head is not None else x


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return x * self.weight


class Identity(nn.Module):
    """units.<i>: each multiplies its input by one learnable scalar (1 at start)."""

    def __init__(self, s):
        super().__init__()
        self.units = nn.ModuleList([Scale() for _ in range(s["model.params.units"])])

    def forward(self, x):
        for unit in self.units:
            x = unit(x)
        return x


class TokenEmbedding(nn.Module):
    def __init__(self, vocab, seq_len, width):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Parameter(torch.zeros(seq_len, width))

    def forward(self, ids):
        return self.tokens(ids) + self.positions[: ids.shape[1]]


class CausalSelfAttention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=-1)
        q, k, v = (t.reshape(batch, length, self.heads, width // self.heads).permute(0, 2, 1, 3)
                   for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(width // self.heads)
        allowed = torch.tril(torch.ones(length, length, dtype=torch.bool))
        scores = scores.masked_fill(~allowed, float("-inf"))
        mixed = scores.softmax(dim=-1) @ v
        return self.proj(mixed.permute(0, 2, 1, 3).reshape(batch, length, width))


class FeedForward(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, 4 * width)
        self.proj = nn.Linear(4 * width, width)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = FeedForward(width)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Gpt(nn.Module):
    """embed, layers.<i> (pre-norm attention + MLP blocks), norm, head."""

    def __init__(self, s):
        super().__init__()
        width = s["model.params.d_model"]
        vocab = s["model.params.vocab_size"]
        self.embed = TokenEmbedding(vocab, s["model.params.seq_len"], width)
        self.layers = nn.ModuleList(
            [Block(width, s["model.params.heads"]) for _ in range(s["model.params.layers"])])
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)
        if s["model.params.tie_embeddings"]:
            self.head.weight = self.embed.tokens.weight  # GPT-2's lm_head.weight = wte.weight

    def forward(self, ids):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))


class StageFiles(nn.Module):
    """model.stages run one after another in plain PyTorch; parameters are named by each
    file's map (baton/names.json inside the .pt) when it has one, else by the file's own."""

    def __init__(self, paths):
        super().__init__()
        self.maps, self.buffer_maps, ties = [], [], set()
        for index, path in enumerate(paths):
            extra = {"baton/names.json": ""}
            stage = torch.jit.load(path, _extra_files=extra)
            self.add_module("stage%d" % index, stage)
            names = json.loads(extra["baton/names.json"]) if extra["baton/names.json"] else {}
            self.maps.append(names.get("parameters", {}))
            self.buffer_maps.append(names.get("buffers", {}))
            ties.update(tuple(tie) for tie in names.get("ties", []))
        self.ties = sorted(ties)
        self.retie()

    def retie(self):
        """The model's tied weights (the files' "ties": one tensor under several names, each
        file holding its copy) made one tensor again, as in the model the files came from."""
        for tie in self.ties:
            shared = None
            for index, stage in enumerate(self.children()):
                for own, original in self.maps[index].items():
                    if original not in tie:
                        continue
                    *path, attribute = own.split(".")
                    holder = stage
                    for part in path:
                        holder = getattr(holder, part)
                    if shared is None:
                        shared = getattr(holder, attribute)
                    else:
                        setattr(holder, attribute, shared)

    def named_parameters(self, *args, **kwargs):
        for index, stage in enumerate(self.children()):
            for name, param in stage.named_parameters():
                yield self.maps[index].get(name, name), param

    def named_buffers(self, *args, **kwargs):
        for index, stage in enumerate(self.children()):
            for name, buffer in stage.named_buffers():
                yield self.buffer_maps[index].get(name, name), buffer

    def parameters(self, *args, **kwargs):
        seen = set()
        for _, param in self.named_parameters():
            if id(param) not in seen:
                seen.add(id(param))
                yield param

    # (step_seed, global microbatch) while a microbatch runs: each stage's forward then draws
    # from the default generator seeded by forward_seed() (docs/your-model.md, "Dropout").
    seeding = None
    # model.recompute: the stages run inside torch.utils.checkpoint (which keeps the random
    # state it finds, so dropout replays the masks drawn after the seeding above).
    checkpointed = ()

    def forward(self, *inputs):
        values = inputs
        for index, stage in enumerate(self.children()):
            if self.seeding is not None:
                torch.manual_seed(forward_seed(self.seeding[0], index, self.seeding[1]))
            if index in self.checkpointed:
                out = torch.utils.checkpoint.checkpoint(stage, *values, use_reentrant=False)
            else:
                out = stage(*values)
            values = out if isinstance(out, tuple) else (out,)
        return values[0]


def step_seed(s, step):
    return (s["run.seed"] * 1000003 + step) % 2**64


def forward_seed(seed_of_step, stage, microbatch):
    """docs/your-model.md ("Dropout"): the seed of stage `stage`'s forward of the step's
    global microbatch `microbatch` (replica x microbatches + its own)."""
    return ((seed_of_step * 1000003 + stage) * 1000003 + microbatch) % 2**64


def statistics_or_randomness(model):
    """The modules whose forward depends on the microbatching: a BatchNorm (its statistics are
    the microbatch's, and its running averages are updated once per microbatch) and dropout
    (its masks are drawn per stage and microbatch)."""
    found = []
    for name, module in model.named_modules():
        kind = getattr(module, "original_name", None) or type(module).__name__
        if kind.startswith("Dropout") and getattr(module, "p", None) == 0:
            continue  # nanoGPT's dropout=0.0: draws nothing
        if kind.startswith("BatchNorm") or kind.startswith("Dropout"):
            found.append(kind)
    return sorted(set(found))


def autocast(s):
    compute = s["precision.compute"]
    if compute == "fp32" or s["precision.params"] == "bf16":  # a bf16 module: no autocast
        return torch.autocast("cpu", enabled=False)
    if compute == "bf16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    raise Unsupported("precision.compute: %s on a CPU" % compute)


class Bf16Module(nn.Module):
    """precision.params: bf16 as Megatron runs it (Float16Module, and the optimizer's float32
    masters): a bfloat16 copy of the float32 model, float32 inputs cast to bfloat16 on the way
    in and bfloat16 outputs to float32 on the way out (the loss in float32), no autocast.
    fold() after each microbatch's backward adds its bfloat16 gradients into the masters'
    float32 .grad (main_grad) and drops them; publish() casts the stepped masters back."""

    def __init__(self, masters, stages):
        super().__init__()
        self.work = copy.deepcopy(masters).to(torch.bfloat16)
        self.pairs = list(zip(masters.parameters(), self.work.parameters()))
        if stages > 1 and isinstance(masters, Gpt) and masters.head.weight is \
                masters.embed.tokens.weight:
            # The tie's holders are different stages, whose backwards each fold their own
            # copy's gradient into float32 (Megatron: the embedding group's all-reduce of the
            # main_grads): one shared bf16 tensor would sum the two in bfloat16 first.
            self.work.head.weight = nn.Parameter(self.work.head.weight.detach().clone())
            self.pairs.append((masters.head.weight, self.work.head.weight))

    def forward(self, *inputs):
        def cast(t, source, target):
            return t.to(target) if t.dtype == source else t
        output = self.work(*(cast(t, torch.float32, torch.bfloat16) for t in inputs))
        if isinstance(output, tuple):
            return tuple(cast(t, torch.bfloat16, torch.float32) for t in output)
        return cast(output, torch.bfloat16, torch.float32)

    def fold(self):
        for master, param in self.pairs:
            if param.grad is None:
                continue
            if master.grad is None:
                master.grad = param.grad.float()
            else:
                master.grad.add_(param.grad)
            param.grad = None

    def publish(self):
        with torch.no_grad():
            for master, param in self.pairs:
                param.copy_(master)


WIRE_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


class WireRoundTrip(torch.autograd.Function):
    """precision.wire at a crossing between ranks: the activation cast to the wire's dtype and
    back on arrival, and its gradient the same way on its way back."""

    @staticmethod
    def forward(ctx, x, wire):
        ctx.wire = wire
        return x.to(wire).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.wire).to(grad.dtype), None


def model_units(model):
    """The model's units in order, as baton cuts it: a ModuleList's items one by one."""
    for name, child in model.named_children():
        if isinstance(child, nn.ModuleList):
            for index, item in enumerate(child):
                yield "%s.%d" % (name, index), item
        else:
            yield name, child


def cast_at_crossings(s, model, dumps):
    """With precision.wire set, every unit whose output goes to another rank (the next unit's
    parameters are held by another rank of the first pipeline) sends it through the wire's
    round trip, floating tensors only. Returns the crossings, for the report."""
    if s["precision.wire"] == "auto" or len(dumps) < 2:
        return []
    if not isinstance(model, (Mlp, Gpt)):
        raise Unsupported("precision.wire with a model other than the built-in mlp and gpt")
    wire = WIRE_DTYPES[s["precision.wire"]]
    units = list(model_units(model))
    owner = {}
    for rank, dump in enumerate(dumps):
        for key in dump:
            if not key.startswith("initial."):
                continue
            name = key[len("initial."):]
            unit = max((u for u, _ in units if name.startswith(u + ".")), key=len, default=None)
            if unit is not None:
                owner.setdefault(unit, rank)

    def round_trip(module, inputs, output):
        def cast(t):
            return WireRoundTrip.apply(t, wire) if t.is_floating_point() else t
        return tuple(cast(t) for t in output) if isinstance(output, tuple) else cast(output)

    crossings, previous = [], None
    for index, (name, module) in enumerate(units[:-1]):
        here = owner.get(name, previous)
        there = owner.get(units[index + 1][0], here)
        if here is not None and there is not None and here != there:
            module.register_forward_hook(round_trip)
            crossings.append(name)
        previous = here
    return crossings


def counted(s, targets):
    """The targets a microbatch's loss averages over: the batch's mean is their weighted mean."""
    if s["model.loss"] in ("cross_entropy", "from_model"):
        return int((targets != int(s["model.ignore_index"])).sum())
    return targets.numel()


def accumulated_under_autocast(model, s, step, inputs, targets, only=None):
    """A low-precision step as a PyTorch gradient-accumulation loop writes it (nanoGPT):
    per microbatch, forward and loss inside its own torch.autocast, then its backward, each
    microbatch's loss weighted by its share of the batch's counted targets. Autocast's cast
    of a weight lives for one context, so each microbatch's bfloat16 gradient is added into
    the float32 .grad — not summed in bfloat16 over the microbatches first, which is what one
    backward over all of them would do."""
    parts = s["schedule.microbatches"] * s["world.data_parallel"]
    chunks = [torch.chunk(t, parts) for t in inputs]
    target_chunks = torch.chunk(targets, parts)
    total = sum(counted(s, t) for t in target_chunks)
    loss = 0.0
    for index in range(parts) if only is None else only:
        if isinstance(model, StageFiles):
            model.seeding = (step_seed(s, step), index)
        with autocast(s):
            output = model(*(c[index] for c in chunks))
            part = loss_of(s, output[0] if isinstance(output, tuple) else output,
                           target_chunks[index])
            part = part * (counted(s, target_chunks[index]) / total)
        part.backward()
        if isinstance(model, Bf16Module):
            model.fold()
        loss = loss + part.detach()
    if isinstance(model, StageFiles):
        model.seeding = None
    return loss


def bf16_reduce_uncertainty(model, s, step, inputs, targets):
    """precision.reduce: bf16 — each replica's gradient g_r cast to bfloat16 (round to nearest:
    off by at most 2^-8 |g_r|), the D casts summed in bfloat16 (each of the D - 1 additions off
    by at most 2^-8 of its partial sum, itself at most (1 + 2^-8)^k sum |g_r|), the sum taken
    back to float32 and divided by D. So the average is off by at most
    2^-8 sum_r |g_r| (1 + (D - 1)(1 + 2^-8)^D) / D per element, whatever order the transport
    sums in. g_r is replica r's share of the step's loss (its microbatches, weighted as in the
    batch) times D: their mean is the batch's gradient. Leaves .grad as it found it."""
    replicas, per_replica = s["world.data_parallel"], s["schedule.microbatches"]
    kept = {id(p): (p.grad.clone() if p.grad is not None else None) for p in model.parameters()}
    magnitude = {}
    for replica in range(replicas):
        for param in model.parameters():
            param.grad = None
        accumulated_under_autocast(model, s, step, inputs, targets,
                                   range(replica * per_replica, (replica + 1) * per_replica))
        for name, param in model.named_parameters():
            if param.grad is not None:
                g = (param.grad.double() * replicas).abs()
                magnitude[name] = magnitude[name] + g if name in magnitude else g
    for param in model.parameters():
        param.grad = kept[id(param)]
    u = 2.0 ** -8
    factor = (1 + (replicas - 1) * (1 + u) ** replicas) / replicas
    return {name: u * factor * total for name, total in magnitude.items()}


def microbatched(model, s, step, inputs):
    """The model's output on the whole batch, computed a microbatch at a time as baton splits
    it: the global batch in world.data_parallel x schedule.microbatches equal consecutive
    chunks (replica r's rows are the r-th slice), stage files seeded per stage and microbatch.
    The loss is then taken on the whole output, as without microbatches."""
    parts = s["schedule.microbatches"] * s["world.data_parallel"]
    chunks = [torch.chunk(t, parts) for t in inputs]
    outputs = []
    for index in range(parts):
        if isinstance(model, StageFiles):
            model.seeding = (step_seed(s, step), index)
        output = model(*(c[index] for c in chunks))
        outputs.append(output[0] if isinstance(output, tuple) else output)
    if isinstance(model, StageFiles):
        model.seeding = None
    return torch.cat(outputs)


def load_python_model(path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # its sibling modules
    spec = importlib.util.spec_from_file_location("reference_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_model()


def build_model(s, python_model=None):
    name = s["model.name"]
    if python_model:
        return load_python_model(python_model)
    if name == "mlp":
        return Mlp(s)
    if name == "gpt":
        return Gpt(s)
    if name == "identity":
        return Identity(s)
    if name == "torchscript":
        stages = s.get("model.stages") or []
        return StageFiles(stages) if stages else torch.jit.load(s["model.path"])
    raise Unsupported("model.name " + str(name))


# --- the data ------------------------------------------------------------------------------


def row_generator(s, step, row):
    """The rule docs/configuration.md writes down ("data", every step's randomness): row `row`
    (from 0) of step `step`'s global batch is drawn by a CPU generator seeded with
    (step_seed x 1000003 + row) mod 2^64, step_seed = run.seed x 1000003 + step: a synthetic
    row's inputs (in the order of the forward's arguments), then its target; a text row's window
    start."""
    return torch.Generator().manual_seed((step_seed(s, step) * 1000003 + row) % 2**64)


DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
          "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
          "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool}


def declared_inputs(s):
    """model.params.inputs as the configuration reference describes it: (dtype, shape, high)
    per argument; input_shape is one float32 input."""
    declared = []
    for text in s.get("model.params.inputs") or []:
        match = re.fullmatch(r"\s*(\w+)\s*\[([^\]]*)\]\s*(?:<\s*(\d+))?\s*", str(text))
        if not match:
            raise Unsupported("model.params.inputs entry " + str(text))
        shape = [int(x) for x in match.group(2).split(",") if x.strip()]
        declared.append((DTYPES[match.group(1)], shape, int(match.group(3) or 0)))
    if s.get("model.params.input_shape"):
        declared.append((torch.float32, list(s["model.params.input_shape"]), 0))
    return declared


def output_of(model, sample):
    """The model's output on a sample, leaving its buffers (a BatchNorm's statistics) as they
    were: learning the output's shape is not a training step."""
    kept = [(buffer, buffer.clone()) for buffer in model.buffers()]
    with torch.no_grad():
        out = model(*sample)
        for buffer, copy in kept:
            buffer.copy_(copy)
    return out[0] if isinstance(out, tuple) else out


def read_tensor(path):
    if path.endswith(".npy"):
        return torch.from_numpy(np.load(path))
    return torch.load(path)


def read_tokens(s):
    path = s["data.tokens"]
    kind = s["data.token_format"]
    if kind == "auto":
        kind = "npy" if path.endswith(".npy") else "bytes"
    if kind == "npy":
        return torch.from_numpy(np.load(path).astype(np.int64))
    raw = open(path, "rb").read()
    dtype = {"bytes": np.uint8, "uint16": np.dtype("<u2"), "int32": np.dtype("<i4")}[kind]
    return torch.from_numpy(np.frombuffer(raw, dtype=dtype).astype(np.int64))


class Batches:
    """The batch of every step: (inputs, targets), inputs a tuple of the forward's arguments."""

    def __init__(self, s, model):
        self.s = s
        self.size = s["data.batch_size"]
        self.source = s["data.source"]
        # Cross entropy takes class ids, mse values shaped like the output; a scripted loss
        # what model.targets says, or (auto) what the data holds: integer files and a text's
        # next tokens are class ids, float files and synthetic data values.
        loss, kind = s["model.loss"], s["model.targets"]
        own = model_loss_record(s) if loss == "from_model" else None
        if own is not None:
            self.value_targets = own["targets"]["dtype"].startswith("float")
        elif loss in ("cross_entropy", "mse"):
            self.value_targets = loss == "mse"
        elif kind != "auto":
            self.value_targets = kind == "values"
        elif self.source == "files":
            self.value_targets = read_tensor(s["data.targets"]).is_floating_point()
        else:
            self.value_targets = self.source != "text"
        name = s["model.name"]
        # (dtype, one sample's shape, high) of every argument of the forward.
        if name == "mlp":
            self.declared = [(torch.float32, [s["model.params.in_features"]], 0)]
        elif name == "gpt":
            self.declared = [(torch.int64, [s["model.params.seq_len"]],
                              s["model.params.vocab_size"])]
        elif name == "identity":
            self.declared = [(torch.float32, [s["model.params.width"]], 0)]
        else:
            self.declared = declared_inputs(s)
        self.classes = {"torchscript": s.get("model.params.num_classes", 0),
                        "mlp": s.get("model.params.out_features"),
                        "identity": s.get("model.params.width")}.get(
                            name, s.get("model.params.vocab_size"))
        if self.source == "files":
            files = s["data.inputs"] if isinstance(s["data.inputs"], list) else [s["data.inputs"]]
            # A user's model takes the data as it is; a built-in one in its own dtype.
            self.inputs = [read_tensor(f) for f in files]
            if name != "torchscript":
                self.inputs = [t.to(self.declared[0][0]) if self.declared[0][0].is_floating_point
                               else t.long() for t in self.inputs]
            self.targets = read_tensor(s["data.targets"])
            self.targets = self.targets.float() if self.value_targets else self.targets.long()
            sample = tuple(t[:1] for t in self.inputs)
        elif self.source == "text":
            self.tokens = read_tokens(s)
            dtype, shape, _ = self.declared[0]
            sample = (self.tokens[:shape[0]].unsqueeze(0).to(dtype),)
        else:
            for i, (dtype, shape, high) in enumerate(self.declared):
                if not dtype.is_floating_point and dtype != torch.bool and not high:
                    self.declared[i] = (dtype, shape, self.classes)
            sample = self.draw_inputs(row_generator(s, 1, 0))
        # What the output is, learned from a sample of the data as the reference describes
        # (the model's own loss: what its last stage file records).
        output = output_of(model, sample) if own is None and (
            name == "torchscript" or self.value_targets) else None
        if own is not None:
            self.target_shape = list(own["targets"]["shape"])
            self.classes = own["targets"]["classes"] or self.classes
        elif self.value_targets:
            self.target_shape = list(output.shape[1:])
        elif output is not None:
            self.target_shape = list(output.shape[1:-1])
            self.classes = self.classes or output.shape[-1]
        else:
            self.target_shape = [s["model.params.seq_len"]] if name == "gpt" else []

    def draw_inputs(self, generator):
        """One row's inputs, each with its batch dimension of 1."""
        inputs = []
        for dtype, shape, high in self.declared:
            shape = [1] + shape
            if dtype.is_floating_point:
                inputs.append(torch.randn(shape, generator=generator, dtype=dtype))
            elif dtype == torch.bool:
                inputs.append(torch.randint(2, shape, generator=generator).bool())
            else:
                inputs.append(torch.randint(high, shape, generator=generator).to(dtype))
        return inputs

    def batch(self, step):
        s = self.s
        if self.source == "synthetic":
            # Each row from its own generator: its inputs first, in order, then its target.
            rows, targets = [], []
            for row in range(self.size):
                generator = row_generator(s, step, row)
                rows.append(self.draw_inputs(generator))
                shape = [1] + self.target_shape
                if self.value_targets:
                    targets.append(torch.randn(shape, generator=generator))
                else:
                    targets.append(torch.randint(self.classes, shape, generator=generator))
            inputs = tuple(torch.cat(column) for column in zip(*rows))
            return inputs, torch.cat(targets)
        if self.source == "files":
            rows = (torch.arange(self.size) + (step - 1) * self.size) % self.targets.shape[0]
            return tuple(t[rows] for t in self.inputs), self.targets[rows]
        if self.source == "text":
            dtype, shape, _ = self.declared[0]
            length = shape[0]
            starts = torch.cat([torch.randint(len(self.tokens) - length, [1],
                                              generator=row_generator(s, step, row))
                                for row in range(self.size)])
            inputs = torch.stack([self.tokens[i:i + length] for i in starts.tolist()])
            targets = torch.stack([self.tokens[i + 1:i + length + 1] for i in starts.tolist()])
            return (inputs.to(dtype),), targets
        raise Unsupported("data.source " + str(self.source))


SCRIPTED_LOSSES = {}


def own_loss(output):
    """model.loss: from_model — the loss in what forward(..., targets) returns: the output
    itself, a dict's "loss", an object's .loss, or a tuple's only one-element float tensor."""
    if isinstance(output, torch.Tensor):
        return output.reshape(())
    if isinstance(output, dict):
        return output["loss"].reshape(())
    if hasattr(output, "loss"):
        return output.loss.reshape(())
    losses = [t for t in output if isinstance(t, torch.Tensor) and t.is_floating_point()
              and t.numel() == 1]
    if len(losses) != 1:
        raise Unsupported("a model output with %d one-element losses" % len(losses))
    return losses[0].reshape(())


def loss_by_the_model(model, s, step, inputs, targets):
    """model.loss: from_model, as a PyTorch loop over baton's microbatches writes it: each
    microbatch's own mean loss weighted by its share of the batch's counted targets, so the
    step's loss is the model's own on the whole batch (the targets spread unevenly, the mean
    of the microbatches' means would not be)."""
    parts = s["schedule.microbatches"] * s["world.data_parallel"]
    chunks = [torch.chunk(t, parts) for t in inputs]
    target_chunks = torch.chunk(targets, parts)
    total = sum(counted(s, t) for t in target_chunks)
    loss = 0.0
    for index in range(parts):
        if isinstance(model, StageFiles):
            model.seeding = (step_seed(s, step), index)
        with autocast(s):
            part = own_loss(model(*(c[index] for c in chunks), target_chunks[index]))
            part = part * (counted(s, target_chunks[index]) / total)
        part.backward()
        loss = loss + part.detach()
    if isinstance(model, StageFiles):
        model.seeding = None
    return loss


def model_loss_record(s):
    """The last stage file's "model_loss" (baton-split's names.json inside the .pt)."""
    with zipfile.ZipFile(s["model.stages"][-1]) as archive:
        entry = next(n for n in archive.namelist() if n.endswith("/extra/baton/names.json"))
        return json.loads(archive.read(entry))["model_loss"]


def loss_of(s, output, targets):
    if s["model.loss"] == "cross_entropy":
        return F.cross_entropy(output.reshape(-1, output.shape[-1]), targets.reshape(-1),
                               ignore_index=int(s["model.ignore_index"]),
                               label_smoothing=float(s["model.label_smoothing"]))
    if s["model.loss"] == "mse":
        return F.mse_loss(output, targets)
    if str(s["model.loss"]).endswith(".pt"):
        return SCRIPTED_LOSSES.setdefault(s["model.loss"], torch.jit.load(s["model.loss"]))(
            output, targets)
    raise Unsupported("model.loss " + str(s["model.loss"]))


def parameter_groups(s, params):
    """optimizer.decay: one group, or nanoGPT's two: matrices decay, 1-dim parameters none."""
    decay = float(s["optimizer.weight_decay"])
    if s["optimizer.decay"] == "all":
        return [{"params": params, "weight_decay": decay}]
    if s["optimizer.decay"] == "matrices":
        return [{"params": [p for p in params if p.dim() >= 2], "weight_decay": decay},
                {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    raise Unsupported("optimizer.decay " + str(s["optimizer.decay"]))


def optimizer_for(s, params):
    name = s["optimizer.name"]
    groups = parameter_groups(s, params)
    lr = float(s["optimizer.lr"])
    if name == "sgd":
        return torch.optim.SGD(groups, lr=lr, momentum=s["optimizer.momentum"],
                               nesterov=s["optimizer.nesterov"])
    betas = tuple(float(b) for b in s["optimizer.betas"])
    if name == "adam":
        return torch.optim.Adam(groups, lr=lr, betas=betas, eps=float(s["optimizer.eps"]))
    if name == "adamw":
        return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=float(s["optimizer.eps"]))
    raise Unsupported("optimizer.name " + str(name))


def learning_rate(s, step):
    """lr_schedule at training step `step` (from 1), as docs/configuration.md writes it."""
    lr, name = float(s["optimizer.lr"]), s["lr_schedule.name"]
    warmup, low = int(s["lr_schedule.warmup_steps"]), float(s["lr_schedule.min_lr"])
    end = int(s["lr_schedule.decay_steps"]) or int(s["run.steps"])
    if warmup > 0 and step <= warmup:
        return lr * step / warmup
    if name == "constant":
        return lr
    if step > end:
        return low
    progress = (step - warmup) / (end - warmup)
    if name == "linear":
        return lr + (low - lr) * progress
    if name == "cosine":
        return low + 0.5 * (lr - low) * (1 + math.cos(math.pi * progress))
    raise Unsupported("lr_schedule.name " + str(name))


# --- what the ranks dumped -------------------------------------------------------------------


class Report:
    def __init__(self):
        self.problems = []
        self.checked = 0

    def fail(self, text):
        self.problems.append(text)


def gather(dumps, prefix, report):
    """name -> tensor over every rank; a name held by two ranks is a problem."""
    merged, owner = {}, {}
    for rank, dump in enumerate(dumps):
        for key, value in dump.items():
            if not key.startswith(prefix):
                continue
            name = key[len(prefix):]
            if name in merged:
                report.fail("%s%s is held by rank %d and rank %d" % (prefix, name, owner[name], rank))
            merged[name], owner[name] = value, rank
    return merged


def compare(report, what, actual, expected, allowed):
    """actual against expected, element by element: |actual - expected| <= allowed."""
    report.checked += 1
    if actual.shape != expected.shape:
        report.fail("%s: shape %s, expected %s" % (what, list(actual.shape), list(expected.shape)))
        return
    actual, expected = actual.double(), expected.double()
    # A nan compares as nothing: where one side is a nan the other must be too (a nan where
    # a number is expected would otherwise pass every bound).
    unmatched = torch.isnan(actual) != torch.isnan(expected)
    if unmatched.any():
        worst = int(unmatched.reshape(-1).nonzero()[0].item())
        report.fail("%s: element %d is %.9g, expected %.9g" % (
            what, worst, actual.reshape(-1)[worst].item(), expected.reshape(-1)[worst].item()))
        return
    both = torch.isnan(actual) & torch.isnan(expected)
    excess = torch.where(both, torch.zeros_like(actual), (actual - expected).abs() - allowed)
    if excess.numel() and excess.max().item() > 0:
        worst = int(excess.argmax().item())
        got, want = actual.reshape(-1)[worst].item(), expected.reshape(-1)[worst].item()
        bound = allowed.reshape(-1)[worst].item() if torch.is_tensor(allowed) else allowed
        report.fail("%s: element %d is %.9g, expected %.9g: differs by %.3g, allowed %.3g"
                    % (what, worst, got, want, abs(got - want), bound))


class Tolerance:
    """What a pipelined float32 run may differ from this one by, and why (docs/testing.md).

    Every difference comes from the order of float32 sums: a microbatch's mean against the
    whole batch's, gradients accumulated microbatch by microbatch, replicas averaged, the
    BLAS kernel blocking other matrix shapes, reductions split over threads. A sum of terms
    rounded in another order differs by a few units of float32 rounding (6e-8) times the
    magnitude of the terms, which for an element that cancels to almost nothing is the
    tensor's scale rather than its own value. So:

      * a loss (a mean of positive terms): rtol;
      * a gradient element g: rtol |g| + max(atol, rtol max|G|), G its tensor. rtol 1e-5 is
        ~170 float32 roundings: far above rounding, far below any real defect (a dropped
        microbatch moves a gradient by 1/M, a wrong scale by a factor);
      * a parameter after the last step: rtol |p| + atol + its drift, the most the optimizer
        can have moved it apart from that uncertainty in every step's gradient (the same
        bound as above, applied to each step's gradient in the reference's own run):
          SGD (momentum mu): linear in the gradient, so the uncertainty is carried as the
            gradient is, through the momentum buffer: b = mu b + nu; drift += lr b;
          Adam: the step lr m^/(sqrt(v^) + eps) is normalised by the gradient's own size, so
            an uncertainty nu moves it by up to lr (1 + B) nu / (sqrt(v^) - nu + eps), and
            never by more than two of its largest steps, 2 B lr (B = the largest |m^|/sqrt(v^)
            Adam's averages allow at that step). An element whose gradient is rounding noise
            around zero (an attention key's bias) may end anywhere within that; every other
            element is held to a small fraction of one step.
        L2 weight decay adds the parameter's own drift to its gradient's uncertainty.
    """

    def __init__(self, s, params, rtol, atol):
        self.rtol, self.atol = rtol, atol
        self.name = s["optimizer.name"]
        self.momentum = float(s["optimizer.momentum"])
        self.beta1, self.beta2 = (float(b) for b in s["optimizer.betas"])
        self.eps = float(s["optimizer.eps"])
        self.drift = {n: torch.zeros_like(p, dtype=torch.double) for n, p in params.items()}
        # Per element, what each step's uncertainty leaves for the next: SGD's momentum buffer's
        # uncertainty, or Adam's largest nu so far.
        self.carried = {n: torch.zeros_like(p, dtype=torch.double) for n, p in params.items()}
        self.steps = 0
        # precision.reduce: bf16 — per parameter, what the bfloat16 all-reduce may have moved
        # each element of this step's gradient by (bf16_reduce_uncertainty), and step 1's.
        self.reduced = {}
        self.first_reduced = {}

    def gradient(self, g, name=None, first=False):
        """The uncertainty of every element of gradient g (of parameter `name`)."""
        g = g.double().abs()
        scale = g.max().item() if g.numel() else 0.0
        nu = self.rtol * g + max(self.atol, self.rtol * scale)
        extra = (self.first_reduced if first else self.reduced).get(name)
        return nu if extra is None else nu + extra

    def after_step(self, params, grads, optimizer, clipped):
        """Adds what this step's update may have moved each parameter (grads: this step's, as
        the update used them — clipped where `clipped`; params: after the update). Clipping
        scales every gradient by a factor computed from the norm, itself a sum known to rtol:
        the factor's own uncertainty adds rtol |g|."""
        self.steps += 1
        t = self.steps
        group_of = {id(p): group for group in optimizer.param_groups for p in group["params"]}
        for name, param in params.items():
            if name not in grads:
                continue  # no gradient, no update, in PyTorch as in baton
            group = group_of[id(param)]
            lr, decay = group["lr"], group["weight_decay"]
            nu = self.gradient(grads[name], name)
            if clipped:
                nu = nu + self.rtol * grads[name].double().abs()
            if self.name != "adamw":  # L2 decay: the parameter's own drift enters the gradient
                nu = nu + decay * self.drift[name]
            if self.name == "sgd":
                carried = self.carried[name] * self.momentum + nu if self.momentum else nu
                self.carried[name] = carried
                self.drift[name] += lr * carried
            else:  # adam, adamw (whose decoupled decay only shrinks a drift)
                beta1, beta2, eps = self.beta1, self.beta2, self.eps
                worst = torch.maximum(self.carried[name], nu)  # the largest nu so far
                self.carried[name] = worst
                series = sum((beta1 * beta1 / beta2) ** k for k in range(t))
                bound = ((1 - beta1) / (1 - beta1 ** t) * math.sqrt(series)
                         * math.sqrt((1 - beta2 ** t) / (1 - beta2)))
                v_hat = optimizer.state[param]["exp_avg_sq"].double() / (1 - beta2 ** t)
                spread = (1 + bound) * worst / ((v_hat.sqrt() - worst).clamp(min=0) + eps)
                self.drift[name] += lr * spread.clamp(max=2 * bound)

    def final(self, name, expected):
        return self.rtol * expected.double().abs() + self.atol + self.drift[name]


def check_pipeline(report, label, dumps, expected_names, losses, first_grads, params,
                   tolerance):
    """One pipeline's dumps against the reference: losses, first gradients, final parameters."""
    reporting = [rank for rank, dump in enumerate(dumps) if "loss" in dump]
    if len(reporting) != 1:
        report.fail("%sthe loss is reported by ranks %s; exactly one rank holds the last stage"
                    % (label, reporting))
    else:
        got = dumps[reporting[0]]["loss"]
        expected = torch.tensor(losses, dtype=torch.double)
        compare(report, "%sthe losses of steps 1..%d" % (label, len(losses)), got, expected,
                tolerance.rtol * expected.abs())
    grads = gather(dumps, "grad.", report)
    finals = gather(dumps, "param.", report)
    for name in expected_names:
        if name not in first_grads:
            continue
        if name not in grads:
            report.fail("%sgrad.%s: no rank dumped it" % (label, name))
        else:
            compare(report, "%sgradient of %s after step 1" % (label, name), grads[name],
                    first_grads[name], tolerance.gradient(first_grads[name], name, first=True))
    for name in expected_names:
        if name not in finals:
            report.fail("%sparam.%s: no rank dumped it" % (label, name))
        else:
            expected = params[name].detach()
            compare(report, "%s%s after step %d" % (label, name, len(losses)), finals[name],
                    expected, tolerance.final(name, expected))
    extra = sorted(set(grads) - set(first_grads)) + sorted(set(finals) - set(params))
    if extra:
        report.fail("%sthe ranks dumped parameters the model does not have: %s" % (label, extra))


def check_buffers(report, label, dumps, model, rtol):
    """The buffers the ranks end with ("buffer.<name>": a BatchNorm's running statistics and
    num_batches_tracked) against the reference's, by name. Counts are exact. A running average
    is a sum of microbatch statistics of activations computed from parameters that agree to
    the final tolerance; its elements are held to 10 rtol of the tensor's scale."""
    finals = gather(dumps, "buffer.", report)
    own = dict(model.named_buffers())
    for name, value in sorted(finals.items()):
        if name not in own:
            continue
        expected = own[name].detach()
        if expected.is_floating_point():
            scale = expected.double().abs().max().item() if expected.numel() else 0.0
            compare(report, "%sbuffer %s after the last step" % (label, name), value, expected,
                    10 * rtol * max(scale, 1.0))
        else:
            report.checked += 1
            if not torch.equal(value, expected):
                report.fail("%sbuffer %s after the last step is %s, expected %s"
                            % (label, name, value.tolist(), expected.tolist()))


class HeldOut:
    """The eval section's rows, as docs/configuration.md describes them: every row of the
    eval files, or eval.batches batches drawn as training draws them with seed run.seed + 1
    (from eval.tokens when given)."""

    def __init__(self, s, model):
        held = dict(s)
        held["run.seed"] = s["run.seed"] + 1
        if s["data.source"] == "files":
            held["data.inputs"], held["data.targets"] = s["eval.inputs"], s["eval.targets"]
            held["data.batch_size"] = len(read_tensor(s["eval.targets"]))
            steps = [1]
        else:
            if s["eval.tokens"]:
                held["data.tokens"] = s["eval.tokens"]
            steps = range(1, s["eval.batches"] + 1)
        batches = Batches(held, model)
        parts = [batches.batch(step) for step in steps]
        self.inputs = tuple(torch.cat([p[0][i] for p in parts]) for i in range(len(parts[0][0])))
        self.targets = torch.cat([p[1] for p in parts])

    def loss(self, s, model):
        """The loss over all held-out rows at once, the model in eval mode, no gradient."""
        was_training = model.training
        model.eval()
        with torch.no_grad(), autocast(s):
            if s["model.loss"] == "from_model":
                value = own_loss(model(*self.inputs, self.targets)).item()
            else:
                output = model(*self.inputs)
                value = loss_of(s, output[0] if isinstance(output, tuple) else output,
                                self.targets).item()
        model.train(was_training)
        return value


def check_step_figures(report, label, dumps, lrs, norms, tolerance, evals):
    """Every rank's learning rate of every step (exact: the same formula in double), and,
    with clipping, the gradient's norm before it (a sum of squares: rtol)."""
    for rank, dump in enumerate(dumps):
        if "lr" not in dump:
            report.fail("%srank %d dumped no learning rates" % (label, rank))
        else:
            expected = torch.tensor(lrs, dtype=torch.double)
            compare(report, "%srank %d's lr of steps 1..%d" % (label, rank, len(lrs)),
                    dump["lr"], expected, 1e-12 * expected.abs() + 1e-15)
        if not norms:
            if "grad_norm" in dump:
                report.fail("%srank %d measured a gradient norm without clipping" % (label, rank))
        elif "grad_norm" not in dump:
            report.fail("%srank %d dumped no gradient norms" % (label, rank))
        else:
            expected = torch.tensor(norms, dtype=torch.double)
            compare(report, "%srank %d's grad_norm of steps 1..%d" % (label, rank, len(norms)),
                    dump["grad_norm"], expected, tolerance.rtol * expected.abs())
    # The held-out loss, on the rank of the last stage (a loss: rtol), after the steps due.
    holder = [dump for dump in dumps if "loss" in dump]
    if evals and holder:
        if "eval_loss" not in holder[0]:
            report.fail("%sthe last stage's rank dumped no eval loss" % label)
        else:
            steps = [step for step, _ in evals]
            if holder[0]["eval_steps"].tolist() != steps:
                report.fail("%sevaluated after steps %s, expected %s"
                            % (label, holder[0]["eval_steps"].tolist(), steps))
            expected = torch.tensor([loss for _, loss in evals], dtype=torch.double)
            compare(report, "%seval losses after steps %s" % (label, steps),
                    holder[0]["eval_loss"], expected, tolerance.rtol * expected.abs())
    elif holder and "eval_loss" in holder[0]:
        report.fail("%san eval loss was dumped without eval.every" % label)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dumps", required=True)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--atol", type=float, default=1e-6)
    parser.add_argument("--python-model", default=None,
                        help="a file defining make_model(): the author's class, whose "
                             "parameter names the run must have kept")
    parser.add_argument("--config", default=None,
                        help="the YAML file the run was launched with (its relative paths are "
                             "from the working folder, as baton reads them); SETTINGs override it")
    parser.add_argument("--microbatched", action="store_true",
                        help="run each step a microbatch at a time, as baton splits it (on by "
                             "itself for a model with BatchNorm or dropout)")
    parser.add_argument("--skip-steps", default="",
                        help="steps whose update is skipped, as GradScaler skips a step whose "
                             "gradients overflowed (comma-separated; the lr schedule goes on)")
    parser.add_argument("settings", nargs="*")
    args = parser.parse_args()
    s = parse_settings(args.settings, args.config)
    torch.set_num_threads(1)

    replicas = s["world.data_parallel"]
    if not isinstance(replicas, int) or replicas < 1 or args.ranks % replicas:
        print("%d ranks do not make world.data_parallel=%s replicas" % (args.ranks, replicas))
        return 1
    width = args.ranks // replicas  # one pipeline's ranks

    report = Report()
    dumps = []
    for rank in range(args.ranks):
        path = os.path.join(args.dumps, "rank%d.pt" % rank)
        if not os.path.exists(path):
            print("rank %d wrote no dump (%s)" % (rank, path))
            return 1
        dumps.append(torch.load(path))

    try:
        model = build_model(s, args.python_model)
        initial = gather(dumps[:width], "initial.", report)
        named = parameters_by_name(model)
        expected_names = sorted(named)
        if sorted(initial) != expected_names:
            report.fail("the ranks hold parameters %s; the model has %s" %
                        (sorted(initial), expected_names))
        else:
            with torch.no_grad():
                for name, param in model.named_parameters():
                    param.copy_(initial[name])
        model.train()
        runner = model  # what runs the forward: the model, or its bf16 copy
        if s["precision.params"] == "bf16":
            # A bf16 op whose output is a sum over rows (a layer norm's weight gradient) adds
            # in float32 and rounds once; with another thread count the partial sums split
            # otherwise, and the rounding can land a bf16 ulp away. So the reference computes
            # with the ranks' threads: the same split of the same rows, the same bits.
            if "threads" in dumps[0]:
                torch.set_num_threads(int(dumps[0]["threads"]))
            if not isinstance(model, (Mlp, Gpt)):
                raise Unsupported("precision.params: bf16 with a model other than the built-in "
                                  "mlp and gpt")
            if s["precision.reduce"] == "bf16" and replicas > 1:
                raise Unsupported("precision.params: bf16 with precision.reduce: bf16")
            runner = Bf16Module(model, width * int(s.get("schedule.stages_per_rank", 1)))
            print("precision.params: bf16 (a bfloat16 module, float32 masters and main_grad)")
        crossings = cast_at_crossings(s, runner.work if runner is not model else model,
                                      dumps[:width])
        if crossings:
            print("precision.wire %s after %s" % (s["precision.wire"], ", ".join(crossings)))
        params = named
        optimizer = optimizer_for(s, list(model.parameters()))
        tolerance = Tolerance(s, params, args.rtol, args.atol)
        batches = Batches(s, model)
        losses, first_grads, lrs, norms, evals = [], {}, [], [], []
        clip = float(s["optimizer.clip_grad_norm"])
        every = int(s["eval.every"])
        held_out = HeldOut(s, model) if every > 0 else None
        by_microbatch = args.microbatched or statistics_or_randomness(model)
        recompute = s["model.recompute"]
        if isinstance(model, StageFiles) and recompute not in ("off", ["off"]):
            count = len(list(model.children()))
            model.checkpointed = set(range(count)) if recompute in ("on", ["on"]) else \
                {int(i) for i in recompute}
            print("stages %s inside torch.utils.checkpoint" % sorted(model.checkpointed))
        if by_microbatch:
            if args.python_model and "Dropout" in " ".join(statistics_or_randomness(model)):
                raise Unsupported("dropout in --python-model: its masks are drawn per stage, "
                                  "which the stage files replay (leave out --python-model)")
            print("microbatched (%s)" % ", ".join(statistics_or_randomness(model) or ["asked"]))
        skipped = {int(step) for step in args.skip_steps.split(",") if step}
        for step in range(1, s["run.steps"] + 1):
            inputs, targets = batches.batch(step)
            optimizer.zero_grad(set_to_none=True)
            if s["model.loss"] == "from_model":
                loss = loss_by_the_model(runner, s, step, inputs, targets)
            elif s["precision.compute"] != "fp32":
                loss = accumulated_under_autocast(runner, s, step, inputs, targets)
            else:
                if by_microbatch:
                    output = microbatched(model, s, step, inputs)
                else:
                    output = model(*inputs)
                loss = loss_of(s, output[0] if isinstance(output, tuple) else output, targets)
                loss.backward()
            losses.append(loss.item())
            if s["precision.reduce"] == "bf16" and replicas > 1:
                if clip > 0:
                    raise Unsupported("precision.reduce: bf16 with clipping (the norm of a "
                                      "bf16 sum)")
                tolerance.reduced = bf16_reduce_uncertainty(model, s, step, inputs, targets)
                if step == 1:
                    tolerance.first_reduced = tolerance.reduced
            if step == 1:
                first_grads = {n: p.grad.clone() for n, p in params.items() if p.grad is not None}
            if step in skipped:
                # GradScaler.step() skips optimizer.step(); the schedule's rate still moves on.
                lrs.append(learning_rate(s, step))
                if clip > 0:
                    norms.append(float("nan"))
                print("step %d skipped (--skip-steps)" % step)
                if held_out and (step % every == 0 or step == s["run.steps"]):
                    evals.append((step, held_out.loss(s, runner)))
                continue
            if clip > 0:
                norms.append(nn.utils.clip_grad_norm_(list(model.parameters()), clip).item())
            grads = {n: p.grad.clone() for n, p in params.items() if p.grad is not None}
            lrs.append(learning_rate(s, step))
            for group in optimizer.param_groups:
                group["lr"] = lrs[-1]
            optimizer.step()
            if runner is not model:
                runner.publish()
            tolerance.after_step(params, grads, optimizer, clip > 0)
            if held_out and (step % every == 0 or step == s["run.steps"]):
                evals.append((step, held_out.loss(s, runner)))
    except Unsupported as error:
        print("torch_reference.py does not implement " + str(error))
        return 2

    for replica in range(replicas):
        group = dumps[replica * width:(replica + 1) * width]
        label = "replica %d: " % replica if replicas > 1 else ""
        if replica > 0:
            for name, value in gather(group, "initial.", report).items():
                if name not in initial or not torch.equal(value, initial[name]):
                    report.fail("%sinitial.%s differs from replica 0's" % (label, name))
        check_pipeline(report, label, group, expected_names, losses, first_grads, params,
                       tolerance)
        check_step_figures(report, label, group, lrs, norms, tolerance, evals)
        check_buffers(report, label, group, model, args.rtol)

    print("torch reference: %d parameters, %d steps, losses %s"
          % (len(expected_names), len(losses), " ".join("%.6f" % l for l in losses)))
    if report.problems:
        print("%d of %d comparisons differ from the reference:" %
              (len(report.problems), report.checked))
        for problem in report.problems[:40]:
            print("  " + problem)
        return 1
    print("all %d comparisons match" % report.checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
