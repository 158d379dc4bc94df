#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include "core/error.h"
#include "core/fs.h"
#include "core/log.h"
#include "data/sampler.h"
#include "kernels/grad_norm.h"
#include "kernels/optimizer.h"
#include "kernels/peak.h"
#include "model/checkpoint.h"
#include "model/model_ops.h"
#include "train/checkpoint.h"
#include "train/progress.h"
#include "train/stop_signal.h"

namespace ct::train {
namespace stdfs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Labelled positions of a batch with per-token labels (label != -100): what a token-level loss averages over.
int64_t labelled_tokens(const model::Batch& b) {
  if (!b.labels) return 0;
  int64_t n = 0;
  if (b.seq_lens)
    for (int64_t r = 0; r < b.B; ++r) n += b.seq_lens[r];
  else
    n = b.B * b.T;
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += b.labels[i] != -100;
  return count;
}

double round_to(double v, int digits) {
  const double p = std::pow(10.0, digits);
  return std::round(v * p) / p;
}

std::vector<kernels::SlabRange> decay_ranges(const std::vector<model::ParamInfo>& params) {
  std::vector<kernels::SlabRange> out;
  for (const auto& p : params) {
    if (!out.empty() && out.back().decay == p.decay && out.back().offset + out.back().numel == p.offset)
      out.back().numel += p.numel();
    else
      out.push_back({p.offset, p.numel(), p.decay});
  }
  return out;
}

// The word-embedding rows of a resumed run that ever had a gradient, as far as AdamW can tell: those with a
// moment entry that is not +0.0 (bits, so -0.0 counts). A row touched only by zero gradients is left out,
// and the update AdamW gives it, decay alone, is what it would compute for it anyway.
void mark_rows_with_moments(const model::Model& m, const std::vector<float>& exp_avg,
                            const std::vector<float>& exp_avg_sq, RowSet& rows) {
  const model::WordEmbeddingRows w = m.word_embedding();
  const int64_t V = w.rows, E = w.width, off = w.offset;
  auto nonzero = [](const float* p, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      uint32_t bits;
      std::memcpy(&bits, p + i, sizeof bits);
      if (bits != 0) return true;
    }
    return false;
  };
  for (int64_t r = 0; r < V; ++r) {
    const int64_t b = off + r * E;
    if (nonzero(exp_avg.data() + b, E) || nonzero(exp_avg_sq.data() + b, E)) rows.add(r);
  }
}

}  // namespace

std::string describe_world_change(const std::string& checkpoint, int64_t global_step, const TrainPlan& from,
                                  const TrainPlan& to, int64_t num_samples, bool drop_last) {
  if (from.world == to.world || from.world <= 0 || to.world <= 0) return "";
  struct Where {
    int64_t global_batch, steps_per_epoch, epoch, position, steps_left;
  };
  auto where = [&](const TrainPlan& p) {
    data::SamplerOptions so;
    so.num_samples = num_samples;
    so.batch_size = std::max<int64_t>(p.per_device_batch, 1);
    so.world = p.world;
    so.drop_last = drop_last;
    data::DistributedSampler sampler(so);
    const int64_t accum = std::max<int64_t>(p.accum, 1);
    Where w{};
    w.global_batch = so.batch_size * p.world * accum;
    w.steps_per_epoch = (sampler.num_batches() + accum - 1) / accum;
    if (w.steps_per_epoch == 0) return w;
    w.epoch = global_step / w.steps_per_epoch;
    const int64_t k = global_step % w.steps_per_epoch;
    w.position = std::min(k * w.global_batch, sampler.num_rank_samples() * p.world);
    w.steps_left = w.steps_per_epoch - k;
    return w;
  };
  const Where a = where(from), b = where(to);
  std::string line =
      str("resuming ", stdfs::path(checkpoint).filename().string(), " written by ", from.world,
          " ranks with ", to.world, " ranks: global batch ", a.global_batch, " -> ", b.global_batch,
          " per step (per_device_train_batch_size ", to.per_device_batch, " x ", to.world, " x accumulation ",
          to.accum, "); the epoch's sample order is re-dealt for ", to.world, " ranks");
  if (a.steps_per_epoch == 0 || b.steps_per_epoch == 0) return line;
  const std::string old_plan = str("the ", from.world, "-rank run");
  if (a.epoch == b.epoch && a.position == b.position) {
    line += str(" and training continues at sample ", b.position, " of epoch ", b.epoch, ", where ", old_plan,
                " stopped");
  } else if (a.epoch == b.epoch) {
    line += str(": step ", global_step, " starts at sample ", b.position, " of epoch ", b.epoch, " in the ",
                to.world, "-rank plan, but ", old_plan, " had reached sample ", a.position, ", so samples ",
                std::min(a.position, b.position), "-", std::max(a.position, b.position) - 1,
                " of the epoch's order are ", b.position < a.position ? "trained again" : "skipped");
  } else {
    line += str(": step ", global_step, " starts at sample ", b.position, " of epoch ", b.epoch, " in the ",
                to.world, "-rank plan, but ", old_plan, " had reached sample ", a.position, " of epoch ",
                a.epoch);
  }
  line += str("; the epoch has ", b.steps_left, " steps left (", a.steps_left, " for ", from.world,
              " ranks) and the run ends at step ", to.max_steps);
  if (from.max_steps > 0 && from.max_steps != to.max_steps) line += str(" (was ", from.max_steps, ")");
  return line;
}

