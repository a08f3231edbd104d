// scaling.cpp - predictable scaling at laptop size (scaling.h): train a ladder of model sizes on the same
// tokens and fit L(C) = a C^b + c to the small ones to predict the largest (Kaplan et al. 2020, Eq. 1.4 form).
#include "train/scaling.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mc::train {

ScalingConfig ScalingConfig::quick() {
  ScalingConfig c;
  c.widths = {8, 16, 24};
  c.predict_width = 32;
  c.context = 16;
  c.steps = 60;
  return c;
}

double PowerLawFit::operator()(double x) const { return a * std::pow(x, b) + c; }

PowerLawFit fit_power_law_given_c(const std::vector<double>& x, const std::vector<double>& loss, double c) {
  if (x.size() != loss.size() || x.size() < 2) throw std::invalid_argument("a power law needs 2+ points");
  const double lmin = *std::min_element(loss.begin(), loss.end());
  if (!(c < lmin))
    throw std::invalid_argument("the irreducible loss " + std::to_string(c) + " is not below every loss (min " +
                                std::to_string(lmin) + "): the runs cannot follow a*x^b + c");
  // Tested on the values, not on n*sxx - sx*sx: for equal x that is rounding noise, not 0.
  if (!(*std::max_element(x.begin(), x.end()) > *std::min_element(x.begin(), x.end())))
    throw std::invalid_argument("a power law needs 2+ distinct x values");
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = double(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double lx = std::log(x[i]), ly = std::log(loss[i] - c);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
  }
  const double den = n * sxx - sx * sx;
  PowerLawFit f;
  f.b = (n * sxy - sx * sy) / den;
  f.a = std::exp((sy - f.b * sx) / n);
  f.c = c;
  double err = 0;
  for (size_t i = 0; i < x.size(); ++i) err += (f(x[i]) - loss[i]) * (f(x[i]) - loss[i]);
  f.rms_error = std::sqrt(err / n);
  return f;
}

PowerLawFit fit_power_law(const std::vector<double>& x, const std::vector<double>& loss) {
  if (x.size() != loss.size() || x.size() < 3) throw std::invalid_argument("a power law with offset needs 3+ points");
  const double lmin = *std::min_element(loss.begin(), loss.end());
  // c on a grid of 400 values in [0, min L); a and b by least squares in log space for each, the c with the
  // smallest error in L kept.
  PowerLawFit best;
  best.rms_error = INFINITY;
  for (int k = 0; k < 400; ++k) {
    const PowerLawFit f = fit_power_law_given_c(x, loss, lmin * 0.999 * k / 400.0);
    if (f.rms_error < best.rms_error) best = f;
  }
  return best;
}

struct ScalingSweep::State {
  ScalingConfig cfg;
  std::string corpus;
  ScalingResult result;
  size_t run = 0;  // index into widths, then widths.size() for the target
  std::unique_ptr<Trainer> trainer;
  ScalingPoint current;
};

namespace {

TrainConfig run_config(const ScalingConfig& s, int width) {
  TrainConfig c;
  c.model = {.vocab = 256, .context = s.context, .layers = s.layers, .width = width, .heads = s.heads};
  c.batch = s.batch;
  c.steps = s.steps;
  c.seed = s.seed;
  c.optim.warmup_steps = std::max(1, s.steps / 20);
  // Smaller models tolerate larger steps (Kaplan et al. 2020, Eq. D.1: lr ~ N^-0.25 roughly); keep one lr
  // for the sweep so the only variable is size.
  c.optim.lr = 3e-3;
  return c;
}

}  // namespace

ScalingSweep::ScalingSweep(ScalingConfig cfg, std::string corpus) : s_(std::make_unique<State>()) {
  if (cfg.widths.size() < 3)
    throw std::invalid_argument("the scaling sweep needs at least 3 sizes to fit 3 parameters");
  for (int w : cfg.widths)
    if (w % cfg.heads != 0) throw std::invalid_argument("every width must be a multiple of heads");
  s_->cfg = std::move(cfg);
  s_->corpus = std::move(corpus);
  // From the caller, who knows which corpus it picked: the bytes cannot say what wrote them (matching them
  // against default_corpus() would read find_assets_dir(), not the caller's assets, and generate 64 KiB).
  if (!(s_->cfg.corpus_entropy_nats_per_byte >= 0) || !std::isfinite(s_->cfg.corpus_entropy_nats_per_byte))
    throw std::invalid_argument("the corpus entropy must be a finite number of nats/byte >= 0 (0: unknown)");
  s_->result.entropy_floor = s_->cfg.corpus_entropy_nats_per_byte;
}

