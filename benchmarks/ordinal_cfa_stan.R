# The Bayesian ordinal CFA of bayesmeta.validity.ordinal_cfa in Stan (rstan), for the speed
# comparison of benchmarks/bench_ordinal_cfa.py (--part stan). Same model and priors:
# standardized loadings ~ Beta(1, 1), standardized thresholds with the density
# prod phi(tau) on the ordered vector (uniform implied category probabilities),
# LKJ(1) via the Cholesky factor, non-centred factor scores, probit likelihood with
# Stan's own ordered_probit (Stan 2.21 syntax, as Debian's rstan). Missing ratings (NA) drop out of the likelihood.
#
# Usage: Rscript ordinal_cfa_stan.R ratings_wide.csv TUNE DRAWS
# (columns: 12 indicators in trait-major order COH, CON, FLU, REL x raters 1..3).
# Prints one JSON line: compile and sampling seconds, min bulk ESS, max R-hat, ESS/s.
# Debian: apt-get install -y r-cran-rstan; if r-cran-bh lacks its include folder, point
# BH at /usr/include (e.g. a BH/include symlink to /usr/include in a user library).
suppressMessages(library(rstan))
args <- commandArgs(trailingOnly = TRUE)
y <- as.matrix(read.csv(args[1], header = FALSE))
tune <- as.integer(args[2]); draws <- as.integer(args[3])
code <- "
data {
  int<lower=1> N; int<lower=1> J; int<lower=1> F; int<lower=3> K;
  int<lower=1, upper=F> fac[J];
  int<lower=0> M; int<lower=1, upper=N> rowi[M]; int<lower=1, upper=J> ind[M];
  int<lower=1, upper=K> y[M];
}
parameters {
  vector<lower=0, upper=1>[J] lstd;
  ordered[K - 1] tau[J];
  cholesky_factor_corr[F] L;
  matrix[N, F] z;
}
transformed parameters {
  matrix[N, F] eta = z * L';
}
model {
  vector[J] sd_ = sqrt(1 - square(lstd));
  for (j in 1:J) target += normal_lpdf(tau[j] | 0, 1);
  L ~ lkj_corr_cholesky(1);
  to_vector(z) ~ std_normal();
  for (m in 1:M) {
    int j = ind[m];
    y[m] ~ ordered_probit(lstd[j] * eta[rowi[m], fac[j]] / sd_[j], tau[j] / sd_[j]);
  }
}
"
obs <- which(!is.na(y), arr.ind = TRUE)
dat <- list(N = nrow(y), J = ncol(y), F = 4, K = 5, fac = rep(1:4, each = 3),
            M = nrow(obs), rowi = obs[, 1], ind = obs[, 2], y = as.integer(y[obs]))
t0 <- Sys.time()
sm <- stan_model(model_code = code)
t_compile <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
fit <- sampling(sm, data = dat, chains = 2, cores = 2, iter = tune + draws, warmup = tune,
                seed = 2024, refresh = 0, init = function() list(
                  lstd = rep(0.7, 12), L = diag(4), z = matrix(0, nrow(y), 4)))
times <- get_elapsed_time(fit)
t_sampling <- max(rowSums(times))
s <- summary(fit, pars = c("lstd", "tau", "L"))$summary
keep <- !is.na(s[, "Rhat"]) & s[, "sd"] > 0
ess <- sapply(c("lstd", "tau", "L"), function(p) {
  a <- as.array(fit, pars = p)
  min(apply(a, 3, function(x) if (sd(x) > 0) ess_bulk(x) else Inf))
})
min_ess <- min(ess)
cat(sprintf('{"stan_compile_s": %.1f, "stan_sampling_s": %.1f, "stan_min_ess_bulk": %.1f, "stan_max_rhat": %.4f, "stan_min_ess_per_s": %.4f, "tune": %d, "draws": %d}\n',
            t_compile, t_sampling, min_ess, max(s[keep, "Rhat"]), min_ess / t_sampling,
            tune, draws))