Trainer::Trainer(const TrainingArguments& args, model::Model& model, SaveTokenizerFn save_tokenizer,
                 DistContext dist)
    : args_(args), model_(model), save_tokenizer_(std::move(save_tokenizer)), dist_(std::move(dist)) {
  const char* dense = std::getenv("CORETRAIN_DENSE_WORD_GRAD");
  sparse_word_grad_ = !(dense && std::string(dense) == "1");
  if (dist_.distributed()) {
    DdpOptions o;
    o.bucket_cap_mb = args_.ddp_bucket_cap_mb;
    // The word embeddings' gradient lives in the rows of the step's tokens: reduce only those. True while the
    // embedding lookup is its only writer (the model says); a head tied to these weights (an MLM decoder)
    // makes it dense, and then the whole table is reduced.
    if (model_.word_embedding_grad_is_lookup_only()) {
      const model::WordEmbeddingRows w = model_.word_embedding();
      o.sparse_rows = {w.offset, w.rows, w.width};
    }
    reducer_ = std::make_unique<DdpReducer>(*dist_.comm, model_.grads_data(), model_.params(), o);
  }
}

Trainer::~Trainer() = default;

void Trainer::log(nlohmann::json entry) {
  if (epoch_known_) entry["epoch"] = state_.epoch;
  entry["step"] = state_.global_step;
  state_.log_history.push_back(entry);
  if (on_log) on_log(entry);
  if (writes_files()) pending_lines_.push_back(entry.dump());
}

void Trainer::optimizer_step(double lr, float grad_scale) {
  auto ranges = decay_ranges(model_.params());
  if (sharded_) ranges = clip_ranges(ranges, shard_.lo, shard_.hi);
  const int64_t step = ++optimizer_steps_;
  const auto& t = args_;
  // bf16: the update writes the matmuls' bf16 weight copies in the same pass (the ranges, or the node's
  // ranks' slices together, span every parameter, so every copy is current afterwards).
  bf16* copies = model_.low_precision_weights();
  if (t.optim == "sgd") {
    kernels::SgdHyper h{lr, 0.0, t.weight_decay};
    CT_CHECK(grad_scale == 1.0f, "optimizer: sgd takes its gradients scaled in place");
    kernels::sgd_step(model_.params_data(), model_.grads_data(), nullptr, ranges, h, step, copies);
  } else {
    kernels::AdamWHyper h{lr, t.adam_beta1, t.adam_beta2, t.adam_epsilon, t.weight_decay};
    touched_rows_.add(model_.word_grad_rows());
    kernels::adamw_step(model_.params_data(), model_.grads_data(), exp_avg_data(), exp_avg_sq_data(), ranges,
                        h, step, copies, model_.word_embedding_rows(touched_rows_), grad_scale);
  }
  model_.mark_weights_changed(/*low_precision_written=*/copies != nullptr);
  // Every slice written before any rank's next forward reads the weights.
  if (sharded_) dist_.comm->barrier();
  // Dense (CORETRAIN_DENSE_WORD_GRAD=1): the next backward zeroes the whole table, as before row tracking.
  if (!sparse_word_grad_) model_.word_grad_rows().add_all();
}

void Trainer::allocate_node_state() {
  if (sharded_ || !model_.can_use_external_weights() || !node_shard_wanted(dist_)) return;
  const bool bf16_copies = model_.low_precision_weights() != nullptr;
  if (!allocate_node_shard(dist_, model_.num_params(), bf16_copies, /*moments=*/args_.optim != "sgd", shard_))
    return;
  sharded_ = true;
  if (writes_files())
    log::info("optimizer: the ", shard_.ranks, " ranks of each node share one copy of the weights",
              shard_.exp_avg ? " and AdamW's moments" : "", " in shared memory, each updating 1/",
              shard_.ranks,
              " of them (ZeRO-1 inside the node; CORETRAIN_REPLICATED_OPTIMIZER=1 turns it off)");
}

void Trainer::share_node_state() {
  if (!sharded_) return;
  // Every rank holds the same weights (and, resuming, moments) here, loaded or broadcast, so each writes its
  // own slice: the slices are whole pages, first touched by the rank that updates them (on a node of several
  // sockets, in its socket's memory). A fresh run's moments start at zero, never held privately.
  const int64_t lo = shard_.lo, len = shard_.hi - shard_.lo;
  const float* p = std::as_const(model_).params_data();
  if (p != shard_.params) std::copy_n(p + lo, len, shard_.params + lo);
  if (shard_.weights_bf16) model::to_bf16(shard_.weights_bf16 + lo, shard_.params + lo, len);
  if (shard_.exp_avg) {
    if (!exp_avg_.empty()) {
      std::copy_n(exp_avg_.data() + lo, len, shard_.exp_avg + lo);
      std::copy_n(exp_avg_sq_.data() + lo, len, shard_.exp_avg_sq + lo);
    } else {
      std::fill_n(shard_.exp_avg + lo, len, 0.0f);
      std::fill_n(shard_.exp_avg_sq + lo, len, 0.0f);
    }
  }
  dist_.comm->barrier();
  model_.use_external_weights(shard_.params, shard_.weights_bf16);
  std::vector<float>().swap(exp_avg_);
  std::vector<float>().swap(exp_avg_sq_);
}

