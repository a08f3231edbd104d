// scaling_laws.cpp - the Kaplan 2020 and Chinchilla 2022 fits (see scaling_laws.h for the equations).
#include "capital/scaling_laws.h"

#include <cmath>
#include <stdexcept>

namespace mc::capital {

double flops_to_pf_days(double flops) { return flops / kFlopsPerPfDay; }
double pf_days_to_flops(double pf_days) { return pf_days * kFlopsPerPfDay; }
double training_flops(double params, double tokens) { return 6.0 * params * tokens; }

// Kaplan eq. (1.1): L(N) = (N_c / N)^alpha_N.
double kaplan_loss_N(double params, const KaplanConstants& k) { return std::pow(k.N_c / params, k.alpha_N); }
// Kaplan eq. (1.2): L(D) = (D_c / D)^alpha_D.
double kaplan_loss_D(double tokens, const KaplanConstants& k) { return std::pow(k.D_c / tokens, k.alpha_D); }
// Kaplan eq. (1.3): L(C_min) = (C_c_min / C_min)^alpha_C_min, C in PF-days.
double kaplan_loss_C(double flops, const KaplanConstants& k) {
  return std::pow(k.C_c_min_pf_days / flops_to_pf_days(flops), k.alpha_C_min);
}
// Kaplan eq. (1.5): L(N, D) = [(N_c/N)^(alpha_N/alpha_D) + D_c/D]^alpha_D.
double kaplan_loss_ND(double params, double tokens, const KaplanConstants& k) {
  return std::pow(std::pow(k.N_c / params, k.alpha_N / k.alpha_D) + k.D_c / tokens, k.alpha_D);
}
// Kaplan eq. (1.4): B_crit(L) = B* / L^(1/alpha_B).
double kaplan_critical_batch_tokens(double loss, const KaplanConstants& k) {
  return k.B_star_tokens / std::pow(loss, 1.0 / k.alpha_B);
}

double chinchilla_loss(double params, double tokens, const ChinchillaConstants& c) {
  return c.E + c.A / std::pow(params, c.alpha) + c.B / std::pow(tokens, c.beta);
}
double chinchilla_G(const ChinchillaConstants& c) {
  return std::pow(c.alpha * c.A / (c.beta * c.B), 1.0 / (c.alpha + c.beta));
}
double chinchilla_a(const ChinchillaConstants& c) { return c.beta / (c.alpha + c.beta); }
double chinchilla_b(const ChinchillaConstants& c) { return c.alpha / (c.alpha + c.beta); }

const char* to_string(ScalingRule r) { return r == ScalingRule::kaplan ? "kaplan" : "chinchilla"; }

ScalingRule parse_scaling_rule(const std::string& s) {
  if (s == "kaplan") return ScalingRule::kaplan;
  if (s == "chinchilla") return ScalingRule::chinchilla;
  throw std::invalid_argument("unknown scaling rule \"" + s + "\": expected \"kaplan\" or \"chinchilla\"");
}

ChinchillaApproachFit chinchilla_fit(ChinchillaApproach a) {
  switch (a) {
    case ChinchillaApproach::envelope:
      return {0.50, kGopherFlops, 67e9};  // Table 2; Table 3's 67B row
    case ChinchillaApproach::isoflop:
      return {0.49, kGopherFlops, 70e9};  // Table 2; the Chinchilla model
    case ChinchillaApproach::parametric:
      break;
  }
  const ChinchillaConstants c;
  return {chinchilla_a(c), 0, 0};
}

const char* to_string(ChinchillaApproach a) {
  switch (a) {
    case ChinchillaApproach::envelope:
      return "envelope";
    case ChinchillaApproach::isoflop:
      return "isoflop";
    case ChinchillaApproach::parametric:
      return "parametric";
  }
  return "?";
}

Allocation allocate_chinchilla(double flops, ChinchillaApproach approach, const ChinchillaConstants& c) {
  Allocation a;
  a.rule = ScalingRule::chinchilla;
  a.flops = flops;
  if (!(flops > 0)) return a;
  if (approach == ChinchillaApproach::parametric) {
    // Chinchilla eq. (4): N_opt = G (C/6)^a, D_opt = G^-1 (C/6)^b.
    const double g = chinchilla_G(c);
    a.params = g * std::pow(flops / 6.0, chinchilla_a(c));
    a.tokens = std::pow(flops / 6.0, chinchilla_b(c)) / g;
  } else {
    const ChinchillaApproachFit f = chinchilla_fit(approach);
    a.params = f.anchor_params * std::pow(flops / f.anchor_flops, f.a);
    a.tokens = flops / (6.0 * a.params);  // C = 6 N D
  }
  a.predicted_loss = chinchilla_loss(a.params, a.tokens, c);
  a.tokens_per_param = a.tokens / a.params;
  return a;
}

Allocation allocate(double flops, ScalingRule rule, const KaplanConstants& k, const ChinchillaConstants& c) {
  Allocation a;
  a.rule = rule;
  a.flops = flops;
  if (!(flops > 0)) return a;
  if (rule == ScalingRule::kaplan) {
    // Kaplan eq. (6.1): the compute-efficient size grows as C^0.73; the tokens are what is left, D = C/6N.
    a.params = k.N_e * std::pow(flops_to_pf_days(flops), k.p_N);
    a.tokens = flops / (6.0 * a.params);
    a.predicted_loss = kaplan_loss_ND(a.params, a.tokens, k);
  } else {
    return allocate_chinchilla(flops, ChinchillaApproach::envelope, c);
  }
  a.tokens_per_param = a.tokens / a.params;
  return a;
}

}  // namespace mc::capital
