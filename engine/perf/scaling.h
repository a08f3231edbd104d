// scaling.h - scaling laws of the era: how loss falls with parameters N, tokens D and compute C.
// Kaplan et al. 2020 ("Scaling Laws for Neural Language Models", Table 1/2, eqs. 1.1-1.6) and
// Hoffmann et al. 2022 ("Training Compute-Optimal Large Language Models", Chinchilla, eq. 2 and Sec. 3.3).
// Losses are in nats per token; N excludes embeddings (Kaplan) or counts all parameters (Chinchilla).
#pragma once

namespace mc::perf {

struct KaplanLaw {  // Kaplan et al. 2020, Sec. 1.2 / Table 5 fits
  double alpha_N = 0.076, N_c = 8.8e13;
  double alpha_D = 0.095, D_c = 5.4e13;
  double alpha_C_min = 0.050, C_c_min_pf_days = 3.1e8;
  double alpha_B = 0.21, B_star_tokens = 2e8;
};
double kaplan_loss_of_params(const KaplanLaw& k, double n);             // eq. (1.1) L(N) = (N_c/N)^a_N
double kaplan_loss_of_tokens(const KaplanLaw& k, double d);             // eq. (1.2) L(D) = (D_c/D)^a_D
double kaplan_loss_of_compute(const KaplanLaw& k, double c_pf_days);    // eq. (1.3) L(C_min)
double kaplan_critical_batch_tokens(const KaplanLaw& k, double loss);   // eq. (1.4) B_crit = B*/L^(1/a_B)
double kaplan_loss(const KaplanLaw& k, double n, double d);             // eq. (1.5) L(N, D)

struct ChinchillaLaw {  // Hoffmann et al. 2022, eq. (2) fit of Approach 3
  double E = 1.69, A = 406.4, B = 410.7, alpha = 0.34, beta = 0.28;
};
double chinchilla_loss(const ChinchillaLaw& c, double n, double d);  // E + A/N^alpha + B/D^beta
// Compute-optimal split of C = 6 N D (Sec. 3.3): N_opt = G (C/6)^a, D_opt = G^-1 (C/6)^b with
// a = beta/(alpha+beta), b = alpha/(alpha+beta), G = (alpha A / (beta B))^(1/(alpha+beta)).
double chinchilla_G(const ChinchillaLaw& c);
double chinchilla_a(const ChinchillaLaw& c);
double chinchilla_optimal_params(const ChinchillaLaw& c, double compute_flops);
double chinchilla_optimal_tokens(const ChinchillaLaw& c, double compute_flops);

}  // namespace mc::perf