data::SamplerOptions Trainer::sampler_options(const TaskSplit& train) const {
  const auto& t = args_;
  data::SamplerOptions so;
  so.num_samples = train.num_features();
  so.batch_size = t.per_device_train_batch_size;
  so.rank = dist_.rank;
  so.world = dist_.world;
  so.seed = static_cast<uint64_t>(t.resolved_data_seed());
  so.drop_last = t.dataloader_drop_last;
  if (t.group_by_length) {  // HF's LengthGroupedSampler(train_batch_size * gradient_accumulation_steps)
    for (int64_t i = 0; i < so.num_samples; ++i) so.lengths.push_back(train.feature_length(i));
    so.group_batch_size = t.per_device_train_batch_size * t.gradient_accumulation_steps;
  }
  return so;
}

std::vector<data::SampledBatch> Trainer::train_batches(const TaskSplit& train, int64_t epoch) const {
  return data::DistributedSampler(sampler_options(train)).batches(epoch);
}

nlohmann::json Trainer::train(const TaskSplit& train, const TaskSplit* eval, const std::string& resume_from) {
  const auto& t = args_;
  epoch_known_ = true;
  const int64_t n = model_.num_params();
  const data::SamplerOptions so = sampler_options(train);
  data::DistributedSampler sampler(so);
  const int64_t batches_per_epoch = sampler.num_batches();
  if (batches_per_epoch == 0)
    fail("no training batches: ", so.num_samples, " features with batch size ", so.batch_size);
  const int64_t accum = t.gradient_accumulation_steps;
  const int64_t steps_per_epoch = (batches_per_epoch + accum - 1) / accum;
  int64_t max_steps, num_epochs;
  if (t.max_steps > 0) {
    max_steps = t.max_steps;
    num_epochs = (max_steps + steps_per_epoch - 1) / steps_per_epoch;
  } else {
    max_steps = static_cast<int64_t>(std::ceil(t.num_train_epochs * static_cast<double>(steps_per_epoch)));
    num_epochs = static_cast<int64_t>(std::ceil(t.num_train_epochs));
  }
  if (max_steps <= 0) fail("--num_train_epochs: ", t.num_train_epochs, " gives no training steps");
  LrSchedule schedule(parse_schedule_type(t.lr_scheduler_type), t.learning_rate,
                      warmup_steps_for(t.warmup_steps, t.warmup_ratio, max_steps), max_steps);

  state_ = TrainerState{};
  state_.max_steps = max_steps;
  state_.num_train_epochs = num_epochs;
  state_.logging_steps = t.resolved_logging_steps(max_steps);
  state_.eval_steps = t.resolved_eval_steps(max_steps);
  state_.save_steps = t.resolved_save_steps(max_steps);
  state_.train_batch_size = t.per_device_train_batch_size;
  allocate_node_state();
  // Private moments: this rank's own, or (sharded) a resumed checkpoint's on their way to the shared ones.
  const bool private_moments = t.optim != "sgd" && (!sharded_ || !resume_from.empty());
  exp_avg_.assign(private_moments ? static_cast<size_t>(n) : 0, 0.f);
  exp_avg_sq_.assign(private_moments ? static_cast<size_t>(n) : 0, 0.f);
  optimizer_steps_ = 0;
  touched_rows_ = RowSet(model_.word_embedding().rows, /*all=*/!sparse_word_grad_);

  int64_t skip_batches = 0, first_epoch = 0;
  if (!resume_from.empty()) {
    TrainPlan from = load_checkpoint(resume_from, schedule);
    if (writes_files() && from.world > 0 && from.world != dist_.world)
      log::info(describe_world_change(resume_from, state_.global_step, from,
                                      {dist_.world, t.per_device_train_batch_size, accum, max_steps},
                                      so.num_samples, so.drop_last));
    first_epoch = state_.global_step / steps_per_epoch;
    if (!t.ignore_data_skip) skip_batches = (state_.global_step % steps_per_epoch) * accum;
    log::info("Continuing training from checkpoint ", resume_from, ": global step ", state_.global_step,
              ", epoch ", first_epoch, ", skipping ", skip_batches, " batches of that epoch");
  }
  if (writes_files()) {
    log::info("***** Running training *****");
    log::info("  Num examples = ", train.num_examples(), ", num features = ", train.num_features());
    log::info("  Num Epochs = ", num_epochs,
              ", instantaneous batch size per device = ", t.per_device_train_batch_size);
    log::info("  Total train batch size (w. parallel, distributed & accumulation) = ",
              t.per_device_train_batch_size * dist_.world * accum);
    log::info("  Gradient Accumulation steps = ", accum, ", total optimization steps = ", max_steps);
    log::info("  Number of trainable parameters = ", n);
  }

  share_node_state();

  const double flos_tok = model_.flos_per_token();
  // MFU on real tokens: this rank's model FLOPs (3x forward, pads not counted) over the matmul peak measured
  // here, now, at the model's FFN shape in the run's precision (what `coretrain bench step` divides by).
  const DType peak_dt =
      kernels::peak_dtype(model_.precision() == model::Precision::bf16 ? DType::bf16 : DType::f32);
  const double peak_gflops = kernels::measure_matmul_gflops(
      peak_dt, std::min<int64_t>(1024, t.per_device_train_batch_size * train.max_seq_length()),
      model_.intermediate_size(), model_.hidden_size(), 3);
  // The gradient slab exists from the first backward on; made here, so that train_runtime (as HF's, whose
  // model is whole before the clock starts) does not count mapping and zeroing it.
  model_.grads_data();
  double model_flops = 0;
  int64_t real_tokens = 0, padded_tokens = 0;
  const auto t0 = Clock::now();
  const int64_t start_step = state_.global_step;
  double tr_loss = 0, total_loss = 0;
  int64_t last_logged = state_.global_step;
  Progress progress("train", max_steps, state_.global_step, writes_files(), t.disable_tqdm);
  auto flush_lines = [&] {
    for (const auto& line : pending_lines_) progress.message(line);
    pending_lines_.clear();
  };
  const uint64_t seed = static_cast<uint64_t>(t.seed);
  const int64_t global_batch = t.per_device_train_batch_size * dist_.world * accum;
  double step_comm_s = 0;                              // gradient communication backward did not hide
  double eval_save_s = 0;                              // evaluation and checkpoints inside the loop
  double optimizer_s = 0;                              // norm, clipping, update (and the shard's barrier)
  nlohmann::json log_times = nlohmann::json::array();  // [step, seconds since t0] at every logging step
  int64_t saved_step = -1;  // the step of the last resumable checkpoint this run wrote

  // From here to the loop's end a stop signal only sets a flag; each step's loss all-reduce carries it, so
  // every rank stops after the same step.
  GracefulStopScope graceful;
  bool done = state_.global_step >= max_steps;
  const bool token_average = train.token_labels();
  std::vector<CollatedBatch> group_batches;
  double group_tokens = 0;
  for (int64_t epoch = first_epoch; epoch < num_epochs && !done; ++epoch) {
    const auto batches = sampler.batches(epoch, epoch == first_epoch ? skip_batches : 0);
    int64_t micro_in_epoch = epoch == first_epoch ? skip_batches : 0;
    int64_t group = 0;  // micro-batches in the current accumulation group
    double group_loss = 0;
    for (size_t bi = 0; bi < batches.size() && !done; ++bi) {
      const auto& sb = batches[bi];
      if (group == 0 && token_average) {
        // The accumulation group's batches up front: their labelled tokens, summed over the group and the
        // ranks, weigh each micro-batch's loss (HF's num_items_in_batch with average_tokens_across_devices),
        // so the step's gradient is the mean over every labelled token of the global batch, as one process
        // with the whole batch computes it, whatever the world size and however many tokens each rank holds.
        group_batches.clear();
        const size_t end = std::min(batches.size(), bi + static_cast<size_t>(accum));
        double local = 0;
        for (size_t g = bi; g < end; ++g) {
          group_batches.push_back(
              train.collate(batches[g].indices, /*labels=*/true,
                            BatchKey{static_cast<uint64_t>(epoch), batches[g].positions}));
          local += static_cast<double>(labelled_tokens(group_batches.back().batch));
        }
        group_tokens = std::round(mean_over_ranks(dist_, local) * dist_.world);
      }
      const CollatedBatch cb = token_average
                                   ? std::move(group_batches[static_cast<size_t>(group)])
                                   : train.collate(sb.indices, /*labels=*/true,
                                                   BatchKey{static_cast<uint64_t>(epoch), sb.positions});
      const auto& lens = cb.real_lengths;
      for (int64_t len : lens) real_tokens += len;
      padded_tokens += cb.positions;  // a packed batch's T is only its rows' bound
      model_flops += 3.0 * model_.forward_matmul_flops(lens);
      model::StepOptions so_step;
      so_step.train = true;
      so_step.seed = seed;
      // Dropout keyed by (epoch, position in the epoch's list): the same masks for a feature whichever rank
      // and row train it, so any world size follows one trajectory, and resume replays it.
      // A multiple-choice feature is num_choices rows: each gets its own key, so its choices drop different
      // units, as the rows of HF's flattened [B x num_choices, T] batch do.
      const uint64_t rows_per_feature =
          cb.batch.num_choices > 0 ? static_cast<uint64_t>(cb.batch.num_choices) : 1;
      for (int64_t pos : sb.positions) {
        const uint64_t key = (static_cast<uint64_t>(epoch) << 40) | static_cast<uint64_t>(pos);
        for (uint64_t r = 0; r < rows_per_feature; ++r)
          so_step.row_keys.push_back(rows_per_feature == 1 ? key : key * rows_per_feature + r);
      }
      const bool sync = group + 1 == accum || micro_in_epoch + 1 == batches_per_epoch;
      if (reducer_) reducer_->add_touched_rows(cb.batch.input_ids, cb.positions);
      const double weight =
          token_average ? (group_tokens > 0
                               ? static_cast<double>(labelled_tokens(cb.batch)) * dist_.world / group_tokens
                               : 0.0)
                        : 1.0 / static_cast<double>(accum);
      // DDP's no_sync: only the backward that ends the accumulation group starts the bucket all-reduces.
      const float loss = model_.forward_backward(cb.batch, so_step,
                                                 reducer_ && sync ? reducer_->hook() : model::GradReadyFn{},
                                                 static_cast<float>(weight), /*accumulate=*/group > 0);
      ++micro_in_epoch;
      ++group;
      // Counted as world x this rank's input_ids (exact with fixed padding; with dynamic padding or packed
      // batches the ranks' token counts differ and this is an estimate, kept so that no collective runs per
      // micro-step). Packed batches count the tokens they have: no pads.
      const int64_t batch_tokens = cb.positions;
      state_.num_input_tokens_seen += batch_tokens * dist_.world;
      state_.total_flos += flos_tok * static_cast<double>(batch_tokens * dist_.world);
      if (weight != 0) group_loss += static_cast<double>(loss) * weight;
      const bool last_of_epoch = micro_in_epoch == batches_per_epoch;
      if (group < accum && !last_of_epoch) continue;

      // One optimizer update, on the gradient averaged over ranks (so clipping sees the same norm
      // everywhere).
      if (reducer_) {
        step_comm_s += reducer_->finish();
        // The reduction wrote the union of the ranks' rows (or, run dense, any row).
        if (reducer_->last_sparse_rows() >= 0)
          model_.word_grad_rows().add(reducer_->last_union_rows());
        else
          model_.word_grad_rows().add_all();
      }
      const auto t_opt = Clock::now();
      const kernels::RowFlags live = model_.word_embedding_rows(model_.word_grad_rows());
      const double gnorm = sharded_
                               ? std::sqrt(sharded_grad_sq_sum(dist_, shard_, model_.grads_data(), n, live))
                               : kernels::grad_norm(model_.grads_data(), n, live);
      float grad_scale = t.max_grad_norm > 0 ? kernels::clip_coefficient(gnorm, t.max_grad_norm) : 1.0f;
      // AdamW applies the clipping coefficient as it reads each gradient (one pass over them fewer); SGD, and
      // a NaN coefficient (which poisons every row, as in torch), scale them in place first.
      if (std::isnan(grad_scale) || (grad_scale != 1.0f && t.optim == "sgd")) {
        kernels::scale_grads(model_.grads_data(), n, grad_scale, live);
        if (std::isnan(grad_scale)) model_.word_grad_rows().add_all();
        grad_scale = 1.0f;
      }
      const double lr = schedule.lr_at(state_.global_step);
      optimizer_step(lr, grad_scale);
      optimizer_s += seconds_since(t_opt);
      ++state_.global_step;
      state_.epoch = static_cast<double>(epoch) +
                     static_cast<double>(micro_in_epoch) / static_cast<double>(batches_per_epoch);
      // The loss mean and the stop agreement in one all-reduce (no extra collective per step).
      const StepAgreement agreed = agree_step(dist_, group_loss, pending_stop_signal());
      group_loss = agreed.mean;
      if (t.logging_nan_inf_filter && !std::isfinite(group_loss))
        group_loss = tr_loss / static_cast<double>(1 + state_.global_step - last_logged);
      tr_loss += group_loss;
      total_loss += group_loss;
      {
        const double elapsed = seconds_since(t0);
        const double steps_done = static_cast<double>(state_.global_step - start_step);
        std::string extra =
            str(round_to(steps_done * static_cast<double>(global_batch) / elapsed, 2), " samples/s, MFU ",
                static_cast<int>(std::lround(100.0 * model_flops / elapsed / 1e9 / peak_gflops)), "%");
        if (reducer_)
          extra += str(", comm ", static_cast<int>(std::lround(100.0 * step_comm_s / elapsed)), "%");
        progress.set_extra(extra);
      }
      progress.update(state_.global_step, group_loss);
      group = 0;
      group_loss = 0;
      done = state_.global_step >= max_steps;

      const bool epoch_end = last_of_epoch;
      const bool log_now =
          (t.logging_strategy == "steps" && (state_.global_step % state_.logging_steps == 0 ||
                                             (t.logging_first_step && state_.global_step == 1))) ||
          (t.logging_strategy == "epoch" && epoch_end);
      if (log_now) {
        const double steps = static_cast<double>(state_.global_step - last_logged);
        nlohmann::json e;
        e["loss"] = round_to(tr_loss / steps, 4);
        e["grad_norm"] = gnorm;
        e["learning_rate"] = schedule.lr_at(state_.global_step);
        log(e);
        log_times.push_back({state_.global_step, round_to(seconds_since(t0), 6)});
        tr_loss = 0;
        last_logged = state_.global_step;
      }
      const bool eval_now =
          eval && ((t.eval_strategy == "steps" && state_.global_step % state_.eval_steps == 0) ||
                   (t.eval_strategy == "epoch" && epoch_end));
      const auto t_eval_save = Clock::now();
      if (eval_now) evaluate(*eval, /*write_predictions=*/false);
      const bool save_now = (t.save_strategy == "steps" && state_.global_step % state_.save_steps == 0) ||
                            (t.save_strategy == "epoch" && epoch_end);
      if (save_now) {
        save_checkpoint(schedule);
        if (!t.save_only_model) saved_step = state_.global_step;  // a stop there can resume from it
      }
      if (eval_now || save_now) eval_save_s += seconds_since(t_eval_save);
      flush_lines();
      if (agreed.stop_signal) {
        // Every rank agreed on this step: a complete checkpoint (rank 0 writes it, all wait for it), then out
        // with 128 + signal, so an agent never takes the stop for a finished job.
        if (saved_step != state_.global_step) save_checkpoint(schedule, /*full=*/true);
        progress.close();
        const std::string ck = str("checkpoint-", state_.global_step);
        if (writes_files())
          log::info("stopping at step ", state_.global_step, " on ", signal_name(agreed.stop_signal),
                    ": wrote ", ck);
        else
          log::warn("stopping at step ", state_.global_step, " on ", signal_name(agreed.stop_signal),
                    " (rank 0 wrote ", ck, ")");
        graceful.handled();
        throw StopRequested(agreed.stop_signal, state_.global_step,
                            (stdfs::path(t.output_dir) / ck).string());
      }
    }
    epochs_done_ = epoch + 1;
  }
  progress.close();
  const double runtime = seconds_since(t0);
  const int64_t steps_run = state_.global_step - start_step;
  const double train_loss = steps_run > 0 ? total_loss / static_cast<double>(steps_run) : 0.0;
  // HF: samples = steps * total batch when max_steps is given, else features * epochs.
  const double num_samples =
      t.max_steps > 0 ? static_cast<double>(max_steps * t.per_device_train_batch_size * dist_.world * accum)
                      : static_cast<double>(train.num_features()) * t.num_train_epochs;
  nlohmann::json metrics;
  metrics["train_runtime"] = round_to(runtime, 4);
  metrics["train_samples_per_second"] = round_to(runtime > 0 ? num_samples / runtime : 0, 3);
  metrics["train_steps_per_second"] = round_to(runtime > 0 ? static_cast<double>(max_steps) / runtime : 0, 3);
  metrics["total_flos"] = state_.total_flos;
  metrics["train_loss"] = train_loss;
  log(metrics);
  if (writes_files() && runtime > 0)
    log::info(
        "Throughput on real tokens (rank 0): ", static_cast<int64_t>(std::llround(real_tokens / runtime)),
        " tokens/s, ", real_tokens, " of ", padded_tokens, " batch positions real (",
        round_to(100.0 * static_cast<double>(real_tokens) / std::max<double>(1, padded_tokens), 1), "%, ",
        train.packed() ? "packed: no pad rows computed" : "padded", "); model ",
        round_to(model_flops / runtime / 1e9, 1), " GFLOP/s, MFU ",
        round_to(100.0 * model_flops / runtime / 1e9 / peak_gflops, 1), "% of the ",
        peak_dt == DType::bf16 ? "bf16" : "f32", " matmul peak measured at start (", round_to(peak_gflops, 1),
        " GFLOP/s)");
  if (reducer_ && writes_files())
    log::info("DDP: ", dist_.world, " ranks, ", round_to(num_samples / runtime / dist_.world, 3),
              " samples/s per rank, gradient communication left exposed after backward ",
              round_to(100.0 * step_comm_s / runtime, 1), "% of the training time (",
              reducer_->buckets().size(), " buckets)");
  flush_lines();
  // Every rank's split of the training time (one gather of short strings, once per run).
  const nlohmann::json mine = {
      {"rank", dist_.rank},
      {"node", dist_.node},
      {"runtime_s", round_to(runtime, 6)},
      {"comm_exposed_s", round_to(step_comm_s, 6)},
      {"eval_save_s", round_to(eval_save_s, 6)},
      {"optimizer_s", round_to(optimizer_s, 6)},
      {"updated_params", sharded_ ? shard_.hi - shard_.lo : n},
      {"compute_s", round_to(std::max(0.0, runtime - step_comm_s - eval_save_s), 6)}};
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : allgather_strings(dist_, mine.dump())) ranks.push_back(nlohmann::json::parse(r));
  timing_ = {{"world_size", dist_.world},
             {"global_batch", global_batch},
             {"start_step", start_step},
             {"steps", steps_run},
             {"buckets", reducer_ ? static_cast<int64_t>(reducer_->buckets().size()) : 0},
             {"log_times", log_times},
             {"ranks", ranks}};
  metrics["epoch"] = state_.epoch;
  return metrics;
}

