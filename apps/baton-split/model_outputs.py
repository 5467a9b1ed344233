"""What a model's forward returns, and which part of it the stages return.

A model that computes its own loss — `forward(idx, targets=None)` returning `(logits, loss)`,
a dict with "loss", or an object with `.loss` (Hugging Face's outputs) — trains on that loss
when example_inputs() gives the targets: the last stage takes them as its last input and
returns the loss (`model.loss: from_model`). Without targets such a forward returns the
logits beside a None; the stages then return the logits, and baton-split says which.

An output is addressed by a path: the keys and indices from the forward's return value to
one tensor ((), (1,), ("loss",)). Objects are read as the dicts of their fields.
"""
import inspect

import torch

TARGET_NAMES = ("targets", "labels")


class OutputError(Exception):
    """The model's output cannot be read as asked; the text says why and what to do."""


def forward_arguments(model):
    """The names of forward's positional arguments, in order (self left out)."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in inspect.signature(model.forward).parameters.values()
            if p.kind in kinds]


def targets_argument(model, inputs, asked=None):
    """(name, index) of forward's targets when example_inputs() gives them a value (asked:
    --targets-arg NAME; else an argument named targets or labels), or (name, None) when
    forward takes them but the example does not, or None."""
    names = forward_arguments(model)
    if asked:
        if asked not in names:
            raise OutputError("--targets-arg %s: forward(%s) has no argument '%s'"
                              % (asked, ", ".join(names), asked))
        name = asked
    else:
        name = next((n for n in names if n in TARGET_NAMES), None)
        if name is None:
            return None
    index = names.index(name)
    if index >= len(inputs):
        if asked:
            raise OutputError("--targets-arg %s: example_inputs() gives %d value%s, none for "
                              "'%s' (argument %d of forward(%s)); give the targets there too"
                              % (asked, len(inputs), "" if len(inputs) == 1 else "s", name,
                                 index + 1, ", ".join(names)))
        return name, None
    return name, index


def fields(value):
    """A dict, or an object with fields (a dataclass, a Hugging Face output), as a dict; None
    for anything else."""
    if isinstance(value, dict):
        return dict(value)
    if hasattr(value, "__dict__") and not isinstance(value, (torch.Tensor, torch.nn.Module)) \
            and not callable(value) and ("loss" in vars(value) or "logits" in vars(value)):
        return {k: v for k, v in vars(value).items() if not k.startswith("_")}
    return None


def describe(value):
    if isinstance(value, torch.Tensor):
        return "tensor"
    if value is None:
        return "None"
    found = fields(value)
    if found is not None:
        return "{%s}" % ", ".join("%r: %s" % (k, describe(v)) for k, v in found.items())
    if isinstance(value, (tuple, list)):
        return "%s of (%s)" % (type(value).__name__, ", ".join(describe(v) for v in value))
    return type(value).__name__


def at_path(value, path):
    for key in path:
        found = fields(value)
        value = found[key] if found is not None else value[key]
    return value


def path_text(path):
    return "".join("[%r]" % key for key in path) or "the output"


def loss_path(output):
    """Where the loss is in what forward(..., targets) returns: the output itself (one
    element), the only one-element floating tensor of a tuple, a dict's "loss", an
    object's .loss."""
    def scalar(value):
        return isinstance(value, torch.Tensor) and value.is_floating_point() and \
            value.numel() == 1
    if scalar(output):
        return ()
    found = fields(output)
    if found is not None and scalar(found.get("loss")):
        return ("loss",)
    if isinstance(output, (tuple, list)):
        losses = [i for i, item in enumerate(output) if scalar(item)]
        if len(losses) == 1:
            return (losses[0],)
    raise OutputError("forward() with targets returns %s: the model's own loss must be one "
                      "tensor of one element — the output itself, the only such tensor of a "
                      "tuple, a dict's 'loss' or an object's .loss" % describe(output))


def logits_path(output):
    """The logits beside a loss, or beside the None a forward returns without targets: a
    dict's "logits", an object's .logits, the first floating tensor of two or more
    dimensions of a tuple; None when there is none."""
    def logits(value):
        return isinstance(value, torch.Tensor) and value.is_floating_point() and value.dim() >= 2
    found = fields(output)
    if found is not None:
        return ("logits",) if logits(found.get("logits")) else None
    if isinstance(output, (tuple, list)):
        return next(((i,) for i, item in enumerate(output) if logits(item)), None)
    return None


def plain_tensors(output):
    """What baton's stages may return: one tensor, or a tuple of tensors."""
    return isinstance(output, torch.Tensor) or (
        isinstance(output, tuple) and output and
        all(isinstance(t, torch.Tensor) for t in output))


def output_path(output, with_targets):
    """The path of what the stages return: the loss with targets, the logits when the output
    holds more than tensors (a None without targets, a dict); None when the stages return
    the output as it is."""
    if with_targets:
        return loss_path(output)
    found = fields(output)
    if found is not None and isinstance(found.get("loss"), torch.Tensor):
        raise OutputError("the model returns %s, a loss among it, but none of forward's "
                          "arguments is named targets or labels: name the one that takes the "
                          "targets with --targets-arg NAME, to train on the model's own loss"
                          % describe(output))
    if plain_tensors(output):
        return None
    path = logits_path(output)
    if path is None:
        raise OutputError("the model returns %s: a pipeline's stages pass tensors only (one, "
                          "or a tuple of them), and baton-split finds no logits in it (a "
                          "dict's 'logits', an object's .logits, or a tuple's first floating "
                          "tensor of 2 or more dimensions); return the tensor(s) from forward"
                          % describe(output))
    return path


def as_graph_value(value):
    """For the tracer's output: an object with fields becomes the dict of them, so torch.fx
    can record it (it records tuples, lists and dicts)."""
    found = fields(value) if not isinstance(value, dict) else None
    return found if found is not None else value
