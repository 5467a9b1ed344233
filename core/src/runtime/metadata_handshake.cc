#include "metadata_handshake.h"

#include <ATen/ATen.h>

#include "baton/error.h"
#include "baton/runtime/autocast_scope.h"
#include "baton/runtime/buffers_kept.h"
#include "comm_tags.h"

namespace baton {
namespace {

std::string stage_on(const HandshakeContext& context, int stage) {
  const auto index = static_cast<std::size_t>(stage);
  return "stage " + std::to_string(stage) + " (rank " +
         std::to_string(context.plan.stage_to_rank.at(index)) +
         (index < context.stage_names.size() ? ", " + context.stage_names[index] : "") + ")";
}

std::string list_metas(const std::vector<TensorMeta>& metas) {
  std::string text;
  for (std::size_t i = 0; i < metas.size(); ++i) text += (i ? ", " : "") + metas[i].str();
  return "(" + text + ")";
}

Transport& transport_of(HandshakeContext& context) {
  if (context.transport == nullptr) {
    throw Error("stages on different ranks need a transport, but none is set");
  }
  return *context.transport;
}

// Messages are int64 vectors sent as (length, payload) so the receiver needs no prior size.
void send_values(HandshakeContext& context, int peer, int stage, int part,
                 const std::vector<std::int64_t>& values) {
  Transport& transport = transport_of(context);
  at::Tensor length =
      at::tensor({static_cast<std::int64_t>(values.size())}, at::kLong).to(context.device);
  peer += context.rank_offset;
  transport.isend(length, peer, handshake_tag(stage, part))->wait(context.timeout);
  if (values.empty()) return;
  at::Tensor payload = at::tensor(values, at::kLong).to(context.device);
  transport.isend(payload, peer, handshake_tag(stage, part + 1))->wait(context.timeout);
}

std::vector<std::int64_t> recv_values(HandshakeContext& context, int peer, int stage, int part) {
  Transport& transport = transport_of(context);
  at::Tensor length = at::empty({1}, at::TensorOptions(at::kLong).device(context.device));
  peer += context.rank_offset;
  transport.irecv(length, peer, handshake_tag(stage, part))->wait(context.timeout);
  const std::int64_t count = length.item<std::int64_t>();
  if (count < 0 || count > (1 << 20)) {
    throw Error("malformed setup message from rank " + std::to_string(peer) + ": length " +
                std::to_string(count));
  }
  if (count == 0) return {};
  at::Tensor payload = at::empty({count}, at::TensorOptions(at::kLong).device(context.device));
  transport.irecv(payload, peer, handshake_tag(stage, part + 1))->wait(context.timeout);
  payload = payload.cpu();
  const std::int64_t* data = payload.data_ptr<std::int64_t>();
  return std::vector<std::int64_t>(data, data + count);
}

std::vector<std::int64_t> encode_text(const std::string& text) {
  return std::vector<std::int64_t>(text.begin(), text.end());
}

std::string decode_text(const std::vector<std::int64_t>& values) {
  std::string text;
  for (std::int64_t v : values) text.push_back(static_cast<char>(v));
  return text;
}

// Metadata message: [0] = 1 for metadata, 0 for "the sender failed" followed by its text.
std::vector<std::int64_t> metadata_message(const std::vector<TensorMeta>& metas) {
  std::vector<std::int64_t> message{1};
  const auto encoded = encode_metas(metas);
  message.insert(message.end(), encoded.begin(), encoded.end());
  return message;
}

std::vector<std::int64_t> failure_message(const std::string& text) {
  std::vector<std::int64_t> message{0};
  const auto encoded = encode_text(text);
  message.insert(message.end(), encoded.begin(), encoded.end());
  return message;
}

std::vector<TensorMeta> infer_outputs(Stage& stage, const std::vector<TensorMeta>& inputs,
                                      const HandshakeContext& context) {
  at::NoGradGuard no_grad;                        // shapes only: no autograd graph
  const BuffersKept kept(stage.named_buffers());  // a BatchNorm's statistics stay as they were
  std::vector<at::Tensor> probes;
  for (const auto& meta : inputs) {
    probes.push_back(
        at::zeros(meta.shape, at::TensorOptions().dtype(meta.dtype).device(meta.device)));
  }
  std::vector<TensorMeta> outputs;
  const AutocastScope autocast(context.device, context.autocast);
  for (const auto& output : stage.forward(probes)) {
    if (!output.defined()) throw Error("returned an undefined tensor");
    TensorMeta meta = TensorMeta::of(output);
    meta.strides.clear();  // what crosses ranks is made contiguous
    outputs.push_back(meta);
  }
  return outputs;
}

// What went wrong, without an interpreter's traceback: TorchScript prefixes the error with
// the script frames, which belong in a debugger, not in a setup failure.
std::string concise(const std::exception& error) {
  const std::string text = error.what();
  if (text.find("Traceback of TorchScript") == std::string::npos) return text;
  std::size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos) return text;
  const std::size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start + 1));
}

}  // namespace

StageMetas exchange_stage_metadata(HandshakeContext& context, Stage& stage,
                                   const std::vector<TensorMeta>& first_inputs) {
  const int s = stage.index();
  const Plan& plan = context.plan;
  const bool previous_remote = s > 0 && plan.stage_to_rank[s - 1] != context.rank;
  const bool next_remote = s + 1 < plan.num_stages && plan.stage_to_rank[s + 1] != context.rank;
  const int previous_rank = s > 0 ? plan.stage_to_rank[s - 1] : -1;
  const int next_rank = s + 1 < plan.num_stages ? plan.stage_to_rank[s + 1] : -1;

  StageMetas metas;
  std::string failure;
  if (s == 0) {
    metas.inputs = first_inputs;
  } else if (!previous_remote) {
    metas.inputs = context.local_outputs.at(s - 1);
  } else {
    const auto message = recv_values(context, previous_rank, s - 1, 0);
    if (message.empty() || message[0] == 0) {
      failure = decode_text(
          std::vector<std::int64_t>(message.begin() + (message.empty() ? 0 : 1), message.end()));
    } else {
      metas.inputs = decode_metas(std::vector<std::int64_t>(message.begin() + 1, message.end()),
                                  context.device);
    }
  }

  bool inference_failed = false;
  if (failure.empty()) {
    try {
      metas.outputs = infer_outputs(stage, metas.inputs, context);
    } catch (const std::exception& error) {
      inference_failed = true;
      failure = s == 0 ? stage_on(context, 0) + " cannot take the input batch's microbatch " +
                             list_metas(metas.inputs) + ": " + concise(error)
                       : stage_on(context, s) + " cannot take the outputs of " +
                             stage_on(context, s - 1) + " " + list_metas(metas.inputs) + ": " +
                             concise(error);
    }
  }
  if (previous_remote) {
    // Tell the previous stage whether its outputs fit (it fails with the same words).
    send_values(context, previous_rank, s - 1, 2,
                inference_failed ? encode_text(failure) : std::vector<std::int64_t>());
  }
  if (next_remote) {
    send_values(context, next_rank, s, 0,
                failure.empty() ? metadata_message(metas.outputs) : failure_message(failure));
    if (failure.empty()) {
      const auto reply = recv_values(context, next_rank, s, 2);
      if (!reply.empty()) failure = decode_text(reply);
    }
  }
  if (!failure.empty()) throw Error("setup failed: " + failure);
  context.local_outputs[s] = metas.outputs;
  return metas;
}

}  // namespace baton