std::vector<float> Trainer::predict_rows(const TaskSplit& split, double* loss) {
  const int64_t n = split.num_features();
  const int64_t bs = args_.per_device_eval_batch_size;
  const int64_t width = split.prediction_width();
  // Batches are the single-process run's batches (same rows, same padding), dealt round-robin to ranks, so
  // every logit is computed exactly as one process computes it and the gathered result is byte-identical.
  const int64_t num_batches = (n + bs - 1) / bs, W = dist_.world;
  const int64_t mine = num_batches > dist_.rank ? (num_batches - dist_.rank + W - 1) / W : 0;
  const int64_t slots = (num_batches + W - 1) / W;  // batches per rank, the most any rank has
  const bool labels = loss && split.has_labels();
  const int64_t slot_floats = bs * width + 1;  // one batch's rows, then its mean loss
  std::vector<float> local(static_cast<size_t>(slots * slot_floats), 0.f);
  for (int64_t k = 0; k < mine; ++k) {
    const int64_t b0 = (k * W + dist_.rank) * bs;
    std::vector<int64_t> idx;
    for (int64_t i = b0; i < std::min(n, b0 + bs); ++i) idx.push_back(i);
    const CollatedBatch cb = split.collate(idx, labels, BatchKey{BatchKey::kEvalEpoch, idx});
    model::StepOptions so;
    so.train = false;
    so.keep_activations = false;  // no backward follows: one layer's activations at a time
    const float batch_loss = model_.forward(cb.batch, so);
    split.prediction_rows(cb, model_.logits(), local.data() + k * slot_floats);
    local[static_cast<size_t>(k * slot_floats + bs * width)] = batch_loss;
  }
  std::vector<float> all;
  const float* from = local.data();
  if (dist_.distributed() && slots > 0) {
    all.resize(static_cast<size_t>(W * slots * slot_floats));
    dist_.comm->allgather(local.data(), all.data(), slots * slot_floats, DType::f32);
    from = all.data();
  }
  std::vector<float> rows(static_cast<size_t>(n * width));
  double loss_sum = 0;
  for (int64_t k = 0; k < num_batches; ++k) {
    const int64_t r = k % W, slot = k / W, b0 = k * bs;
    const float* src = from + (dist_.distributed() ? r * slots * slot_floats : 0) + slot * slot_floats;
    const int64_t batch_rows = std::min(bs, n - b0);
    std::copy_n(src, batch_rows * width, rows.data() + b0 * width);
    loss_sum += static_cast<double>(src[bs * width]) * static_cast<double>(batch_rows);
  }
  if (labels) *loss = n > 0 ? loss_sum / static_cast<double>(n) : 0.0;
  return rows;
}

