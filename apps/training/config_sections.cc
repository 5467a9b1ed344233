#include "config_sections.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "baton/config.h"
#include "baton/error.h"
#include "baton/suggest.h"
#include "model_settings.h"
#include "optimizer_settings.h"
#include "precision_settings.h"
#include "recompute_setting.h"
#include "stage_settings.h"
#include "world_info.h"

namespace baton_app {
namespace {

using baton::ParamType;

// model.stages: a torchscript model, one file per stage, cut nowhere else.
void check_stage_files(const baton::Config& config) {
  const baton::ParamValues& model = config.section("model");
  const baton::ParamValue& stages = model.at("stages");
  const auto files = stages.as_string_list();
  if (files.empty()) return;
  const std::string where = stages.origin().description + ": model.stages: ";
  if (model.get_string("name") != "torchscript") {
    throw baton::ConfigError(where +
                             "stage files are TorchScript; set model.name: torchscript "
                             "(it is '" +
                             model.get_string("name") + "')");
  }
  const baton::ParamValue& cuts = model.at("cuts");
  if (parse_stage_cuts(cuts).kind != StageCuts::Kind::kByParams) {
    throw baton::ConfigError(cuts.origin().description + ": model.cuts " + cuts.text() +
                             ": with model.stages the stages are the files; leave model.cuts "
                             "out (to cut elsewhere, run baton-split again)");
  }
  const baton::ParamValues& schedule = config.section("schedule");
  if (baton::schedule_chosen_at_start(config) &&
      schedule.at("stages_per_rank").origin().description == "default") {
    // auto chooses the stages per rank: the one the files allow.
    const std::int64_t ranks = pipeline_stages(config) / schedule.get_int("stages_per_rank");
    if (static_cast<std::int64_t>(files.size()) % ranks == 0) return;
    throw baton::ConfigError(where + std::to_string(files.size()) + " stage files do not share " +
                             "out over the pipeline's " + std::to_string(ranks) +
                             " ranks (world.ranks / world.data_parallel); split the model into "
                             "a multiple of " +
                             std::to_string(ranks) + " stages");
  }
  const std::int64_t wanted = pipeline_stages(config);
  if (static_cast<std::int64_t>(files.size()) != wanted) {
    throw baton::ConfigError(
        where + std::to_string(files.size()) + " stage files, but the plan has " +
        std::to_string(wanted) + " stages (world.ranks " +
        config.section("world").at("ranks").text() + " / world.data_parallel " +
        config.section("world").at("data_parallel").text() + " x schedule.stages_per_rank " +
        config.section("schedule").at("stages_per_rank").text() + "); split the model into " +
        std::to_string(wanted) + " (baton-split --stages " + std::to_string(wanted) +
        ") or change the layout so it has " + std::to_string(files.size()) + " stages");
  }
}

void check_batch(const baton::Config& config) {
  const baton::ParamValue& batch = config.section("data").at("batch_size");
  const std::int64_t microbatches = config.section("schedule").get_int("microbatches");
  const std::int64_t replicas = config.section("world").get_int("data_parallel");
  if (replicas > 1) {
    // Each replica takes batch_size / D rows and splits them into the microbatches.
    if (batch.as_int() % (replicas * microbatches) == 0) return;
    throw baton::ConfigError(
        batch.origin().description + ": data.batch_size " + batch.text() + " does not split into " +
        std::to_string(replicas) + " replicas (world.data_parallel) x " +
        std::to_string(microbatches) + " microbatches (schedule.microbatches) of equal size; " +
        "use a batch_size that is a multiple of " + std::to_string(replicas * microbatches) + " (" +
        std::to_string(replicas * microbatches *
                       std::max<std::int64_t>(1, batch.as_int() / (replicas * microbatches))) +
        ", for example)");
  }
  if (batch.as_int() % microbatches == 0) return;
  std::string workable;
  for (std::int64_t m = 1; m <= batch.as_int() && m <= 1024; ++m) {
    if (batch.as_int() % m == 0) workable += (workable.empty() ? "" : ", ") + std::to_string(m);
  }
  throw baton::ConfigError(batch.origin().description + ": data.batch_size " + batch.text() +
                           " does not split into schedule.microbatches " +
                           std::to_string(microbatches) +
                           " equal microbatches; microbatch counts that divide it: " + workable);
}

// eval: where its data comes from follows data.source.
void check_eval(const baton::Config& config) {
  const baton::ParamValues& eval = config.section("eval");
  const baton::Setting<baton_models::DataSource> source =
      baton::read_choice(config.section("data"), "source", baton_models::data_source_choices());
  const bool files = source.value == baton_models::DataSource::kFiles;
  const baton::ParamValue& inputs = eval.at("inputs");
  const baton::ParamValue& targets = eval.at("targets");
  if (!files && (!inputs.as_string_list().empty() || !targets.as_string().empty())) {
    const baton::ParamValue& given = inputs.as_string_list().empty() ? targets : inputs;
    throw baton::ConfigError(given.origin().description +
                             ": eval.inputs and eval.targets are held-out files for "
                             "data.source: files, but data.source is " +
                             baton_models::data_source_name(source.value) +
                             "; with text give eval.tokens, or leave them out");
  }
  if (files && eval.get_int("every") > 0 &&
      (inputs.as_string_list().empty() || targets.as_string().empty())) {
    const baton::ParamValue& every = eval.at("every");
    throw baton::ConfigError(every.origin().description +
                             ": eval.every with data.source: files needs the held-out files: "
                             "eval.inputs (one per forward argument, like data.inputs) and "
                             "eval.targets");
  }
}

// LibTorch 1.13's CPU autocast runs bf16 only.
void check_precision(const baton::Config& config) {
  const PrecisionSettings precision = read_precision_settings(config);
  if (precision.loss_scale.min > precision.loss_scale.init) {
    const baton::ParamValues& section = config.section("precision");
    std::ostringstream text;
    text << section.at("loss_scale_min").origin().description << ": precision.loss_scale_min ("
         << precision.loss_scale.min << ") is above precision.loss_scale_init ("
         << precision.loss_scale.init
         << "): the scale starts at init and never goes below min; lower min or raise init";
    throw baton::ConfigError(text.str());
  }
  if (precision.compute.value == ComputePrecision::kFp16 &&
      read_world_settings(config).device.value == DeviceKind::kCpu) {
    throw baton::ConfigError(precision.compute.where() +
                             ": precision.compute: fp16 autocast runs on a GPU only "
                             "(world.device: cuda); on a CPU use bf16");
  }
  if (precision.params.value == ParamPrecision::kBf16 &&
      precision.compute.value != ComputePrecision::kBf16) {
    throw baton::ConfigError(precision.params.where() +
                             ": precision.params: bf16 computes in bf16 (the stages' own "
                             "dtype), so it needs precision.compute: bf16 too; set it, or keep "
                             "params: fp32 for " +
                             std::string(precision.compute.value == ComputePrecision::kFp16
                                             ? "fp16 autocast"
                                             : "a float32 run"));
  }
}

void check_app_sections(const baton::Config& config) {
  read_optimizer_settings(config);  // the rules between keys (betas, nesterov, the decay's end)
  const baton::ParamValue& loss = config.section("model").at("loss");
  const std::string& loss_name = loss.as_string();
  const bool scripted =
      loss_name.size() > 3 && loss_name.compare(loss_name.size() - 3, 3, ".pt") == 0;
  // A name or a file: its choices cannot be declared in the table.
  const std::vector<std::string> losses = {"cross_entropy", "mse", "from_model"};
  if (!scripted && std::find(losses.begin(), losses.end(), loss_name) == losses.end()) {
    throw baton::ConfigError(loss.origin().description +
                             ": model.loss must be one of cross_entropy, mse, from_model, got '" +
                             loss_name + "'" + baton::did_you_mean(loss_name, losses) +
                             ", or a TorchScript .pt file whose forward(output, target) returns "
                             "the loss");
  }
  using baton_models::TargetKind;
  const baton::Setting<TargetKind> targets = baton_models::read_target_kind(config);
  if (loss_name == "from_model" &&
      (config.section("model").get_string("name") != "torchscript" ||
       config.section("model").at("stages").as_string_list().empty())) {
    throw baton::ConfigError(loss.origin().description +
                             ": model.loss: from_model trains on the loss the model's own forward "
                             "returns, which stage files written by baton-split with targets "
                             "carry: it needs model.name: torchscript with model.stages");
  }
  // The model's own loss takes the targets it was traced with, class ids or values.
  if (!scripted && loss_name != "from_model" && targets.value != TargetKind::kFollowData &&
      (targets.value == TargetKind::kClasses) != (loss_name == "cross_entropy")) {
    throw baton::ConfigError(targets.where() + ": model.targets " +
                             config.section("model").at("targets").text() +
                             " does not fit model.loss '" + loss_name +
                             "' (cross_entropy takes class ids, mse values); model.targets "
                             "chooses for a scripted loss");
  }
  const baton::ParamValue& smoothing = config.section("model").at("label_smoothing");
  if (smoothing.as_float() > 0 && loss_name != "cross_entropy") {
    throw baton::ConfigError(smoothing.origin().description + ": model.label_smoothing " +
                             smoothing.text() + " is cross entropy's; model.loss is '" + loss_name +
                             "' (a scripted loss smooths its own targets)");
  }
  std::error_code missing;
  if (scripted && !std::filesystem::is_regular_file(loss_name, missing)) {
    throw baton::ConfigError(loss.origin().description + ": model.loss: '" + loss_name +
                             "' does not exist (a TorchScript module saved with "
                             "torch.jit.save(torch.jit.script(loss), path); a relative path is "
                             "taken from the folder baton runs in)");
  }
  check_precision(config);
  check_stage_files(config);
  check_stage_cuts(config);
  if (!baton::schedule_chosen_at_start(config)) {  // auto chooses the stages
    recomputed_stages(config.section("model").at("recompute"), pipeline_stages(config));
  }
  check_batch(config);
  check_eval(config);
}

}  // namespace

// Long on purpose: a table (every key of the app's sections, its type, default and
// documentation), read top to bottom like `baton config defaults` prints it.
void add_app_config_sections() {
  static const bool added = [] {
    baton::add_config_sections(
        {
            {"model",
             "The model to pipeline: built-in (mlp, gpt, identity) or a TorchScript file.",
             {
                 {"name", ParamType::kString, "gpt", "mlp, gpt, identity, or torchscript."},
                 {"path", ParamType::kFile, "", "TorchScript .pt file (name: torchscript)."},
                 {"stages", ParamType::kFileList, "[]",
                  "One TorchScript file per stage (name: torchscript), e.g. as baton-split "
                  "writes them; as many as the pipeline has stages."},
                 {"cuts", ParamType::kStringList, "params",
                  "Where stages start: params (equal parameter counts), balanced (equal measured "
                  "forward + backward time per stage), or a list of unit indices where stages "
                  "1..n-1 begin, e.g. [2, 5]."},
                 {"recompute", ParamType::kStringList, "off",
                  "Activation recomputation: off, on (every stage), or stage indices [0, 2]. A "
                  "recomputing stage keeps only its inputs between a microbatch's forward and "
                  "its backward, and runs the forward again right before the backward (the same "
                  "result, bit for bit, for one more forward)."},
                 {"loss", ParamType::kString, "cross_entropy",
                  "cross_entropy (class targets), mse (float targets shaped like the output), "
                  "from_model (the loss the model's own forward returns, given the targets: "
                  "stage files baton-split wrote with targets), or a TorchScript .pt file whose "
                  "forward(output, target) returns the loss."},
                 baton::KeySpec{
                     "label_smoothing", ParamType::kFloat, "0",
                     "cross_entropy: the targets' weight spread over every class, in [0, 1] (as "
                     "PyTorch's cross_entropy(label_smoothing=...))."}
                     .at_least(0)
                     .at_most(1),
                 baton::KeySpec{
                     "targets", ParamType::kString, "auto",
                     "What a scripted model.loss receives as targets: classes (integer class ids, "
                     "the output without its last dimension, drawn below its width), values "
                     "(floats shaped like the output), or auto: what the data holds (integer files "
                     "and a text's next tokens are class ids, float files values; synthetic data "
                     "values)."}
                     .one_of(baton::choice_words(baton_models::target_kind_choices())),
                 {"ignore_index", ParamType::kInt, "-100",
                  "cross_entropy: a target equal to it is not counted (padding; a scripted "
                  "loss's class ids may hold it too). The loss is "
                  "the mean over the counted targets of the whole batch, as PyTorch's "
                  "cross_entropy(ignore_index=...) on it, however they fall into microbatches."},
             },
             true},
            {"data",
             "Where batches come from.",
             {
                 baton::KeySpec{
                     "source", ParamType::kString, "text",
                     "synthetic, files (inputs/targets .npy or .pt) or text (a token file)."}
                     .one_of(baton::choice_words(baton_models::data_source_choices())),
                 baton::KeySpec{"batch_size", ParamType::kInt, "16",
                                "Samples per step, before microbatching."}
                     .at_least(1)
                     .at_most(1 << 24),
                 {"inputs", ParamType::kFileList, "[]",
                  "Input tensor files (source: files), one per argument of the model's forward, "
                  "in order: x.npy, or [ids.npy, mask.npy]."},
                 {"targets", ParamType::kFile, "", "Target tensor file (source: files)."},
                 {"tokens", ParamType::kFile, "",
                  "Token file (source: text): raw text read as bytes, .npy, or raw uint16/int32; "
                  "empty = the text shipped with baton."},
                 baton::KeySpec{"token_format", ParamType::kString, "auto",
                                "How to read data.tokens: auto (.npy -> npy, else bytes), bytes, "
                                "uint16, int32 "
                                "(raw little-endian) or npy."}
                     .one_of(baton::choice_words(baton_models::token_format_choices())),
                 baton::KeySpec{
                     "prefetch", ParamType::kString, "auto",
                     "Make microbatches ahead on a background thread: true, false (each when the "
                     "step needs it, on the rank's own thread) or auto (true when this machine has "
                     "a CPU beyond the local ranks' compute threads)."}
                     .one_of(baton::choice_words(baton_models::prefetch_choices())),
             },
             false},
            {"optimizer",
             "The optimizer each rank runs on its stages after the plan.",
             {
                 baton::KeySpec{
                     "name", ParamType::kString, "adam",
                     "sgd, adam or adamw (Adam with decoupled weight decay, torch.optim.AdamW)."}
                     .one_of({"sgd", "adam", "adamw"}),
                 baton::KeySpec{"lr", ParamType::kFloat, "0.001",
                                "Learning rate; lr_schedule shapes it over the steps."}
                     .above(0),
                 baton::KeySpec{"momentum", ParamType::kFloat, "0", "Momentum (sgd)."}
                     .at_least(0)
                     .at_most(1),
                 {"nesterov", ParamType::kBool, "false", "Nesterov momentum (sgd, momentum > 0)."},
                 {"betas", ParamType::kStringList, "[0.9, 0.999]",
                  "Adam's averaging coefficients (adam, adamw), e.g. [0.9, 0.95]."},
                 baton::KeySpec{"eps", ParamType::kFloat, "1e-08",
                                "Added to Adam's denominator (adam, adamw)."}
                     .above(0)
                     .at_most(1),
                 baton::KeySpec{
                     "weight_decay", ParamType::kFloat, "0",
                     "Weight decay: L2 added to the gradient (sgd, adam), decoupled (adamw)."}
                     .at_least(0),
                 baton::KeySpec{
                     "decay", ParamType::kString, "all",
                     "Which parameters weight_decay applies to: all, or matrices (parameters of 2 "
                     "or more dimensions; biases, norms and other 1-dim ones get none, nanoGPT's "
                     "groups)."}
                     .one_of({"all", "matrices"}),
                 baton::KeySpec{
                     "clip_grad_norm", ParamType::kFloat, "0",
                     "Clip the gradient to this L2 norm, taken over the whole model (every stage "
                     "on every rank, a tied tensor once), as torch.nn.utils.clip_grad_norm_; 0: "
                     "off."}
                     .at_least(0),
             },
             false},
            {"lr_schedule",
             "How the learning rate changes over the steps: a linear warm-up from 0, then a "
             "decay to min_lr (docs/configuration.md).",
             {
                 baton::KeySpec{
                     "name", ParamType::kString, "constant",
                     "constant (optimizer.lr after the warm-up), linear or cosine (decay from "
                     "optimizer.lr to min_lr)."}
                     .one_of({"constant", "linear", "cosine"}),
                 {"warmup_steps", ParamType::kInt, "0",
                  "Steps whose rate rises linearly to optimizer.lr: lr * step / warmup_steps."},
                 baton::KeySpec{"min_lr", ParamType::kFloat, "0", "Where the decay ends."}.at_least(
                     0),
                 {"decay_steps", ParamType::kInt, "0",
                  "The step the decay reaches min_lr and stays (0: run.steps)."},
             },
             false},
            {"eval",
             "A held-out loss during training: a forward-only pass through the pipeline "
             "(docs/configuration.md).",
             {
                 baton::KeySpec{"every", ParamType::kInt, "0",
                                "Evaluate after every N steps and after the last (0: never)."}
                     .at_least(0)
                     .off("never"),
                 {"inputs", ParamType::kFileList, "[]",
                  "Held-out input files, one per forward argument (data.source: files); "
                  "every row is evaluated once."},
                 {"targets", ParamType::kFile, "", "Held-out target file (data.source: files)."},
                 {"tokens", ParamType::kFile, "",
                  "Held-out token file (data.source: text); empty: data.tokens."},
                 baton::KeySpec{
                     "batches", ParamType::kInt, "4",
                     "Batches of data.batch_size rows evaluated (data.source: text or synthetic), "
                     "drawn as training draws them with seed run.seed + 1."}
                     .at_least(1),
             },
             false},
            {"precision",
             "The dtypes a step computes, sends, reduces and keeps its parameters in, and "
             "fp16 loss scaling (docs/configuration.md, \"precision\").",
             {
                 baton::KeySpec{
                     "compute", ParamType::kString, "fp32",
                     "fp32, or bf16 / fp16: every stage's forward, its recomputation and the "
                     "loss under autocast at that dtype (PyTorch's torch.autocast op lists); the "
                     "parameters, their gradients and the optimizer stay float32. fp16 needs "
                     "world.device: cuda."}
                     .one_of(baton::choice_words(compute_precision_choices())),
                 baton::KeySpec{
                     "wire", ParamType::kString, "auto",
                     "What floating activations and their gradients cross ranks as: auto (as "
                     "the stage produced them: a pipelined run equals the unpipelined one), or "
                     "fp32 / bf16 / fp16: cast for the transfer and back on arrival (bf16, fp16: "
                     "half the bytes of float32, rounded once at each crossing)."}
                     .one_of(baton::choice_words(wire_precision_choices())),
                 baton::KeySpec{
                     "reduce", ParamType::kString, "fp32",
                     "The dtype of the replicas' gradient all-reduce (world.data_parallel > 1): "
                     "fp32, or bf16 (half the bytes; each bucket rounded to bf16 before the sum "
                     "and summed in bf16). Tied weights' sums, the gradient norm and the token "
                     "counts stay float32 / int64."}
                     .one_of(baton::choice_words(reduce_precision_choices())),
                 baton::KeySpec{
                     "params", ParamType::kString, "fp32",
                     "fp32, or bf16 (Megatron's --bf16): every stage holds its parameters (and "
                     "floating buffers) in bf16 and computes in bf16 without autocast, its "
                     "first stage's floating inputs cast to bf16 and its last stage's outputs to "
                     "float32 for the loss; the optimizer keeps float32 master weights and each "
                     "microbatch's gradient is added into a float32 one. Checkpoints and "
                     "baton export hold the float32 masters. Needs compute: bf16."}
                     .one_of(baton::choice_words(param_precision_choices())),
                 baton::KeySpec{
                     "loss_scale", ParamType::kString, "auto",
                     "fp16 loss scaling (torch.cuda.amp.GradScaler): dynamic (the loss "
                     "multiplied by a scale before the backward, the gradients divided back "
                     "before clipping; a step with an inf or a nan in any gradient of any rank is "
                     "skipped by every rank and the scale halved), off, or auto (dynamic with "
                     "compute: fp16, off otherwise: bf16 has float32's range)."}
                     .one_of(baton::choice_words(loss_scaling_choices())),
                 baton::KeySpec{"loss_scale_init", ParamType::kFloat, "65536",
                                "The first step's loss scale (GradScaler's init_scale, 2^16)."}
                     .above(0),
                 baton::KeySpec{"loss_scale_growth_interval", ParamType::kInt, "2000",
                                "Finite steps in a row after which the scale doubles "
                                "(GradScaler's growth_interval)."}
                     .at_least(1),
                 baton::KeySpec{"loss_scale_min", ParamType::kFloat, "1",
                                "The lowest scale (DeepSpeed's min_loss_scale): a step whose "
                                "gradients overflow at it ends the run, as a divergence."}
                     .above(0),
             },
             false},
            {"checkpoint",
             "Periodic checkpoints, saved under the original parameter names.",
             {
                 baton::KeySpec{"every", ParamType::kInt, "0",
                                "Save every N steps (0: only at the end)."}
                     .at_least(0)
                     .off("only at the end"),
                 {"dir", ParamType::kString, "",
                  "Checkpoint folder; empty = <run dir>/checkpoints."},
                 {"enabled", ParamType::kBool, "true", "Write checkpoints at all."},
             },
             false},
            {"trace",
             "Chrome-trace timeline of what ran on every rank.",
             {
                 {"enabled", ParamType::kBool, "true", "Record and write the trace."},
                 {"path", ParamType::kString, "", "Trace file; empty = <run dir>/trace.json."},
                 baton::KeySpec{"steps", ParamType::kInt, "3",
                                "Training steps recorded (the first ones after setup; a trace of "
                                "every step of a "
                                "long run would be huge)."}
                     .at_least(0)
                     .off("none recorded; trace.enabled: false turns the trace off"),
             },
             false},
        },
        &check_app_sections);
    return true;
  }();
  (void)added;
}

}  // namespace baton_app
