// Module 08's seeded numpy experiment. See experiment.hpp.
#include "mha/experiment.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

#include "mha/detail/format.hpp"
#include "mha/detail/reference_impl.hpp"
#include "mha/kernels.hpp"
#include "mha/numpy_random.hpp"

namespace mha {

NumpyNormalStream::NumpyNormalStream(std::uint32_t seed) : seed_(seed), rng_(seed) {}

const double* NumpyNormalStream::draws(Index offset, Index count) {
  if (offset < 0 || count < 0) {
    throw shape_error("draws(" + std::to_string(offset) + ", " + std::to_string(count) +
                      "): offset and count must be non-negative");
  }
  const auto end = static_cast<std::size_t>(offset + count);
  if (end > draws_.size()) {
    // A sixteenth more room than asked: typing word after word (one token more: d_model draws
    // more) then grows the stream in place instead of copying it to new memory each time; the
    // page's largest stream (6.3M draws, 50 MiB) holds 3 MiB more. Not doubled: that would be
    // 50 MiB more.
    if (end > draws_.capacity()) draws_.reserve(end + end / 16);
    double chunk[256];
    while (draws_.size() < end) {
      const std::size_t k = std::min(end - draws_.size(), std::size(chunk));
      rng_.standard_normals(chunk, static_cast<Index>(k));
      draws_.insert(draws_.end(), chunk, chunk + k);
    }
  }
  return draws_.data() + offset;
}

double numpy_experiment_work(Index tokens, Index d_model) {
  const double n = static_cast<double>(tokens), d = static_cast<double>(d_model);
  return n * d * (4 * d + 2 * n);
}

ExperimentPrecision auto_experiment_precision(Index tokens, Index d_model) {
  return numpy_experiment_work(tokens, d_model) <= kExperimentFloat64MaxWork
             ? ExperimentPrecision::float64
             : ExperimentPrecision::float32;
}

NumpyExperiment make_numpy_experiment(std::uint32_t seed, Index tokens, Index d_model,
                                      Index num_heads) {
  NumpyNormalStream stream(seed);
  return make_numpy_experiment(stream, tokens, d_model, num_heads);
}

namespace {

void check_tokens(Index tokens) {
  if (tokens <= 0) {
    throw shape_error("tokens=" + std::to_string(tokens) + ": at least one token is needed");
  }
  if (tokens > limits::max_tokens) {
    throw limit_error("tokens=" + std::to_string(tokens) + " exceeds the limit of " +
                      std::to_string(limits::max_tokens));
  }
}

}  // namespace

NumpyExperiment make_numpy_experiment(NumpyNormalStream& stream, Index tokens, Index d_model,
                                      Index num_heads, ExperimentPrecision precision) {
  NumpyExperiment e;
  e.config.d_model = d_model;
  e.config.num_heads = num_heads;
  e.config.validate();
  check_tokens(tokens);
  // Before the n·d + 4·d² draws (671 MB at n = d = 4096), not after them in the forward.
  check_weight_entries(num_heads, tokens, tokens);
  const Index n = tokens, d = d_model, dd = d * d;
  using DrawsMap = Eigen::Map<const RowMatrixXd>;
  // X = np.random.randn(n, d_model), then Wq, Wk, Wv, Wo = [np.random.randn(d_model, d_model)
  // for _ in range(4)]: one stream, sliced in that order.
  const double* draws = stream.draws(0, n * d + 4 * dd);
  const double* w = draws + n * d;  // Wq, Wk, Wv, Wo, each (d, d) row-major
  e.x_f64 = DrawsMap(draws, n, d);
  e.x = e.x_f64.cast<float>();
  if (precision == ExperimentPrecision::float64) {
    e.Wq = DrawsMap(w, d, d);
    e.Wk = DrawsMap(w + dd, d, d);
    e.Wv = DrawsMap(w + 2 * dd, d, d);
    e.Wo = DrawsMap(w + 3 * dd, d, d);
  }
  // PyTorch's layout (from_numpy's): X @ W == x W^T with W^T the (out, in) weight, so
  // in_proj_weight = [Wq^T; Wk^T; Wv^T] and out_proj_weight = Wo^T, in float32. Transposed in
  // 8 x 8 tiles: a plain transposed copy reads one double per 4 KiB row at d_model 512, and a
  // tile's rows, a power of two apart in bytes, share a few cache sets, so larger tiles (32 x 32)
  // evict each other.
  const auto transpose_into = [d](const double* W, float* out) {
    constexpr Index tile = 8;
    for (Index r0 = 0; r0 < d; r0 += tile) {
      for (Index c0 = 0; c0 < d; c0 += tile) {
        const Index r1 = std::min(r0 + tile, d), c1 = std::min(c0 + tile, d);
        for (Index r = r0; r < r1; ++r) {
          for (Index c = c0; c < c1; ++c) out[c * d + r] = static_cast<float>(W[r * d + c]);
        }
      }
    }
  };
  RowMatrixXf in_proj(3 * d, d), out_proj(d, d);
  for (int p = 0; p < 4; ++p) {  // one call site: the loop is compiled once (module size)
    transpose_into(w + p * dd, p < 3 ? in_proj.data() + p * dd : out_proj.data());
  }
  e.weights = AttentionWeights::fused(std::move(in_proj), VectorXf(), std::move(out_proj),
                                      VectorXf());
  return e;
}

RowMatrixXd numpy_experiment_input(const NumpyExperiment& experiment, bool positional) {
  if (!positional) return experiment.x_f64;
  return experiment.x_f64 +
         sinusoidal_positional_encoding_f64(experiment.x_f64.rows(), experiment.x_f64.cols());
}

AttentionResult numpy_experiment_forward(const NumpyExperiment& experiment, const RowMatrixXd& x,
                                         const AttentionMasks& masks,
                                         const ForwardOptions& options) {
  const AttentionConfig& c = experiment.config;
  c.validate();
  if (x.rows() == 0 || x.cols() != c.d_model) {
    throw shape_error("X is " + detail::shape_str(x.rows(), x.cols()) +
                      ", expected (n, d_model) with d_model = " + std::to_string(c.d_model));
  }
  detail::expect_finite("X", x);
  masks.validate(c.num_heads, x.rows(), x.rows());
  options.validate(c.num_heads);
  // numpy's own products (BLAS dgemm), in double: Q, K, V = X @ Wq, X @ Wk, X @ Wv.
  const RowMatrixXd Q = x * experiment.Wq, K = x * experiment.Wk, V = x * experiment.Wv;
  RowMatrixXd Y;
  AttentionResult result = detail::reference_heads(c, Q, K, V, masks, options, Y);
  result.output = (Y * experiment.Wo).cast<float>();  // mha_out = concat(heads) @ Wo
  detail::expect_no_overflow("the output projection", result.output);
  return result;
}

AttentionResult numpy_experiment_weights_f32(NumpyNormalStream& stream, Index tokens,
                                             const AttentionConfig& config, bool positional,
                                             const AttentionMasks& masks, Index first_head,
                                             Index head_count) {
  config.validate();
  check_tokens(tokens);
  if (first_head < 0 || head_count < 1 || first_head + head_count > config.num_heads) {
    throw shape_error("first_head=" + std::to_string(first_head) +
                      ", head_count=" + std::to_string(head_count) +
                      ": the heads must lie in [0, num_heads) with num_heads = " +
                      std::to_string(config.num_heads));
  }
  masks.validate(config.num_heads, tokens, tokens);
  // The whole view's weights (every head, wherever computed), before the draws: as the forward.
  check_weight_entries(config.num_heads, tokens, tokens);
  const Index n = tokens, d = config.d_model, dd = d * d;
  const Index w = head_count * config.d_head(), c0 = first_head * config.d_head();
  // The stream as make_numpy_experiment slices it: X, then Wq, Wk (Wv, Wo unused here).
  const double* draws = stream.draws(0, n * d + 4 * dd);
  RowMatrixXd x64 = Eigen::Map<const RowMatrixXd>(draws, n, d);
  if (positional) x64 += sinusoidal_positional_encoding_f64(n, d);
  const RowMatrixXf x = x64.cast<float>();
  // B (d, 2w) = [Wq | Wk] at the heads' columns: row r of B is row r of each draw matrix (numpy's
  // X @ W layout is (in, out)), read and written in order.
  const double* Wq = draws + n * d;
  const double* Wk = Wq + dd;
  RowMatrixXf B(d, 2 * w);
  for (Index r = 0; r < d; ++r) {
    float* row = B.data() + r * 2 * w;
    for (Index j = 0; j < w; ++j) row[j] = static_cast<float>(Wq[r * d + c0 + j]);
    for (Index j = 0; j < w; ++j) row[w + j] = static_cast<float>(Wk[r * d + c0 + j]);
  }
  RowMatrixXf qk(n, 2 * w);
  kernels::gemm(n, x.data(), d, kernels::Operand(d, 2 * w, B.data(), 2 * w, false), 1.0f,
                nullptr, qk.data(), 2 * w);
  return attention_weights_from_projections(config, first_head, qk.leftCols(w), qk.rightCols(w),
                                            masks);
}

AttentionResult numpy_experiment_forward_f32(const MultiheadAttention& layer, const RowMatrixXd& x,
                                             const AttentionMasks& masks,
                                             const ForwardOptions& options) {
  const RowMatrixXf x32 = x.cast<float>();
  return layer.forward(x32, masks, options);
}

void ExperimentRequest::check_head_range() const {
  if (head_range && !grids()) {
    throw parse_error(
        "first_head and head_count give those heads' weights only: ask them with "
        "precision float32 (or auto, above 4M multiply-adds), weights_only: true, "
        "keep_intermediates: false and return_parameters: false");
  }
}

ExperimentRun run_experiment(NumpyNormalStream& stream, const ExperimentRequest& request) {
  const AttentionConfig& c = request.config;
  ExperimentRun run;
  if (request.grids()) {
    // The heads' weights straight from the draws: no transposed weights, no layer; the same
    // weights bit for bit. ablated_heads changes no weight, but a wrong one is an error here as
    // on every other road.
    request.options.validate(c.num_heads);
    run.result = numpy_experiment_weights_f32(stream, request.tokens, c, request.positional,
                                              request.masks, request.first_head,
                                              request.head_count);
    return run;
  }
  run.experiment =
      make_numpy_experiment(stream, request.tokens, c.d_model, c.num_heads, request.precision);
  run.x = numpy_experiment_input(run.experiment, request.positional);
  if (request.precision == ExperimentPrecision::float64) {
    // float64 throughout, as the course's numpy code: its printed roundings are reproduced
    // (intermediates always kept).
    run.result = numpy_experiment_forward(run.experiment, run.x, request.masks, request.options);
  } else {
    run.layer.emplace(run.experiment.config, std::move(run.experiment.weights));
    run.result = numpy_experiment_forward_f32(*run.layer, run.x, request.masks, request.options);
  }
  return run;
}

}  // namespace mha
