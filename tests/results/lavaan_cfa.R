# Reference values for tests/test_cfa_classical.py: lavaan's WLSMV ordinal CFA on SummEval.
# Produced with R 4.2.2 and lavaan 0.6-14 (Debian bookworm r-cran-lavaan 0.6.14-1):
#   cd tests/results && Rscript lavaan_cfa.R /path/to/summeval/metric_scores_long.csv
# Writes lavaan_<model>_std.csv (standardizedSolution), lavaan_<model>_fit.csv
# (fitMeasures) and lavaan_summeval_sampstat.csv (thresholds, polychorics and diag(Gamma)).
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
# coherence and relevance merged into one factor (three factors)
m3 <- '
cohrel =~ Expert_1_COH + Expert_2_COH + Expert_3_COH + Expert_1_REL + Expert_2_REL + Expert_3_REL
con =~ Expert_1_CON + Expert_2_CON + Expert_3_CON
flu =~ Expert_1_FLU + Expert_2_FLU + Expert_3_FLU
'
# four factors, coherence and consistency fixed uncorrelated, one residual covariance
# (same expert rating coherence and relevance)
m4c <- paste(m4, '
coh ~~ 0*con
Expert_1_COH ~~ Expert_1_REL
')

# missing ratings, made deterministic from other ratings (order-free):
exm <- ex
exm$Expert_2_COH[ex$Expert_1_REL == 3] <- NA
exm$Expert_3_REL[ex$Expert_2_FLU == 4] <- NA
exm$Expert_1_CON[ex$Expert_3_COH == 2] <- NA

# fewer categories: expert 1's coherence collapsed to 3 (1-2, 3, 4-5), expert 2's fluency
# to 2 (below 5, 5): a binary indicator, so tetrachoric correlations enter
exc <- ex
exc$Expert_1_COH <- cut(ex$Expert_1_COH, c(0, 2, 3, 5), labels = FALSE)
exc$Expert_2_FLU <- as.integer(ex$Expert_2_FLU == 5) + 1L

fits <- list(
  four = cfa(m4, data = ex, std.lv = TRUE, ordered = names(ex)),
  merged = cfa(m3, data = ex, std.lv = TRUE, ordered = names(ex)),
  constrained = cfa(m4c, data = ex, std.lv = TRUE, ordered = names(ex)),
  missing = cfa(m4, data = exm, std.lv = TRUE, ordered = names(exm), missing = "pairwise"),
  collapsed = cfa(m4, data = exc, std.lv = TRUE, ordered = names(exc))
)
measures <- c("chisq", "df", "pvalue", "chisq.scaled", "df.scaled", "pvalue.scaled",
              "chisq.scaling.factor", "baseline.chisq", "baseline.df", "baseline.chisq.scaled",
              "cfi", "tli", "rmsea", "cfi.scaled", "tli.scaled", "rmsea.scaled", "srmr", "ntotal")
for (name in names(fits)) {
  fit <- fits[[name]]
  std <- standardizedSolution(fit)
  std <- std[std$op %in% c("=~", "~~", "|"), c("lhs", "op", "rhs", "est.std", "se")]
  pe <- parameterEstimates(fit)
  std$est <- pe$est[match(paste(std$lhs, std$op, std$rhs), paste(pe$lhs, pe$op, pe$rhs))]
  write.csv(std, sprintf("lavaan_%s_std.csv", name), row.names = FALSE)
  fm <- fitMeasures(fit, measures)
  write.csv(data.frame(measure = names(fm), value = as.numeric(fm)),
            sprintf("lavaan_%s_fit.csv", name), row.names = FALSE)
}
fit <- fits$four
ss <- lavInspect(fit, "sampstat")
G <- lavInspect(fit, "gamma")
r <- ss$cov
pairs <- which(lower.tri(r), arr.ind = TRUE)
stat <- rbind(
  data.frame(label = names(ss$th), value = as.numeric(ss$th)),
  data.frame(label = paste0(colnames(r)[pairs[, 2]], "~~", rownames(r)[pairs[, 1]]),
             value = r[pairs]))
stat$gamma_diag <- diag(G)[match(stat$label, rownames(G))]
write.csv(stat, "lavaan_summeval_sampstat.csv", row.names = FALSE)