ScalingSweep::~ScalingSweep() = default;
bool ScalingSweep::done() const { return s_->result.done; }
const ScalingResult& ScalingSweep::result() const { return s_->result; }
const ScalingConfig& ScalingSweep::config() const { return s_->cfg; }

double ScalingSweep::progress() const {
  const double runs = double(s_->cfg.widths.size() + (s_->cfg.train_target ? 1 : 0));
  const double inner = s_->trainer ? double(s_->trainer->step_index()) / std::max(1, s_->cfg.steps) : 0.0;
  return std::min(1.0, (double(s_->run) + inner) / runs);
}

std::string ScalingSweep::current_label() const {
  if (done()) return s_->result.target_trained ? "done" : "predicted, not trained";
  const bool target = s_->run >= s_->cfg.widths.size();
  const int w = target ? s_->cfg.predict_width : s_->cfg.widths[s_->run];
  return (target ? "predicted run, width " : "sweep, width ") + std::to_string(w);
}

void ScalingSweep::advance(int steps) {
  State& s = *s_;
  while (steps > 0 && !s.result.done) {
    const bool target = s.run >= s.cfg.widths.size();
    if (!s.trainer) {
      const int w = target ? s.cfg.predict_width : s.cfg.widths[s.run];
      s.trainer = std::make_unique<Trainer>(run_config(s.cfg, w), s.corpus);
      s.current = {};
      s.current.width = w;
      s.current.params = s.trainer->parameter_count();
      s.current.non_embedding_params = int64_t(12) * s.cfg.layers * w * w;
      s.current.compute_flops = s.trainer->flops_per_token() * double(s.cfg.batch) * s.cfg.context * s.cfg.steps;
    }
    while (steps > 0 && s.trainer->step_index() < s.cfg.steps) {
      s.current.curve.push_back(s.trainer->step().loss);
      --steps;
    }
    if (s.trainer->step_index() < s.cfg.steps) break;
    s.current.loss = s.trainer->eval_loss(8);
    s.trainer.reset();
    if (!target) {
      s.result.points.push_back(s.current);
      if (s.result.points.size() == s.cfg.widths.size()) {
        std::vector<double> c, n, l;
        for (const auto& p : s.result.points) {
          c.push_back(p.compute_flops);
          n.push_back(double(p.non_embedding_params));
          l.push_back(p.loss);
        }
        s.result.fit_compute_free_c = fit_power_law(c, l);
        // With the irreducible loss known, fitting it too would spend one of a handful of points on a
        // number we have exactly; a c wrongly fitted at 0 bends the extrapolation (Henighan et al. 2020
        // fit c only because they do not know it).
        const double lmin = *std::min_element(l.begin(), l.end());
        s.result.c_known = s.result.entropy_floor > 0 && s.result.entropy_floor < lmin;
        s.result.fit_compute =
            s.result.c_known ? fit_power_law_given_c(c, l, s.result.entropy_floor) : s.result.fit_compute_free_c;
        s.result.fit_params =
            s.result.c_known ? fit_power_law_given_c(n, l, s.result.entropy_floor) : fit_power_law(n, l);
        s.result.fitted = true;
        // The prediction is made now, before the larger model has seen a single byte.
        Trainer probe(run_config(s.cfg, s.cfg.predict_width), s.corpus);
        s.result.target.width = s.cfg.predict_width;
        s.result.target.params = probe.parameter_count();
        s.result.target.non_embedding_params = int64_t(12) * s.cfg.layers * s.cfg.predict_width * s.cfg.predict_width;
        s.result.target.compute_flops = probe.flops_per_token() * double(s.cfg.batch) * s.cfg.context * s.cfg.steps;
        s.result.predicted_loss = s.result.fit_compute(s.result.target.compute_flops);
        s.result.predicted_loss_free_c = s.result.fit_compute_free_c(s.result.target.compute_flops);
        s.result.predicted_loss_params = s.result.fit_params(double(s.result.target.non_embedding_params));
        if (!s.cfg.train_target) s.result.done = true;  // predicted; the class trains it later
      }
    } else {
      s.result.target = s.current;
      s.result.target_trained = true;
      s.result.done = true;
    }
    s.run += 1;
  }
}

