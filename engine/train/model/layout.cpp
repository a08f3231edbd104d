// layout.cpp - which parameters each worker holds, and the model's initialisation.
#include "train/model/worker.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mc::train {

uint64_t Rng::next() {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Rng::uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }

double Rng::normal() {
  const double u1 = 1.0 - uniform(), u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

namespace {

struct Builder {
  Layout& l;
  bool by_unit = false;
  // Closes the unit opened at `begin`: with sharding by unit, pads it to a multiple of dp.
  int close_unit(int64_t begin) {
    ParamUnit u;
    u.begin = begin;
    u.end = l.size;
    if (by_unit) l.size = (l.size + l.dp - 1) / l.dp * l.dp;
    u.padded = l.size - begin;
    l.units.push_back(u);
    return int(l.units.size()) - 1;
  }
  int64_t add(const std::string& name, int64_t full_rows, int64_t full_cols, Split split, int groups, bool decay,
              bool in_norm) {
    TensorSpec t;
    t.name = name;
    t.full_rows = full_rows;
    t.full_cols = full_cols;
    t.split = split;
    t.groups = groups;
    t.rows = split == Split::rows ? full_rows / l.tp : full_rows;
    t.cols = split == Split::cols ? full_cols / l.tp : full_cols;
    t.decay = decay;
    // A replicated tensor's gradient is identical on every tp rank: count it once, on rank 0.
    t.in_norm = in_norm && (split != Split::replicated || l.tp_rank == 0);
    t.offset = l.size;
    l.size += t.size();
    l.tensors.push_back(t);
    return t.offset;
  }
};

}  // namespace

Layout make_layout(const ModelConfig& m, int tp, int tp_rank, int pp, int pp_rank, int dp, bool shard_by_unit) {
  Layout l;
  l.tp = tp;
  l.tp_rank = tp_rank;
  l.pp = pp;
  l.pp_rank = pp_rank;
  l.dp = dp;
  l.sharded_by_unit = shard_by_unit;
  const int base = m.layers / pp, extra = m.layers % pp;
  l.layers = base + (pp_rank < extra ? 1 : 0);
  l.first_layer = pp_rank * base + std::min(pp_rank, extra);
  l.has_embed = pp_rank == 0;
  l.has_head = pp_rank == pp - 1;
  const int64_t C = m.width, V = m.vocab, T = m.context;
  Builder b{l, shard_by_unit};
  if (l.has_embed) {
    l.wte = b.add("wte", V, C, Split::replicated, 1, true, true);
    l.wpe = b.add("wpe", T, C, Split::replicated, 1, true, true);
    l.embed_unit = b.close_unit(0);
  }
  l.first_layer_unit = int(l.units.size());
  for (int i = 0; i < l.layers; ++i) {
    const int64_t begin = l.size;
    const std::string h = "h" + std::to_string(l.first_layer + i) + ".";
    LayerOffsets o{};
    o.ln1_w = b.add(h + "ln1_w", 1, C, Split::replicated, 1, false, true);
    o.ln1_b = b.add(h + "ln1_b", 1, C, Split::replicated, 1, false, true);
    o.qkv_w = b.add(h + "qkv_w", C, 3 * C, Split::cols, 3, true, true);
    o.qkv_b = b.add(h + "qkv_b", 1, 3 * C, Split::cols, 3, false, true);
    o.proj_w = b.add(h + "proj_w", C, C, Split::rows, 1, true, true);
    o.proj_b = b.add(h + "proj_b", 1, C, Split::replicated, 1, false, true);
    o.ln2_w = b.add(h + "ln2_w", 1, C, Split::replicated, 1, false, true);
    o.ln2_b = b.add(h + "ln2_b", 1, C, Split::replicated, 1, false, true);
    o.fc_w = b.add(h + "fc_w", C, 4 * C, Split::cols, 1, true, true);
    o.fc_b = b.add(h + "fc_b", 1, 4 * C, Split::cols, 1, false, true);
    o.fcproj_w = b.add(h + "fcproj_w", 4 * C, C, Split::rows, 1, true, true);
    o.fcproj_b = b.add(h + "fcproj_b", 1, C, Split::replicated, 1, false, true);
    l.layer.push_back(o);
    b.close_unit(begin);
  }
  if (l.has_head) {
    const int64_t begin = l.size;
    l.lnf_w = b.add("lnf_w", 1, C, Split::replicated, 1, false, true);
    l.lnf_b = b.add("lnf_b", 1, C, Split::replicated, 1, false, true);
    // The output head is tied to the token embedding (Press & Wolf 2017). With a pipeline the last stage
    // keeps its own copy, kept equal by summing the two copies' gradients (Megatron's embedding group).
    if (!l.has_embed) l.wte = b.add("wte", V, C, Split::replicated, 1, true, false);
    l.head_unit = b.close_unit(begin);
  }
  l.padded = (l.size + dp - 1) / dp * dp;
  if (!l.units.empty()) l.units.back().padded += l.padded - l.size;  // the end's pad joins the last unit
  return l;
}

int Layout::unit_of(int64_t offset) const {
  // Units are few (layers + 2) and in order: the last one that begins at or before the offset.
  auto it =
      std::upper_bound(units.begin(), units.end(), offset, [](int64_t o, const ParamUnit& u) { return o < u.begin; });
  if (it == units.begin() || offset >= padded)
    throw std::logic_error("offset " + std::to_string(offset) + " is outside the layout");
  return int(it - units.begin()) - 1;
}

DPtr<float> Worker::P(int64_t offset) const {
  if (n_params > 0) return params + offset;
  const int u = lay.unit_of(offset);
  if (size_t(u) >= unit_params.size() || unit_params[size_t(u)].empty())
    throw std::logic_error("worker " + std::to_string(id) + " read unit " + std::to_string(u) +
                           "'s parameters before gathering them");
  return unit_params[size_t(u)].ptr() + (offset - lay.units[size_t(u)].begin);
}

DPtr<float> Worker::G(int64_t offset) {
  if (n_grads > 0) return grads + offset;
  const int u = lay.unit_of(offset);
  if (size_t(u) >= unit_grads.size() || unit_grads[size_t(u)].empty())
    throw std::logic_error("worker " + std::to_string(id) + " wrote unit " + std::to_string(u) +
                           "'s gradients outside its backward");
  return unit_grads[size_t(u)].ptr() + (offset - lay.units[size_t(u)].begin);
}

void Worker::allocate_state(device::Device& d, int64_t params_n, int64_t grads_n, int64_t param_shard_n,
                            int64_t grad_shard_n, int64_t moments_n) {
  dev = &d;
  n_params = params_n, n_grads = grads_n, n_param_shard = param_shard_n, n_grad_shard = grad_shard_n;
  n_moments = moments_n;
  state = Buffer<float>(d, params_n + grads_n + param_shard_n + grad_shard_n + 2 * moments_n);
  int64_t at = 0;
  auto carve = [&](int64_t n) {
    const DPtr<float> p = n > 0 ? state.ptr() + at : DPtr<float>();
    at += n;
    return p;
  };
  params = carve(params_n);
  grads = carve(grads_n);
  param_shard = carve(param_shard_n);
  grad_shard = carve(grad_shard_n);
  m = carve(moments_n);
  v = carve(moments_n);
  scalars = Buffer<double>(d, 2);
}

void Worker::set_tokens(const int32_t* ids, int64_t n) {
  if (tokens.size() != n) tokens = Buffer<int32_t>(*dev, n);
  dev->upload(tokens.ptr(), ids, n);
}

HostState Worker::download_state() const {
  HostState h;
  auto get = [&](std::vector<float>& out, DPtr<float> from, int64_t n) {
    out.assign(size_t(n), 0.0f);
    if (n > 0) dev->download(out.data(), DPtr<const float>(from), n);
  };
  get(h.params, params, n_params);
  get(h.param_shard, param_shard, n_param_shard);
  get(h.m, m, n_moments);
  get(h.v, v, n_moments);
  return h;
}

void Worker::upload_state(const HostState& h) {
  auto put = [&](DPtr<float> to, const std::vector<float>& from, int64_t n, const char* what) {
    if (int64_t(from.size()) != n)
      throw std::logic_error(std::string("worker state ") + what + " has " + std::to_string(from.size()) +
                             " floats, the layout " + std::to_string(n));
    if (n > 0) dev->upload(to, from.data(), n);
  };
  put(params, h.params, n_params, "params");
  put(param_shard, h.param_shard, n_param_shard, "param_shard");
  put(m, h.m, n_moments, "m");
  put(v, h.v, n_moments, "v");
}

const TensorSpec* find_tensor(const Layout& l, const std::string& name) {
  for (const auto& t : l.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

int64_t full_index(const TensorSpec& t, const Layout& local, const TensorSpec& full_t, int64_t r, int64_t c) {
  int64_t fr = r, fc = c;
  if (t.split == Split::rows) {
    fr = int64_t(local.tp_rank) * t.rows + r;
  } else if (t.split == Split::cols) {
    const int64_t gw = t.cols / t.groups;  // local width of one group
    const int64_t g = c / gw, within = c % gw;
    fc = g * (t.full_cols / t.groups) + int64_t(local.tp_rank) * gw + within;
  }
  return full_t.offset + fr * full_t.cols + fc;
}

std::vector<float> init_full_model(const ModelConfig& m, uint64_t seed) {
  Layout full = make_layout(m, 1, 0, 1, 0, 1);
  std::vector<float> p(size_t(full.size), 0.0f);
  Rng rng{seed * 0x2545F4914F6CDD1Dull + 17};
  const double proj_std = 0.02 / std::sqrt(2.0 * m.layers);
  for (const auto& t : full.tensors) {
    const bool gain = t.name.find("ln") != std::string::npos && t.name.back() == 'w';
    const bool bias = t.name.size() > 2 && t.name.substr(t.name.size() - 2) == "_b";
    const bool proj = t.name.find("proj_w") != std::string::npos;
    for (int64_t i = 0; i < t.size(); ++i) {
      float v = 0;
      if (gain)
        v = 1.0f;
      else if (!bias)
        v = float(rng.normal() * (proj ? proj_std : 0.02));
      p[size_t(t.offset + i)] = v;
    }
  }
  return p;
}

}  // namespace mc::train
