# Reference factor scores for tests/test_factor_scores.py: lavaan's lavPredict() after the
# WLSMV ordinal CFA of the SummEval expert ratings (the fits of lavaan_cfa.R).
# Produced with R 4.2.2 and lavaan 0.6-14 (Debian bookworm r-cran-lavaan 0.6.14-1):
#   cd tests/results && Rscript lavaan_factor_scores.R /path/to/summeval/metric_scores_long.csv
# Writes lavaan_<model>_factor_scores.csv: one row per output (test_id, model_id; outputs
# with no rating left out, as lavaan does), columns <factor>.ebm (lavPredict(fit), whose
# default for ordered indicators is method = "EBM", empirical Bayes modal) and
# <factor>.regression (lavPredict(fit, method = "regression"), which lavaan 0.6-14 maps to
# "EBM" for ordered indicators: lav_predict_eta() sets method <- "ebm") and <factor>.nlminb
# (lavPredict(fit, optim.method = "nlminb"): EBM minimised by nlminb, rel.tol 1e-8, instead
# of the default BFGS, reltol 1e-8, which stops earlier).
library(lavaan)
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(if (length(args)) args[1] else "metric_scores_long.csv")
ex <- d[, grep("^Expert", names(d))]; names(ex) <- gsub("\\.", "_", names(ex))

m4 <- '
coh =~ Expert_1_COH + Expert_2_COH + Expert_3_COH
con =~ Expert_1_CON + Expert_2_CON + Expert_3_CON
flu =~ Expert_1_FLU + Expert_2_FLU + Expert_3_FLU
rel =~ Expert_1_REL + Expert_2_REL + Expert_3_REL
'
# four factors and one residual covariance (same expert rating coherence and relevance),
# which lavPredict ignores (EBM uses diag(THETA) only)
m4r <- paste(m4, '
Expert_1_COH ~~ Expert_1_REL
')
# missing ratings, made deterministic from other ratings (as in lavaan_cfa.R)
exm <- ex
exm$Expert_2_COH[ex$Expert_1_REL == 3] <- NA
exm$Expert_3_REL[ex$Expert_2_FLU == 4] <- NA
exm$Expert_1_CON[ex$Expert_3_COH == 2] <- NA

fits <- list(
  four = list(cfa(m4, data = ex, std.lv = TRUE, ordered = names(ex)), ex),
  rescov = list(cfa(m4r, data = ex, std.lv = TRUE, ordered = names(ex)), ex),
  missing = list(cfa(m4, data = exm, std.lv = TRUE, ordered = names(exm),
                     missing = "pairwise"), exm)
)
for (name in names(fits)) {
  fit <- fits[[name]][[1]]
  x <- fits[[name]][[2]]
  ebm <- lavPredict(fit)                          # method = "EBM" (the default)
  reg <- lavPredict(fit, method = "regression")   # = EBM for ordered indicators
  nlm <- lavPredict(fit, optim.method = "nlminb")
  colnames(ebm) <- paste0(colnames(ebm), ".ebm")
  colnames(reg) <- paste0(colnames(reg), ".regression")
  colnames(nlm) <- paste0(colnames(nlm), ".nlminb")
  keep <- rowSums(!is.na(x)) > 0                  # lavaan drops empty cases
  out <- data.frame(test_id = d$test_id[keep], model_id = d$model_id[keep], ebm, reg, nlm)
  write.csv(format(out, digits = 10), sprintf("lavaan_%s_factor_scores.csv", name),
            row.names = FALSE, quote = FALSE)
}