ScalingConfig scaling_config_from_json(const nlohmann::json& j, const std::string& what) {
  if (!j.is_object()) throw std::invalid_argument(what + ": a scaling config is an object");
  auto bad = [&](const std::string& key, const std::string& rule) {
    return std::invalid_argument(what + ": key \"" + key + "\": " + rule + ", got " + j[key].dump());
  };
  if (j.contains("quick") && !j["quick"].is_boolean()) throw bad("quick", "true or false");
  ScalingConfig c = j.value("quick", false) ? ScalingConfig::quick() : ScalingConfig{};
  auto integer = [&](const char* key, int lo, int hi, int& out) {
    if (!j.contains(key)) return;
    if (!j[key].is_number_integer() || j[key].get<long long>() < lo || j[key].get<long long>() > hi)
      throw bad(key, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    out = j[key].get<int>();
  };
  for (const auto& [k, v] : j.items())
    if (k != "quick" && k != "widths" && k != "predict_width" && k != "layers" && k != "heads" && k != "context" &&
        k != "batch" && k != "steps" && k != "seed" && k != "corpus" && k != "train_target")
      throw std::invalid_argument(what + ": unknown key \"" + k +
                                  "\"; expected quick, widths, predict_width, layers, "
                                  "heads, context, batch, steps, seed, corpus, train_target");
  if (j.contains("corpus") && !j["corpus"].is_string()) throw bad("corpus", "an id of assets/corpus/index.json");
  if (j.contains("widths")) {
    const auto& w = j["widths"];
    if (!w.is_array() || w.size() < 3) throw bad("widths", "3 or more widths (a fit with an offset needs 3 points)");
    c.widths.clear();
    for (const auto& x : w) {
      if (!x.is_number_integer() || x.get<int>() < 4 || x.get<int>() > 512) throw bad("widths", "integers in [4, 512]");
      c.widths.push_back(x.get<int>());
    }
  }
  integer("predict_width", 4, 1024, c.predict_width);
  integer("layers", 1, 12, c.layers);
  integer("heads", 1, 16, c.heads);
  integer("context", 4, 1024, c.context);
  integer("batch", 1, 256, c.batch);
  integer("steps", 1, 100000, c.steps);
  if (j.contains("train_target")) {
    if (!j["train_target"].is_boolean())
      throw bad("train_target", "true (train the larger model) or false (predict only)");
    c.train_target = j["train_target"].get<bool>();
  }
  if (j.contains("seed")) {
    if (!j["seed"].is_number_unsigned()) throw bad("seed", "a non-negative integer");
    c.seed = j["seed"].get<uint64_t>();
  }
  return c;
}

std::string scaling_corpus(const nlohmann::json& j) {
  return j.is_object() && j.contains("corpus") && j["corpus"].is_string() ? j["corpus"].get<std::string>()
                                                                          : std::string("synthetic");
}

nlohmann::json to_json(const ScalingConfig& c) {
  return {{"widths", c.widths},
          {"predict_width", c.predict_width},
          {"layers", c.layers},
          {"heads", c.heads},
          {"context", c.context},
          {"batch", c.batch},
          {"steps", c.steps},
          {"seed", c.seed},
          {"train_target", c.train_target}};
}

nlohmann::json sweep_summary_json(const ScalingResult& r) {
  nlohmann::json j = to_json(r);
  if (r.target_trained && r.target.loss > 0) {
    const double err = (r.predicted_loss - r.target.loss) / r.target.loss;
    j["target"]["relative_error"] = err;
    j["target"]["abs_relative_error"] = std::fabs(err);
  }
  if (const double x = extrapolation(r); x > 0) j["target"]["extrapolation"] = x;
  return j;
}

double extrapolation(const ScalingResult& r) {
  double largest = 0;
  for (const auto& p : r.points) largest = std::max(largest, p.compute_flops);
  return largest > 0 ? r.target.compute_flops / largest : 0.0;
}

nlohmann::json to_json(const ScalingResult& r) {
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : r.points)
    pts.push_back({{"width", p.width},
                   {"params", p.params},
                   {"non_embedding_params", p.non_embedding_params},
                   {"compute_flops", p.compute_flops},
                   {"loss", p.loss}});
  auto fit = [](const PowerLawFit& f) {
    return nlohmann::json{{"a", f.a}, {"b", f.b}, {"c", f.c}, {"rms_error", f.rms_error}};
  };
  nlohmann::json j = {{"points", pts},
                      {"fit_compute", fit(r.fit_compute)},
                      {"fit_params", fit(r.fit_params)},
                      {"fit_compute_free_c", fit(r.fit_compute_free_c)},
                      {"c_known", r.c_known},
                      {"target",
                       {{"width", r.target.width},
                        {"params", r.target.params},
                        {"non_embedding_params", r.target.non_embedding_params},
                        {"compute_flops", r.target.compute_flops},
                        {"predicted_loss", r.predicted_loss},
                        {"predicted_loss_params", r.predicted_loss_params},
                        {"predicted_loss_free_c", r.predicted_loss_free_c},
                        {"loss", r.target.loss}}},
                      {"done", r.done},
                      {"target_trained", r.target_trained}};
  if (r.entropy_floor > 0) j["entropy_floor_nats_per_byte"] = r.entropy_floor;
  return j;
}

}  // namespace mc::train