nlohmann::json Trainer::prediction_metrics(const TaskSplit& split, const std::string& prefix,
                                           bool write_files) {
  const auto t0 = Clock::now();
  double loss = 0;
  const std::vector<float> rows = predict_rows(split, &loss);
  // HF's trainer_qa stops the clock after the evaluation loop: post-processing and the metric are not timed.
  const double runtime = seconds_since(t0);
  nlohmann::json metrics = nlohmann::json::object();
  if (split.has_labels()) metrics[prefix + "_loss"] = loss;
  const nlohmann::json scores = split.score(rows, prefix, write_files && writes_files(), args_.output_dir);
  for (const auto& [k, v] : scores.items()) metrics[prefix + "_" + k] = v;
  const int64_t n = split.num_features();
  // HF's speed_metrics: steps of the global eval batch (per device x world).
  const int64_t batch = args_.per_device_eval_batch_size * dist_.world;
  const int64_t steps = (n + batch - 1) / batch;
  metrics[prefix + "_runtime"] = round_to(runtime, 4);
  metrics[prefix + "_samples_per_second"] = round_to(runtime > 0 ? n / runtime : 0, 3);
  metrics[prefix + "_steps_per_second"] = round_to(runtime > 0 ? steps / runtime : 0, 3);
  return metrics;
}

