// scaling.h - predictable scaling at laptop size: train several model sizes on the same data with the
// same token budget, fit the loss against compute L(C) = a C^b + c (Kaplan et al. 2020, Eq. 1.4 form
// with an irreducible term as in Henighan et al. 2020), predict a larger run before training it, then
// train it and compare (the method OpenAI's GPT-4 report credits for predicting its final loss).
#pragma once

#include "train/train.h"

#include <memory>
#include <string>
#include <vector>

namespace mc::train {

struct ScalingConfig {
  std::vector<int> widths = {16, 24, 32, 48};  // the sweep
  int predict_width = 64;                      // the larger run, trained after its prediction
  int layers = 2, heads = 4, context = 32, batch = 8;
  int steps = 240;  // the same number of tokens for every size
  uint64_t seed = 1;
  // False: the sweep ends once the prediction is made, before the larger model trains (a class predicts
  // first, then a later step trains it with train_target true: the same seed gives the same small runs).
  bool train_target = true;
  // The corpus's entropy rate (nats/byte) when whoever picked the corpus knows it, else 0: the true
  // irreducible loss, used as c. Set it from Corpus::entropy_nats_per_byte (resolve_corpus): the caller
  // knows which text it chose, while the text alone cannot say what language wrote it.
  double corpus_entropy_nats_per_byte = 0;
  static ScalingConfig quick();  // a few seconds, for tests
  friend bool operator==(const ScalingConfig&, const ScalingConfig&) = default;
};

struct PowerLawFit {
  double a = 0, b = 0, c = 0;  // L = a x^b + c
  double rms_error = 0;        // over the fitted points (nats)
  double operator()(double x) const;
};

// Least squares in L over c in [0, min L), with a and b from the log-log regression for each c.
PowerLawFit fit_power_law(const std::vector<double>& x, const std::vector<double>& loss);
// The same with c given (the irreducible loss, when it is known): a and b from the log-log regression of
// L - c, two free parameters instead of three. Throws std::invalid_argument when c >= min L or < 2 points.
PowerLawFit fit_power_law_given_c(const std::vector<double>& x, const std::vector<double>& loss, double c);

struct ScalingPoint {
  int width = 0;
  int64_t params = 0, non_embedding_params = 0;
  double compute_flops = 0;   // 6 N D + attention over the run (flops_per_token x tokens)
  double loss = 0;            // held-out loss at the end
  std::vector<double> curve;  // training losses
};

struct ScalingResult {
  std::vector<ScalingPoint> points;  // the sweep, in order
  // L(C) and L(N). When the corpus's entropy is known (the built-in language) c is that entropy, the
  // true irreducible loss, and only a and b are fitted; otherwise c is fitted too.
  PowerLawFit fit_compute, fit_params;
  PowerLawFit fit_compute_free_c;     // L(C) with c fitted as well (what a real lab has to do)
  bool c_known = false;               // fit_compute / fit_params use c = entropy_floor
  ScalingPoint target;                // the larger run (loss filled in once trained)
  double predicted_loss = 0;          // from L(C) before the target trained
  double predicted_loss_params = 0;   // from L(N), the same moment
  double predicted_loss_free_c = 0;   // from fit_compute_free_c
  double entropy_floor = 0;           // ScalingConfig::corpus_entropy_nats_per_byte (0: unknown)
  bool fitted = false, done = false;  // done: the sweep ran as configured (with or without the target)
  bool target_trained = false;        // target.loss is the trained model's
};

// The sweep as a resumable job: the UI advances it a few steps per frame, the CLI runs it to the end.
class ScalingSweep {
 public:
  ScalingSweep(ScalingConfig cfg, std::string corpus);
  ~ScalingSweep();
  bool done() const;
  void advance(int steps);  // trains up to `steps` more steps of the current run
  double progress() const;  // 0..1
  const ScalingResult& result() const;
  const ScalingConfig& config() const;
  std::string current_label() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

nlohmann::json to_json(const ScalingResult& r);

// The sweep's config as JSON (a scenario's "scaling" config, the lab's Predictable-scaling tab):
// {"quick": true} starts from ScalingConfig::quick(), then any of "widths", "predict_width", "layers",
// "heads", "context", "batch", "steps", "seed" override it. "corpus" (an id of assets/corpus/index.json)
// is the caller's to resolve and is accepted here. Throws std::invalid_argument naming `what`, the key,
// the rule and the value for anything else.
ScalingConfig scaling_config_from_json(const nlohmann::json& j, const std::string& what);
// The corpus a sweep's config names ("corpus": an id of assets/corpus/index.json), else the built-in language.
std::string scaling_corpus(const nlohmann::json& j);
nlohmann::json to_json(const ScalingConfig& c);
// The numbers a class is told about a finished sweep: to_json(r) plus the prediction's error
// ("target.relative_error", "target.abs_relative_error") and "target.extrapolation" (its compute over the
// largest fitted run's). The scenario action and the lab's tab both report this, so they agree.
nlohmann::json sweep_summary_json(const ScalingResult& r);
// The target's compute over the largest fitted run's: how far the fit is extrapolated (0 before any run).
double extrapolation(const ScalingResult& r);

}  // namespace mc::train
