// scaling.cpp - see scaling.h (formulas and their equations are cited there).
#include "perf/scaling.h"

#include <cmath>

namespace mc::perf {

double kaplan_loss_of_params(const KaplanLaw& k, double n) { return std::pow(k.N_c / n, k.alpha_N); }
double kaplan_loss_of_tokens(const KaplanLaw& k, double d) { return std::pow(k.D_c / d, k.alpha_D); }
double kaplan_loss_of_compute(const KaplanLaw& k, double c) { return std::pow(k.C_c_min_pf_days / c, k.alpha_C_min); }
double kaplan_critical_batch_tokens(const KaplanLaw& k, double loss) { return k.B_star_tokens / std::pow(loss, 1 / k.alpha_B); }
double kaplan_loss(const KaplanLaw& k, double n, double d) {
  return std::pow(std::pow(k.N_c / n, k.alpha_N / k.alpha_D) + k.D_c / d, k.alpha_D);
}

double chinchilla_loss(const ChinchillaLaw& c, double n, double d) {
  return c.E + c.A / std::pow(n, c.alpha) + c.B / std::pow(d, c.beta);
}
double chinchilla_G(const ChinchillaLaw& c) {
  return std::pow(c.alpha * c.A / (c.beta * c.B), 1 / (c.alpha + c.beta));
}
double chinchilla_a(const ChinchillaLaw& c) { return c.beta / (c.alpha + c.beta); }
double chinchilla_optimal_params(const ChinchillaLaw& c, double compute) {
  return chinchilla_G(c) * std::pow(compute / 6, chinchilla_a(c));
}
double chinchilla_optimal_tokens(const ChinchillaLaw& c, double compute) {
  return std::pow(compute / 6, c.alpha / (c.alpha + c.beta)) / chinchilla_G(c);
}

}  // namespace mc::perf