nlohmann::json Trainer::evaluate(const TaskSplit& eval, bool write_predictions, const std::string& prefix) {
  nlohmann::json metrics = prediction_metrics(eval, prefix, write_predictions);
  log(metrics);
  if (epoch_known_) metrics["epoch"] = state_.epoch;
  return metrics;
}

nlohmann::json Trainer::predict(const TaskSplit& split, const std::string& prefix) {
  return prediction_metrics(split, prefix, /*write_files=*/true);
}

void Trainer::save_model(const std::string& dir) const {
  if (!writes_files()) return;
  std::error_code ec;
  stdfs::create_directories(dir, ec);
  if (ec) fail(dir, ": cannot create (", ec.message(), ")");
  fs::write_file_atomic(dir + "/config.json", model_.config_json());
  model::save_hf_weights(dir + "/model.safetensors", model_.params(), std::as_const(model_).params_data());
  if (save_tokenizer_) save_tokenizer_(dir);
  write_json(dir + "/" + kTrainingArgsFile, training_args_to_json(args_));
}

void Trainer::save_state() const {
  if (!writes_files()) return;
  write_json(args_.output_dir + "/" + kTrainerStateFile,
             state_.to_json(is_world_process_zero(dist_), dist_.local_rank == 0));
}

void Trainer::save_metrics(const std::string& prefix, const nlohmann::json& metrics) const {
  if (!writes_files()) return;
  const std::string& out = args_.output_dir;
  write_json(out + "/" + prefix + "_results.json", metrics, 4);
  const std::string all_path = out + "/all_results.json";
  nlohmann::json all = nlohmann::json::object();
  std::error_code ec;
  if (stdfs::exists(all_path, ec)) all = read_json(all_path);
  for (const auto& [k, v] : metrics.items()) all[k] = v;
  write_json(all_path, all, 4);
}

