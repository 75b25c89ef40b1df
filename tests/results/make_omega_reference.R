# Reference values for tests/test_omega_ordinal.py: semTools' compRelSEM (coefficient omega of
# ordinal indicators, Green & Yang 2009, on the latent-response thresholds) after lavaan's WLSMV
# ordinal CFA. Produced with R 4.2.2, lavaan 0.6-14 and semTools 0.5-6 (Debian bookworm
# r-cran-lavaan 0.6.14-1, r-cran-semtools 0.5.6-1):
#   cd tests/results && Rscript make_omega_reference.R /path/to/summeval/metric_scores_long.csv
# Writes omega_reference.csv: model, factor, omega_ordinal = compRelSEM(fit) (defaults
# obs.var = TRUE, ord.scale = TRUE), omega_latent = compRelSEM(fit, ord.scale = FALSE), and the
# versions. The SummEval models and data variants are those of lavaan_cfa.R; the second
# dataset is agreement_missing30.csv (200 outputs x 4 raters, 30% missing) with one factor.
library(lavaan)
library(semTools)
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(if (length(args)) args[1] else "metric_scores_long.csv")
ex <- d[, grep("^Expert", names(d))]; names(ex) <- gsub("\\.", "_", names(ex))

m4 <- '
coh =~ Expert_1_COH + Expert_2_COH + Expert_3_COH
con =~ Expert_1_CON + Expert_2_CON + Expert_3_CON
flu =~ Expert_1_FLU + Expert_2_FLU + Expert_3_FLU
rel =~ Expert_1_REL + Expert_2_REL + Expert_3_REL
'
m3 <- '
cohrel =~ Expert_1_COH + Expert_2_COH + Expert_3_COH + Expert_1_REL + Expert_2_REL + Expert_3_REL
con =~ Expert_1_CON + Expert_2_CON + Expert_3_CON
flu =~ Expert_1_FLU + Expert_2_FLU + Expert_3_FLU
'
m4c <- paste(m4, '
coh ~~ 0*con
Expert_1_COH ~~ Expert_1_REL
')
exm <- ex
exm$Expert_2_COH[ex$Expert_1_REL == 3] <- NA
exm$Expert_3_REL[ex$Expert_2_FLU == 4] <- NA
exm$Expert_1_CON[ex$Expert_3_COH == 2] <- NA
exc <- ex
exc$Expert_1_COH <- cut(ex$Expert_1_COH, c(0, 2, 3, 5), labels = FALSE)
exc$Expert_2_FLU <- as.integer(ex$Expert_2_FLU == 5) + 1L

p30 <- read.csv("agreement_missing30.csv")
m1 <- 'f =~ R1 + R2 + R3 + R4'

fits <- list(
  four = cfa(m4, data = ex, std.lv = TRUE, ordered = names(ex)),
  merged = cfa(m3, data = ex, std.lv = TRUE, ordered = names(ex)),
  constrained = cfa(m4c, data = ex, std.lv = TRUE, ordered = names(ex)),
  missing = cfa(m4, data = exm, std.lv = TRUE, ordered = names(exm), missing = "pairwise"),
  collapsed = cfa(m4, data = exc, std.lv = TRUE, ordered = names(exc)),
  missing30 = cfa(m1, data = p30, std.lv = TRUE, ordered = names(p30), missing = "pairwise")
)
rows <- list()
for (name in names(fits)) {
  ord <- compRelSEM(fits[[name]])
  lat <- compRelSEM(fits[[name]], ord.scale = FALSE)
  rows[[name]] <- data.frame(model = name, factor = names(ord),
                             omega_ordinal = sprintf("%.15g", as.numeric(ord)),
                             omega_latent = sprintf("%.15g", as.numeric(lat[names(ord)])))
}
out <- do.call(rbind, rows)
out$call <- "compRelSEM(fit); compRelSEM(fit, ord.scale = FALSE)"
out$versions <- sprintf("R %s; lavaan %s; semTools %s", getRversion(),
                        packageVersion("lavaan"), packageVersion("semTools"))
write.csv(out, "omega_reference.csv", row.names = FALSE)
print(out[, 1:4])