void Trainer::save_checkpoint(const LrSchedule& schedule, bool full) {
  const auto& t = args_;
  const bool model_only = t.save_only_model && !full;
  if (writes_files()) {
    CheckpointWriter w(t.output_dir, state_.global_step);
    save_model(w.temp_dir());
    if (!model_only) {
      OptimizerState os;
      os.optim = t.optim;
      os.step = optimizer_steps_;
      if (t.optim == "sgd") {
        os.exp_avg.assign(static_cast<size_t>(model_.num_params()), 0.f);  // momentum 0: no buffer kept
      } else {
        const int64_t n = model_.num_params();
        os.exp_avg.assign(exp_avg_data(), exp_avg_data() + n);
        os.exp_avg_sq.assign(exp_avg_sq_data(), exp_avg_sq_data() + n);
      }
      save_optimizer_state(w.path(kOptimizerFile), os);
      write_json(w.path(kSchedulerFile), {{"lr_scheduler_type", t.lr_scheduler_type},
                                          {"base_lr", t.learning_rate},
                                          {"warmup_steps", schedule.warmup_steps()},
                                          {"total_steps", schedule.total_steps()},
                                          {"last_epoch", state_.global_step},
                                          {"last_lr", schedule.lr_at(state_.global_step)}});
    }
    write_json(w.path(kTrainerStateFile), state_.to_json(true, dist_.local_rank == 0));
    if (!model_only) {
      // HF keeps rng_state_{rank}.pth per process; here each rank's random state is a function of (seed,
      // epoch, position), so rank 0 writes every rank's file and the folder is complete when it appears.
      for (int r = 0; r < dist_.world; ++r) {
        const std::string name =
            dist_.world > 1 ? "rng_state_" + std::to_string(r) + ".json" : "rng_state.json";
        write_json(w.path(name), {{"seed", t.seed},
                                  {"data_seed", t.resolved_data_seed()},
                                  {"dropout_seed", t.seed},
                                  {"dropout_key", "epoch, position in the epoch's sample list"},
                                  {"epoch", state_.epoch},
                                  {"global_step", state_.global_step},
                                  {"micro_step", state_.global_step * t.gradient_accumulation_steps},
                                  {"rank", r},
                                  {"world", dist_.world}});
      }
    }
    w.commit();
    rotate_checkpoints(t.output_dir, t.save_total_limit, state_.best_model_checkpoint);
  }
  // Every process waits for the checkpoint to be complete, so none runs ahead of a checkpoint it may need.
  barrier(dist_);
}

TrainPlan Trainer::load_checkpoint(const std::string& dir, const LrSchedule& schedule) {
  const auto& t = args_;
  const int64_t n = model_.num_params();
  TrainPlan from;
  from.world = 0;
  // Rank 0 reads the folder; the others receive its contents, so nodes need not share the file system and
  // every rank provably starts from the same bytes.
  std::string state_text, opt_text;
  OptimizerState os;
  if (is_world_process_zero(dist_)) {
    const std::string weights = dir + "/model.safetensors";
    auto report = model::load_hf_weights(weights, model_.params(), model_.params_data());
    if (!report.missing.empty()) fail(weights, ": checkpoint lacks parameter ", report.missing.front());
    state_text = read_json(dir + "/" + kTrainerStateFile).dump();
    std::error_code ec;
    const std::string opt_path = dir + "/" + kOptimizerFile;
    if (!stdfs::exists(opt_path, ec))
      fail("--resume_from_checkpoint: ", dir, " has no ", kOptimizerFile, " (saved with --save_only_model?)");
    os = load_optimizer_state(opt_path, n);
    if ((os.optim == "sgd") != (t.optim == "sgd"))
      fail(opt_path, ": optimizer state is for --optim ", os.optim, ", this run uses --optim ", t.optim);
    opt_text = nlohmann::json({{"optim", os.optim}, {"step", os.step}}).dump();
    // Who wrote it (for the log line when the world size changed): rng_state files say the world size, the
    // checkpoint's training_args.json and trainer_state.json the batch and plan. Missing or odd: unknown.
    try {
      const std::string rng0 = dir + "/rng_state_0.json";
      if (stdfs::exists(rng0, ec))
        from.world = read_json(rng0).at("world").get<int>();
      else if (stdfs::exists(dir + "/rng_state.json", ec))
        from.world = 1;
      const auto st = nlohmann::json::parse(state_text);
      from.per_device_batch = st.value("train_batch_size", int64_t{1});
      from.max_steps = st.value("max_steps", int64_t{0});
      const std::string ta = dir + "/" + kTrainingArgsFile;
      if (stdfs::exists(ta, ec)) {
        const auto a = read_json(ta);
        from.per_device_batch = a.value("per_device_train_batch_size", from.per_device_batch);
        from.accum = a.value("gradient_accumulation_steps", int64_t{1});
      }
    } catch (const std::exception& e) {
      log::warn(dir, ": cannot tell which world size wrote it (", e.what(), ")");
      from.world = 0;
    }
  }
  broadcast_floats(dist_, model_.params_data(), n);
  model_.mark_weights_changed();
  broadcast_string(dist_, &state_text);
  broadcast_string(dist_, &opt_text);
  const auto opt = nlohmann::json::parse(opt_text);
  state_ = TrainerState::from_json(nlohmann::json::parse(state_text), dir + "/" + kTrainerStateFile);
  // The run's own plan wins over the checkpoint's (HF recomputes it from the current arguments).
  state_.max_steps = schedule.total_steps();
  state_.logging_steps = t.resolved_logging_steps(schedule.total_steps());
  state_.eval_steps = t.resolved_eval_steps(schedule.total_steps());
  state_.save_steps = t.resolved_save_steps(schedule.total_steps());
  state_.train_batch_size = t.per_device_train_batch_size;
  optimizer_steps_ = opt.at("step").get<int64_t>();
  if (t.optim != "sgd") {
    if (is_world_process_zero(dist_)) {
      exp_avg_ = std::move(os.exp_avg);
      exp_avg_sq_ = std::move(os.exp_avg_sq);
    }
    broadcast_floats(dist_, exp_avg_.data(), n);
    broadcast_floats(dist_, exp_avg_sq_.data(), n);
    if (!touched_rows_.all()) mark_rows_with_moments(model_, exp_avg_, exp_avg_sq_, touched_rows_);
  }
  return from;
}

}  // namespace ct::train
